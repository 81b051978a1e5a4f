"""The provider wires: one sub-package each (named as its dialect in
:data:`bench.engine.model.Dialect`) behind :class:`bench.wires.base.Wire`, found by
:mod:`bench.wires.registry`; the finish tables gathered (:mod:`bench.wires.dialects`), how the
replay server delivers an error (:mod:`bench.wires.delivery`) and the pieces the wires share."""
