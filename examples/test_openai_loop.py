"""Testing agent loops written on the official ``openai`` client with stopbench's pytest plugin.

Installed stopbench registers the plugin, which reads the shipped catalogue with your project's own
``sequences/`` added; to read one folder alone, name it in your pytest configuration::

    [tool.pytest.ini_options]
    stopbench_sequences = "sequences"     # relative to the rootdir; read alone

Then every test below runs once per chosen sequence, each served on its own loopback port.
"""

import openai
import pytest
from openai_loop import agent  # examples/openai_loop.py: the loop most projects write

from bench.loops.reference import run


def stub_tool(name: str, arguments: object) -> str:
    return f"ok: {name} ran"


@pytest.mark.stopbench_catalogue(dialects=["openai-chat"])
def test_the_reference_loop_meets_every_requirement(stopbench_live):
    client = openai.OpenAI(base_url=stopbench_live.openai_base_url, api_key=stopbench_live.api_key)
    result = run(client, api="openai-chat", model=stopbench_live.model, prompt=stopbench_live.prompt,
                 tools=stopbench_live.tools, execute=stub_tool, steer=stopbench_live.steers.get)
    stopbench_live.assert_meets_requirements(ok=result.ok, reason=result.reason)


@pytest.mark.stopbench_catalogue(tags=["normal"], dialects=["openai-chat"])
def test_my_loop_runs_tool_rounds_to_the_answer(stopbench_live):
    client = openai.OpenAI(base_url=stopbench_live.openai_base_url, api_key=stopbench_live.api_key)
    outcome = agent(client, stopbench_live.prompt, stopbench_live.tools, stopbench_live.model)
    stopbench_live.assert_meets_requirements(ok=outcome["ok"], reason=outcome["reason"])


@pytest.mark.xfail(strict=True, reason="the usual loop takes a reply cut off at max_tokens as its answer")
@pytest.mark.parametrize("stopbench_sequence", ["chat-length-text-cut"], indirect=True)
def test_my_loop_does_not_take_a_truncated_reply_as_the_answer(stopbench_live):
    client = openai.OpenAI(base_url=stopbench_live.openai_base_url, api_key=stopbench_live.api_key)
    outcome = agent(client, stopbench_live.prompt, stopbench_live.tools, stopbench_live.model)
    stopbench_live.assert_meets_requirements(ok=outcome["ok"], reason=outcome["reason"])
