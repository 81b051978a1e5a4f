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
from bench.conform.ports import PORTS
from bench.engine.model import Sequence
from bench.golden.expected import load_golden
from devtools.mutate import KINDS, Mutant, check, mutants, targets
from tests.helpers import ROOT

# (port, kind, a piece of the mutated source line, the change as devtools.mutate prints it): each port's
# curated mutants, as it registers them (bench/conform/ports.py)
CURATED: list[tuple[str, str, str, str]] = [(m.target or name, m.kind, m.line, m.change)
                                             for name, port in PORTS.items() for m in port.mutants]


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
    # every port devtools.mutate finds in predicates/ is registered, and every registered port is found
    assert set(by_port) == set(PORTS) | {m.target for port in PORTS.values() for m in port.mutants if m.target}
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
