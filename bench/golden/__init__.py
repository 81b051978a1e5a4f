"""Golden files and the gate: the reviewed expectations in ``expected/`` and the run checked against them.

``expected`` reads, compares and writes golden files; ``run`` replays a catalogue through predicates
and compares each cell; ``gate`` is the shipped catalogue through the shipped predicates, as
``make test`` checks it.
"""
