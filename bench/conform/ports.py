"""Every ported loop the bench knows, registered once: its pin, how its original is driven, which clock it
runs on, and the mutants of its file the golden gate must catch.

A new port is one entry of :data:`PORTS`, keyed by its predicate file's stem; what reads a port reads it
here: the conformance drivers (:data:`bench.conform.runner.DRIVERS`), the install pins
(:data:`bench.conform.pins.PINS`, and so ``make conformance``), the virtual clock
(:data:`bench.conform.clock.NATIVE_LOOPS`), and the mutation check's curated set (``tests/test_mutation.py``
holds the ports ``devtools.mutate`` finds to these names and their mutants).

Standard library only: ``bench/conform/pins.py`` imports it when the Makefile runs that file as a script,
before the bench's venv may exist.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

Registry = Literal["pypi", "npm"]
"""Where a loop is installed from: PyPI into a venv with pip, npm into a prefix with ``npm install``."""


@dataclass(frozen=True, slots=True)
class Pin:
    """One loop's install: its own packages at their versions, and dependencies held beside them."""

    registry: Registry
    packages: tuple[str, ...]
    """The loop's packages (``name==version`` on PyPI, ``name@version`` on npm): what its install line names."""
    beside: tuple[str, ...] = ()
    """Dependencies installed at these versions with the packages, so a fresh install resolves the tree the
    records were driven on; not named in the install line."""

    def words(self) -> str:
        """What is passed to pip or npm, shell-quoted (an extra such as ``[anthropic]`` is quoted)."""
        return shlex.join((*self.packages, *self.beside))

    def install_line(self) -> str:
        """The install line a driver shows (``LOOP``: its venv or npm prefix under CONFORM_DIR)."""
        if self.registry == "npm":
            return "npm install --prefix LOOP " + shlex.join(self.packages)
        return "pip install " + shlex.join(self.packages)


@dataclass(frozen=True, slots=True)
class Mutation:
    """A curated mutant the golden gate must catch: its operator kind, a piece of the mutated source line and
    the change as ``devtools.mutate`` prints it; `target` is the shared rules module it mutates when not the
    port's own file (``_vercel_ai``)."""

    kind: str
    line: str
    change: str
    target: str = ""


@dataclass(frozen=True, slots=True)
class Port:
    """One ported loop. `script` is its conformance driver (empty: the loop is not driven, the reference
    loop); `wire` the API it is driven on, `wires` per sequence dialect, `skip` the dialects it is not run
    on with why; `interpreter` what runs the script (``node``; None: the loop's Python); `pin` its
    install from a registry, or `install` the line that says how it is installed when it has none;
    `reused` why CI reuses its committed record instead of driving it; `native` why its loop runs on the
    real clock (a native binary no preload reaches), empty for the virtual clock; `mutants` the curated
    mutants of its file."""

    script: str = ""
    wire: str = "openai-chat"
    pin: Pin | None = None
    install: str = ""
    wires: Mapping[str, str] = field(default_factory=dict)
    skip: Mapping[str, str] = field(default_factory=dict)
    interpreter: str | None = None
    reused: str = ""
    native: str = ""
    mutants: tuple[Mutation, ...] = ()

    def install_line(self) -> str:
        """How the loop is installed, in one line: a registry loop's is its pin's."""
        return self.pin.install_line() if self.pin is not None else self.install


def _four(constant: tuple[str, str], comparison: tuple[str, str], negation: tuple[str, str],
          decision: tuple[str, str]) -> tuple[Mutation, ...]:
    """One curated mutant of each operator kind, each (line, change)."""
    return tuple(Mutation(kind, *row) for kind, row in (("constant", constant), ("comparison", comparison),
                                                       ("negation", negation), ("decision", decision)))


_VERCEL_AI = Pin("npm", ("ai@7.0.173", "@ai-sdk/openai@4.0.118", "@ai-sdk/anthropic@4.0.105", "zod@4.6.7"))

_NO_BEDROCK = {"bedrock-converse": (
    "the port reads Bedrock Converse through its loop's own Bedrock client (the Bedrock path its file cites); "
    "the driver installs none (its pin carries no AWS client), and a Bedrock sequence served on another wire "
    "is read by that wire's client, which would compare the port's Bedrock rules with another client's")}
