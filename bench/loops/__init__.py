"""Agent loops as client code over the official ``openai`` and ``anthropic`` clients.

:mod:`bench.loops.reference` is the loop stopbench recommends (the client-code form of
``predicates/reference.py``); :mod:`bench.loops.naive` is the loop most tutorials write.
``python -m bench.loops reference|naive`` runs either as a program under ``stopbench check``.
"""
