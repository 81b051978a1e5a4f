"""``python -m bench.loops reference|naive``: run a loop as a program under ``stopbench check``.

It reads the STOPBENCH_* variables (bench/check/program.py), talks to the server through the
official client for the sequence's API (Gemini sequences on Chat Completions: the loops are
written over the ``openai`` and ``anthropic`` clients, and Bedrock Converse over ``httpx``), runs
stub tools that only say they ran, and writes STOPBENCH_RESULT. Bedrock's endpoint is
``AWS_ENDPOINT_URL_BEDROCK_RUNTIME`` (boto3's variable), else ``AWS_ENDPOINT_URL``, else the replay
server's root (``ANTHROPIC_BASE_URL``, which serves every wire); an ``AWS_BEARER_TOKEN_BEDROCK``
goes out as the bearer token.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from bench.loops.clients import Api, conversation
from bench.loops.naive import run_naive
from bench.loops.reference import run_loop

LOOPS = ("reference", "naive")


def _api(dialect: str) -> Api:
    if dialect in ("anthropic", "openai-responses", "bedrock-converse"):
        return dialect  # type: ignore[return-value]
    return "openai-chat"


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in LOOPS:
        print(f"usage: python -m bench.loops {'|'.join(LOOPS)}", file=sys.stderr)
        return 2
    api = _api(os.environ.get("STOPBENCH_DIALECT", "openai-chat"))
    client: Any
    if api == "anthropic":
        import anthropic
        client = anthropic.Anthropic(timeout=30.0)
    elif api == "bedrock-converse":
        import httpx
        env = os.environ
        endpoint = (env.get("AWS_ENDPOINT_URL_BEDROCK_RUNTIME") or env.get("AWS_ENDPOINT_URL")
                    or env.get("ANTHROPIC_BASE_URL") or "")
        token = env.get("AWS_BEARER_TOKEN_BEDROCK")
        client = httpx.Client(base_url=endpoint, timeout=30.0,
                              headers={"Authorization": f"Bearer {token}"} if token else None)
    else:
        import openai
        client = openai.OpenAI(timeout=30.0)
    tools = json.loads(os.environ.get("STOPBENCH_TOOLS", "[]"))
    steers: dict[str, str] = json.loads(os.environ.get("STOPBENCH_STEERS", "{}"))
    conv = conversation(api, client, os.environ.get("STOPBENCH_MODEL", "stopbench"),
                        os.environ.get("STOPBENCH_PROMPT", "do the task"), tools)

    def execute(name: str, arguments: Any) -> str:
        return f"ok: {name} ran"

    if argv[0] == "naive":
        result = run_naive(conv, execute)
    else:
        result = run_loop(conv, execute, steer=lambda n: steers.get(str(n)))
    out = os.environ.get("STOPBENCH_RESULT")
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            json.dump({"ok": result.ok, "reason": result.reason, "final": result.final}, fh)
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
