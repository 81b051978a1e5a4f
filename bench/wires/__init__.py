"""The provider wires (Chat Completions, Anthropic Messages, Responses, Gemini): one sub-package each
(``openai_chat``, ``anthropic``, ``openai_responses``, ``gemini``) behind :class:`bench.wires.base.Wire`,
found by :mod:`bench.wires.registry`; the finish tables gathered (:mod:`bench.wires.dialects`), how the
replay server delivers an error (:mod:`bench.wires.delivery`) and the pieces the wires share."""
