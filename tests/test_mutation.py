"""The golden gate bites: a curated set of mutants, at least one per port and operator kind, each
caught by the shipped catalogue against the shipped golden files (devtools.mutate).

The full sweep (every mutant of every port) is ``make mutate``; this is the part CI runs on every
test run. A mutant is chosen by its port, kind, the text of its source line and its change, so the
set survives edits elsewhere in a file; a selector that matches no mutant, or several, fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.catalogue.load import load_catalogue
from bench.engine.model import Sequence
from bench.golden.expected import load_golden
from devtools.mutate import KINDS, Mutant, check, mutants, targets
from tests.helpers import ROOT

# (port, kind, a piece of the mutated source line, the change as devtools.mutate prints it)
CURATED: list[tuple[str, str, str, str]] = [
    ("hermes", "constant", "MAX_COMPRESSION_ATTEMPTS = 3", "3 -> 2"),
    ("hermes", "constant", "MAX_ITERATIONS = 90", "90 -> 89"),
    ("hermes", "comparison", 'if m["compress"] > MAX_COMPRESSION_ATTEMPTS:', "> -> >="),
    ("hermes", "negation", 'elif m["messages"] <= COMPRESS_MIN_MESSAGES:',
     "`m['messages'] <= COMPRESS_MIN_MESSAGES` negated"),
    ("hermes", "decision", 'return Stop(REASON_MAX, ok=False, rule="max-iterations")', "Stop: ok inverted"),
    ("codex", "constant", "STREAM_MAX_RETRIES = 5", "5 -> 4"),
    ("codex", "comparison", 'if outcome == "fatal":', "== -> !="),
    ("codex", "negation", "if turn.steer:", "`turn.steer` negated"),
    ("codex", "decision", 'return Stop("turn_complete", ok=True, rule="no-follow-up")', "Stop: ok inverted"),
    ("corecoder", "constant", "MAX_ROUNDS = 50", "50 -> 49"),
    ("corecoder", "comparison", "if rounds >= MAX_ROUNDS:", ">= -> >"),
    ("corecoder", "negation", 'if kind == "stream":', "`kind == 'stream'` negated"),
    ("corecoder", "decision", 'return Resend("bad-request-fallback")', "Resend -> Continue (no calls run)"),
    ("learn_claude_code_s01", "constant", "SDK_RETRIES = 2", "2 -> 1"),
    ("learn_claude_code_s01", "comparison", 'return raw == "tool_use"', "== -> !="),
    ("learn_claude_code_s01", "negation", "if turn.error is not None:", "`turn.error is not None` negated"),
    ("learn_claude_code_s01", "decision", 'return Stop("return", ok=True, rule="return")', "Stop: ok inverted"),
    ("learn_claude_code_s01_openai", "constant", "SDK_RETRIES = 2", "2 -> 3"),
    ("learn_claude_code_s01_openai", "comparison", 'memo.get("sdk", 0) < SDK_RETRIES', "< -> <="),
    ("learn_claude_code_s01_openai", "negation", "if not failed:", "`not failed` negated"),
    ("learn_claude_code_s01_openai", "decision", 'return Stop("api_error", ok=False, rule="raise")',
     "Stop: ok inverted"),
    ("openai_agents", "constant", "MAX_TURNS = 10", "10 -> 11"),
    ("openai_agents", "comparison", "if prev is not None and prev != (c.name, c.arguments):", "!= -> =="),
    ("openai_agents", "negation", "if any(not c.id for c in turn.tool_calls):",
     "`any((not c.id for c in turn.tool_calls))` negated"),
    ("openai_agents", "decision", 'return Stop("APIError", ok=False, rule="raise")', "Stop: ok inverted"),
    ("opencode", "constant", "RETRY_MAX_RETRIES = 5", "5 -> 4"),
    ("opencode", "comparison", 'if finish == "unknown":', "== -> !="),
    ("opencode", "negation", "if turn.steer:", "`turn.steer` negated"),
    ("opencode", "decision", 'return Remind("context-overflow", "compaction")', "Remind -> Resend"),
    ("pi", "constant", 'reason = raw.partition("/")[2]', "2 -> 1"),
    ("pi", "comparison", 'if reason == "length":', "== -> !="),
    ("pi", "negation", "if turn.error is not None:", "`turn.error is not None` negated"),
    ("pi", "decision", 'return Stop(reason, ok=True, rule="done")', "Stop: ok inverted"),
    ("gemini_cli", "constant", "MID_STREAM_ATTEMPTS = 4", "4 -> 3"),
    ("gemini_cli", "comparison", "if attempt + 1 >= MID_STREAM_ATTEMPTS:", ">= -> >"),
    ("gemini_cli", "negation", "if turn.tool_calls:", "`turn.tool_calls` negated"),
    ("gemini_cli", "decision", 'return Stop("no_tool_calls", ok=True, rule="answer")', "Stop: ok inverted"),
    ("claude_code", "constant", "MAX_RETRIES = 10  # nKr -> QPs=10", "10 -> 11"),
    ("claude_code", "comparison", 'if stop == "refusal":', "== -> !="),
    ("claude_code", "negation", "if turn.refusal is not None and turn.error is None:",
     "`turn.refusal is not None and turn.error is None` negated"),
    ("claude_code", "decision", 'return Stop("success", ok=True, rule="answer")', "Stop: ok inverted"),
    ("langchain", "constant", "CLIENT_RETRIES = 2", "2 -> 3"),
    ("langchain", "comparison", "return err.status in _RETRY_STATUS or err.status >= 500", ">= -> >"),
    ("langchain", "negation", "if err.status is None:", "`err.status is None` negated"),
    ("langchain", "decision", 'return Continue("tools", run=ALL if not failed else run, failed=failed)',
     "Continue -> Resend"),
    ("pydantic_ai", "constant", "REQUEST_LIMIT = 50", "50 -> 51"),
    ("pydantic_ai", "comparison", 'if state.memo["requests"] >= REQUEST_LIMIT:', ">= -> >"),
    ("pydantic_ai", "negation", "if err.status is None:", "`err.status is None` negated"),
    ("pydantic_ai", "decision", 'return Stop("UsageLimitExceeded", ok=False, rule="request-limit"',
     "Stop: ok inverted"),
    ("smolagents", "constant", "MAX_STEPS = 20", "20 -> 19"),
    ("smolagents", "comparison", 'if decision.action == "stop" or step < MAX_STEPS:', "< -> <="),
    ("smolagents", "negation", "if err is not None:", "`err is not None` negated"),
    ("smolagents", "decision", 'return Remind("no-tool-call", message=RETRY_NOTE)', "Remind -> Resend"),
    ("vercel_ai", "constant", "STEP_LIMIT = 1", "1 -> 2"),
    ("vercel_ai_steps", "constant", "STEP_LIMIT = 5", "5 -> 6"),
    ("_vercel_ai", "constant", "MAX_RETRIES = 2", "2 -> 3"),
    ("_vercel_ai", "comparison", "if attempts > MAX_RETRIES:", "> -> >="),
    ("_vercel_ai", "negation", "if finish not in (\"stop\", \"tool-calls\"):",
     "`finish not in ('stop', 'tool-calls')` negated"),
    ("_vercel_ai", "decision", 'return Continue("tools", run=ALL if not failed else run, failed=failed)',
     "Continue -> Resend"),
    ("reference", "constant", "max_steps=50,", "50 -> 49"),
    ("reference", "comparison", 'if memo["pauses"] > MAX_PAUSES:', "> -> >="),
    ("reference", "negation", 'if memo["pauses"] > MAX_PAUSES:', "`memo['pauses'] > MAX_PAUSES` negated"),
    ("reference", "decision", 'return Remind("calls-steer", turn.steer, run=good, failed=bad)', "Remind -> Resend"),
]


@pytest.fixture(scope="module")
def shipped() -> tuple[list[Sequence], object, dict[str, list[Mutant]]]:
    catalogue = load_catalogue(ROOT / "sequences")
    assert not catalogue.problems
    golden = load_golden(ROOT / "expected")
    by_port = {name: list(mutants(name, path, cols)) for name, path, cols in targets(ROOT / "predicates")}
    return catalogue.sequences, golden, by_port


def _one(by_port: dict[str, list[Mutant]], port: str, kind: str, line: str, change: str) -> Mutant:
    found = [m for m in by_port[port] if m.kind == kind and line in m.line_text and m.change == change]
    assert len(found) == 1, f"{port} {kind} {line!r} {change!r} selects {len(found)} mutants"
    return found[0]


def test_the_curated_set_has_every_operator_kind_for_every_port(
        shipped: tuple[list[Sequence], object, dict[str, list[Mutant]]]) -> None:
    _, _, by_port = shipped
    assert set(by_port) == {"codex", "corecoder", "hermes", "learn_claude_code_s01", "smolagents",
                            "learn_claude_code_s01_openai", "openai_agents", "opencode", "pi", "reference",
                            "gemini_cli", "claude_code", "langchain", "pydantic_ai", "vercel_ai", "vercel_ai_steps",
                            "_vercel_ai"}
    covered = {(port, kind) for port, kind, _, _ in CURATED}
    # vercel_ai and vercel_ai_steps are thin columns over predicates/_vercel_ai.py: their own files hold
    # only the step limit; the shared rules are swept as `_vercel_ai`, judged on both columns
    thin = {("vercel_ai", k) for k in KINDS if k != "constant"} | {("vercel_ai_steps", k) for k in KINDS
                                                                    if k != "constant"}
    assert covered == {(port, kind) for port in by_port for kind in KINDS} - thin


@pytest.mark.parametrize(("port", "kind", "line", "change"), CURATED,
                         ids=[f"{p}-{k}-{c}" for p, k, _, c in CURATED])
def test_the_golden_gate_catches_the_mutant(
        shipped: tuple[list[Sequence], object, dict[str, list[Mutant]]], tmp_path: Path,
        port: str, kind: str, line: str, change: str) -> None:
    sequences, golden, by_port = shipped
    mutant = _one(by_port, port, kind, line, change)
    verdict = check(mutant, sequences, golden, tmp_path)  # type: ignore[arg-type]
    assert verdict.caught, f"{mutant.where()} {change}: {verdict.detail}"


def test_a_shared_rules_mutant_is_judged_on_every_column_that_loads_it(
        shipped: tuple[list[Sequence], object, dict[str, list[Mutant]]], tmp_path: Path) -> None:
    # the tool round runs only under vercel_ai_steps (vercel_ai stops at its first step): judged on
    # vercel_ai alone the mutant would survive, so catching it proves both columns judge it
    sequences, golden, by_port = shipped
    mutant = _one(by_port, "_vercel_ai", "decision", 'return Continue("tools", run=ALL if not failed else run',
                  "Continue -> Resend")
    assert mutant.columns == ("vercel_ai", "vercel_ai_steps")
    alone = Mutant(**{**{f: getattr(mutant, f) for f in mutant.__slots__}, "columns": ("vercel_ai",)})
    assert not check(alone, sequences, golden, tmp_path).caught  # type: ignore[arg-type]
    verdict = check(mutant, sequences, golden, tmp_path)  # type: ignore[arg-type]
    assert verdict.caught and verdict.detail.startswith("vercel_ai_steps on ")


def test_an_unchanged_port_is_not_caught(shipped: tuple[list[Sequence], object, dict[str, list[Mutant]]],
                                         tmp_path: Path) -> None:
    # the control: the same check on the file as shipped finds no difference, so "caught" above
    # means the mutation, not the harness
    sequences, golden, _ = shipped
    path = ROOT / "predicates" / "hermes.py"
    same = Mutant(port="hermes", path=path, line=0, kind="constant", change="none", line_text="",
                  source=path.read_text(encoding="utf-8"))
    assert not check(same, sequences, golden, tmp_path).caught  # type: ignore[arg-type]


def test_a_mutant_that_hangs_is_caught_not_waited_for(
        shipped: tuple[list[Sequence], object, dict[str, list[Mutant]]], tmp_path: Path) -> None:
    sequences, golden, _ = shipped
    path = ROOT / "predicates" / "pi.py"
    source = path.read_text(encoding="utf-8").replace(
        "    steer = turn.steer\n", "    steer = turn.steer\n    while True:\n        pass\n", 1)
    assert "while True" in source
    hang = Mutant(port="pi", path=path, line=0, kind="negation", change="hang", line_text="", source=source)
    verdict = check(hang, sequences, golden, tmp_path, timeout=0.5)  # type: ignore[arg-type]
    assert verdict.caught


def test_make_mutate_with_an_unusable_sequence_file_says_so_and_exits_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from devtools.mutate import main

    (tmp_path / "x.yaml").write_text("title: x\nkind: nope\n", encoding="utf-8")
    assert main(["--sequences", str(tmp_path), "--predicates", str(ROOT / "predicates"),
                 "--expected", str(ROOT / "expected"), "pi"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"{tmp_path / 'x.yaml'}: kind:")


TOY = '''"""A toy port whose one mutant site no golden cell judges."""
from bench import Decision, MutationNote, State, Stop, Turn, predicate

UNUSED = 3


@predicate(source="toy loop 1.0", reasons=["done"], rules={"r": "stops at once"},
           mutation_notes=[MutationNote("UNUSED = 3", "read by no rule")])
def decide(turn: Turn, state: State) -> Decision:
    result = Stop("done", ok=True, rule="r")
    return result
'''


def test_a_port_s_own_mutation_notes_explain_its_survivors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the note lives in the port's file (devtools holds no per-port data): both mutants of `UNUSED = 3`
    # survive (no golden cell judges the toy) and the port's own note explains them
    from devtools.mutate import main

    (tmp_path / "toy.py").write_text(TOY, encoding="utf-8")
    code = main(["--predicates", str(tmp_path), "--sequences", str(ROOT / "sequences"),
                 "--expected", str(ROOT / "expected")])
    out = capsys.readouterr().out
    assert "toy: 0/2 mutants caught" in out
    assert out.count("read by no rule") == 2 and "SURVIVED" not in out
    assert code == 0


def test_the_mutation_check_names_no_port_its_notes_belong_to_the_ports() -> None:
    # each port's survivors are explained in the port's own file; devtools/mutate.py names only the
    # reference loop, which it mutates although its source is "constructed"
    text = (ROOT / "devtools" / "mutate.py").read_text(encoding="utf-8")
    named = sorted(p.stem for p in (ROOT / "predicates").glob("*.py")
                   if p.stem != "reference" and (f'"{p.stem}"' in text or f"'{p.stem}'" in text))
    assert named == []
