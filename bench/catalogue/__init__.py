"""The catalogue and its files: loading sequence files, the one YAML reader and writer, atomic writes.

``load`` validates a folder of sequence files into :class:`~bench.engine.model.Sequence`;
``document`` turns a sequence back into the data of its file; ``yaml_read`` and ``yaml_write`` are
the project's one reader and one writer of YAML; ``files`` writes a file whole or not at all.
"""