"""Dialects not driven for the loops whose port has a Bedrock path: skipped, with why, not compared."""

_ALL_WIRES = {"openai-responses": "openai-responses", "anthropic": "anthropic", "gemini": "gemini"}
_NOT_GEMINI = {"openai-responses": "openai-responses", "anthropic": "anthropic"}

_LCC_SCRIPT = "conformance/drivers/learn_claude_code_driver.py"
_LCC_INSTALL = ("python -m venv LOOP; LOOP/bin/pip install anthropic==2.14.0 openai==3.57.0 python-dotenv; "
                "the lesson file at its pinned commit under LOOP/src/<commit>/")
_LCC_REUSED = ("learn-claude-code is not in a registry: driven once from checkouts of its pinned commits "
               "(conformance/drivers/learn_claude_code_driver.py); CI reuses this committed record, "
               "it does not re-drive it")

PORTS: Mapping[str, Port] = {
    "corecoder": Port(
        "conformance/drivers/corecoder_driver.py", pin=Pin("pypi", ("corecoder==0.4.0", "openai==3.57.0")),
        mutants=_four(("MAX_ROUNDS = 50", "50 -> 49"), ("if rounds >= MAX_ROUNDS:", ">= -> >"),
                      ('if kind == "stream":', "`kind == 'stream'` negated"),
                      ('return Resend("bad-request-fallback")', "Resend -> Continue (no calls run)"))),
    # Chat Completions model for every sequence but the Responses ones (predicates/openai_agents.py)
    "openai_agents": Port(
        "conformance/drivers/openai_agents_driver.py", pin=Pin("pypi", ("openai-agents==0.24.0", "openai==3.57.0")),
        wires={"openai-responses": "openai-responses"},
        mutants=_four(("MAX_TURNS = 10", "10 -> 11"),
                      ("if prev is not None and prev != (c.name, c.arguments):", "!= -> =="),
                      ("if any(not c.id for c in turn.tool_calls):",
                       "`any((not c.id for c in turn.tool_calls))` negated"),
                      ('return Stop("APIError", ok=False, rule="raise")', "Stop: ok inverted"))),
    # api_mode follows the dialect (predicates/hermes.py); Gemini on its native Gemini client
    # (provider "gemini", Google's base URL, sent to the server by the driver)
    "hermes": Port(
        "conformance/drivers/hermes_driver.py", pin=Pin("pypi", ("hermes-agent[anthropic]==0.19.0",)),
        skip=_NO_BEDROCK, wires=_ALL_WIRES,
        mutants=(Mutation("constant", "MAX_COMPRESSION_ATTEMPTS = 3", "3 -> 2"),
                 *_four(("MAX_ITERATIONS = 90", "90 -> 89"),
                        ('if m["compress"] > MAX_COMPRESSION_ATTEMPTS:', "> -> >="),
                        ('elif m["messages"] <= COMPRESS_MIN_MESSAGES:',
                         "`m['messages'] <= COMPRESS_MIN_MESSAGES` negated"),
                        ('return Stop(REASON_MAX, ok=False, rule="max-iterations")', "Stop: ok inverted")))),
    # pi-ai's provider for the sequence's API (predicates/pi.py picks the mapper from the raw finish),
    # its google-generative-ai provider on the server's Gemini endpoint for Gemini sequences
    "pi": Port(
        "conformance/drivers/pi_driver.mjs",
        pin=Pin("npm", ("@earendil-works/pi-agent-core@0.84.1", "@earendil-works/pi-ai@0.84.1")),
        skip=_NO_BEDROCK, wires=_ALL_WIRES, interpreter="node",
        mutants=_four(('reason = raw.partition("/")[2]', "2 -> 1"), ('if reason == "length":', "== -> !="),
                      ("if turn.error is not None:", "`turn.error is not None` negated"),
                      ('return Stop(reason, ok=True, rule="done")', "Stop: ok inverted"))),
    # the CLI (`opencode run`) with the AI SDK provider it bundles for the sequence's API (@ai-sdk/google
    # on the server's Gemini endpoint for Gemini sequences)
    "opencode": Port(
        "conformance/drivers/opencode_driver.mjs", pin=Pin("npm", ("opencode-ai@1.18.32",)),
        skip=_NO_BEDROCK, wires=_ALL_WIRES, interpreter="node", native="opencode-ai runs a Bun executable",
        mutants=_four(("RETRY_MAX_RETRIES = 5", "5 -> 4"), ('if finish == "unknown":', "== -> !="),
                      ("if turn.steer:", "`turn.steer` negated"),
                      ('return Remind("context-overflow", "compaction")', "Remind -> Resend"))),
    # `codex app-server` with dynamic tools; Responses only: every sequence is served as Responses
    # (predicates/codex.py reads other dialects as a proxy's Responses stream)
    "codex": Port(
        "conformance/drivers/codex_driver.mjs", "openai-responses", pin=Pin("npm", ("@openai/codex@0.169.0",)),
        interpreter="node", native="codex app-server is a Rust binary",
        mutants=_four(("STREAM_MAX_RETRIES = 5", "5 -> 4"), ('if outcome == "fatal":', "== -> !="),
                      ("if turn.steer:", "`turn.steer` negated"),
                      ('return Stop("turn_complete", ok=True, rule="no-follow-up")', "Stop: ok inverted"))),
    # create_agent on ChatOpenAI (Chat; use_responses_api for Responses) or ChatAnthropic; Gemini on Chat
    "langchain": Port(
        "conformance/drivers/langchain_driver.py",
        pin=Pin("pypi", ("langchain==1.5.0", "langchain-openai==1.7.4", "langchain-anthropic==1.7.10"),
                beside=("langgraph==1.2.24", "langgraph-prebuilt==1.1.3", "langchain-core==1.8.3",
                        "openai==3.57.0", "anthropic==2.14.0")),
        skip=_NO_BEDROCK, wires=_NOT_GEMINI,
        mutants=_four(("CLIENT_RETRIES = 2", "2 -> 3"),
                      ("return err.status in _RETRY_STATUS or err.status >= 500", ">= -> >"),
                      ("if err.status is None:", "`err.status is None` negated"),
                      ('return Continue("tools", run=ALL if not failed else run, failed=failed)',
                       "Continue -> Resend"))),
    # Agent.run on OpenAIChatModel (Chat), OpenAIResponsesModel (Responses) or AnthropicModel; Gemini on Chat
    "pydantic_ai": Port(
        "conformance/drivers/pydantic_ai_driver.py",
        pin=Pin("pypi", ("pydantic-ai-slim[openai,anthropic]==2.68.0",),
                beside=("openai==3.57.0", "anthropic==2.14.0")),
        skip=_NO_BEDROCK, wires=_NOT_GEMINI,
        mutants=_four(("REQUEST_LIMIT = 50", "50 -> 51"), ('if state.memo["requests"] >= REQUEST_LIMIT:', ">= -> >"),
                      ("if err.status is None:", "`err.status is None` negated"),
                      ('return Stop("UsageLimitExceeded", ok=False, rule="request-limit"', "Stop: ok inverted"))),
    # ToolCallingAgent on OpenAIServerModel: Chat Completions only, every dialect served on Chat
    # (predicates/smolagents.py)
    "smolagents": Port(
        "conformance/drivers/smolagents_driver.py", pin=Pin("pypi", ("smolagents==1.26.0", "openai==3.57.0")),
        skip=_NO_BEDROCK,
        mutants=_four(("MAX_STEPS = 20", "20 -> 19"), ('if decision.action == "stop" or step < MAX_STEPS:', "< -> <="),
                      ("if err is not None:", "`err is not None` negated"),
                      ('return Remind("no-tool-call", message=RETRY_NOTE)', "Remind -> Resend"))),
    # `gemini -p` (non-interactive) on the Gemini API; every sequence is served as Gemini (a tool-call
    # finish as STOP with the calls as parts, bench/serve/render.py finish_for)
    "gemini_cli": Port(
        "conformance/drivers/gemini_cli_driver.mjs", "gemini", pin=Pin("npm", ("@google/gemini-cli@0.61.0",)),
        interpreter="node",
        mutants=_four(("MID_STREAM_ATTEMPTS = 4", "4 -> 3"), ("if attempt + 1 >= MID_STREAM_ATTEMPTS:", ">= -> >"),
                      ("if turn.tool_calls:", "`turn.tool_calls` negated"),
                      ('return Stop("no_tool_calls", ok=True, rule="answer")', "Stop: ok inverted"))),
    # `claude -p` (headless, stream-json) on the Anthropic Messages API; every sequence is served as
    # Anthropic; the sequence's tools as MCP stub tools, renamed by the driver's proxy. The pin is the
    # wrapper: npm installs its platform package (the native binary the driver runs) beside it
    "claude_code": Port(
        "conformance/drivers/claude_code_driver.mjs", "anthropic",
        pin=Pin("npm", ("@anthropic-ai/claude-code@2.1.328",)),
        interpreter="node", native="the platform package's claude is a Bun executable",
        mutants=_four(("MAX_RETRIES = 10  # nKr -> QPs=10", "10 -> 11"), ('if stop == "refusal":', "== -> !="),
                      ("if turn.refusal is not None and turn.error is None:",
                       "`turn.refusal is not None and turn.error is None` negated"),
                      ('return Stop("success", ok=True, rule="answer")', "Stop: ok inverted"))),
    # generateText with tools (default stopWhen; _steps: isStepCount(5)), @ai-sdk/openai .chat (Chat; Gemini
    # on Chat) or .responses, @ai-sdk/anthropic by dialect; the same install for both columns, and their
    # shared rules (predicates/_vercel_ai.py) swept as `_vercel_ai`, judged on both
    "vercel_ai": Port(
        "conformance/drivers/vercel_ai_driver.mjs", pin=_VERCEL_AI, skip=_NO_BEDROCK, wires=_NOT_GEMINI,
        interpreter="node",
        mutants=(Mutation("constant", "STEP_LIMIT = 1", "1 -> 2"),
                 *(replace(m, target="_vercel_ai") for m in _four(
                     ("MAX_RETRIES = 2", "2 -> 3"), ("if attempts > MAX_RETRIES:", "> -> >="),
                     ('if finish not in ("stop", "tool-calls"):', "`finish not in ('stop', 'tool-calls')` negated"),
                     ('return Continue("tools", run=ALL if not failed else run, failed=failed)',
                      "Continue -> Resend"))))),
    "vercel_ai_steps": Port(
        "conformance/drivers/vercel_ai_steps_driver.mjs", pin=_VERCEL_AI, skip=_NO_BEDROCK, wires=_NOT_GEMINI,
        interpreter="node", mutants=(Mutation("constant", "STEP_LIMIT = 5", "5 -> 6"),)),
    # not in a registry: both s01 lessons, each from a checkout of its pinned commit, one venv (--loop)
    "learn_claude_code_s01": Port(
        _LCC_SCRIPT, "anthropic", install=_LCC_INSTALL, reused=_LCC_REUSED,
        mutants=_four(("SDK_RETRIES = 2", "2 -> 1"), ('return raw == "tool_use"', "== -> !="),
                      ("if turn.error is not None:", "`turn.error is not None` negated"),
                      ('return Stop("return", ok=True, rule="return")', "Stop: ok inverted"))),
    "learn_claude_code_s01_openai": Port(
        _LCC_SCRIPT, install=_LCC_INSTALL, reused=_LCC_REUSED,
        mutants=_four(("SDK_RETRIES = 2", "2 -> 3"), ('memo.get("sdk", 0) < SDK_RETRIES', "< -> <="),
                      ("if not failed:", "`not failed` negated"),
                      ('return Stop("api_error", ok=False, rule="raise")', "Stop: ok inverted"))),
    # the bench's own reference loop: not driven, no original to install; mutated like every port
    "reference": Port(
        mutants=_four(("max_steps=50,", "50 -> 49"), ('if memo["pauses"] > MAX_PAUSES:', "> -> >="),
                      ('if memo["pauses"] > MAX_PAUSES:', "`memo['pauses'] > MAX_PAUSES` negated"),
                      ('return Remind("calls-steer", turn.steer, run=good, failed=bad)', "Remind -> Resend"))),
}
"""Every port, by its predicate file's stem: the driven loops in the order a campaign lists them, then the
reference loop."""
