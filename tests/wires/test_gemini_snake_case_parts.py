"""A Gemini request in the field spelling of the API's proto names (``function_call``,
``function_response``), which the Gemini API's JSON reads as it reads the lowerCamelCase one and
LiteLLM sends (litellm 1.110.2, ``litellm/types/llms/vertex_ai.py`` ``PartType``, lines 61-70), is
read as the same conversation: its results answer its calls."""

from __future__ import annotations

from typing import Any

from bench.wires.gemini.read import conversation


def body(call: str, response: str) -> dict[str, Any]:
    return {"contents": [
        {"role": "user", "parts": [{"text": "forecast for Lisbon"}]},
        {"role": "model", "parts": [{call: {"id": "fc_1", "name": "get_forecast", "args": {"city": "Lisbon"}}}]},
        {"role": "user", "parts": [{response: {"id": "fc_1", "name": "get_forecast",
                                               "response": {"content": "sunny"}}}]}]}


def test_function_call_and_response_in_snake_case_are_read_as_in_camel_case() -> None:
    camel = conversation(body("functionCall", "functionResponse"))
    snake = conversation(body("function_call", "function_response"))
    assert [(i.kind, i.calls, i.call_id) for i in snake.items] == [(i.kind, i.calls, i.call_id) for i in camel.items]
    assert [i.kind for i in snake.items] == ["user", "assistant", "tool"]
