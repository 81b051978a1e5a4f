"""The mutation check: proof that the golden gate notices a changed rule in a port.

For each port (every predicate whose source is not "constructed", plus the reference loop) this
makes small AST-level changes to its file, one at a time, in a temporary folder: a numeric constant
plus or minus one, a comparison flipped (``<`` and ``<=``, ``>`` and ``>=``, ``==`` and ``!=``), a
condition negated (``if``, ``while``, a conditional expression, a comprehension filter), and a
returned decision swapped (a stop's ``ok`` inverted; continue, resend and remind exchanged). Each
mutant replays the shipped catalogue and is compared with the shipped golden files
(:func:`bench.golden.compare`): it is *caught* when at least one reviewed cell no longer matches. A
mutant that survives is either equivalent (listed in :data:`EQUIVALENT` with the reason) or a rule
the catalogue does not pin down (a coverage gap: a sequence is missing).

``python -m bench.mutate`` (``make mutate``) prints, per port, mutants caught out of made, each
survivor as ``file:line``, its change and the line, and the time taken. It exits 1 when a mutant
survives that :data:`EQUIVALENT` does not explain, so CI can run it.
"""

from __future__ import annotations

import argparse
import ast
import copy
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from collections.abc import Sequence as Seq
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Literal

from bench.catalogue import load_catalogue
from bench.discovery import load_file
from bench.golden import Golden, compare, load_golden
from bench.model import Sequence
from bench.predicate import Predicate
from bench.replay import replay

Kind = Literal["constant", "comparison", "negation", "decision"]
KINDS: tuple[Kind, ...] = ("constant", "comparison", "negation", "decision")

REFERENCE = "reference"
"""The reference loop is ours (source "constructed") but its golden cells guard its rules too."""

MUTANT_TIMEOUT = 20.0
"""Seconds one mutant may take over the whole catalogue; a mutant that hangs counts as caught."""

_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
}
_OP_TEXT: dict[type[ast.cmpop], str] = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
}
_DECISIONS = ("Continue", "Resend", "Remind", "Stop")

EQUIVALENT: dict[tuple[str, str, str], str] = {}
"""Surviving mutants that change nothing a replay can observe, keyed by (port, the source line,
stripped, the change as printed), with the reason. Keyed by text, not line number, so that edits
elsewhere in a file do not invalidate the list."""


@dataclass(frozen=True, slots=True)
class Mutant:
    """One change to one port file: where, what kind, and the mutated source."""

    port: str
    path: Path
    line: int
    kind: Kind
    change: str
    line_text: str
    source: str

    @property
    def key(self) -> tuple[str, str, str]:
        """What :data:`EQUIVALENT` is keyed by."""
        return (self.port, self.line_text, self.change)

    def where(self) -> str:
        return f"{self.path.parent.name}/{self.path.name}:{self.line}"


@dataclass(frozen=True, slots=True)
class Verdict:
    """A mutant's result: caught (and by which cell, or because it hung) or survived."""

    mutant: Mutant
    caught: bool
    detail: str


# ---------------------------------------------------------------- making mutants


@dataclass(frozen=True, slots=True)
class _Site:
    index: int          # position of the node in ast.walk order
    kind: Kind
    variant: int        # which of the node's mutations (a constant has +1 and -1)


def _sites(tree: ast.AST) -> list[_Site]:
    out: list[_Site] = []
    for i, node in enumerate(ast.walk(tree)):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            out += [_Site(i, "constant", 0), _Site(i, "constant", 1)]
        elif isinstance(node, ast.Compare):
            out += [_Site(i, "comparison", j) for j, op in enumerate(node.ops) if type(op) in _FLIP]
        elif isinstance(node, (ast.If, ast.While, ast.IfExp)):
            out.append(_Site(i, "negation", 0))
        elif isinstance(node, ast.comprehension):
            out += [_Site(i, "negation", j) for j in range(len(node.ifs))]
        elif isinstance(node, ast.Return) and _decision_call(node.value) is not None:
            out.append(_Site(i, "decision", 0))
    return out


def _decision_call(node: ast.AST | None) -> ast.Call | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _DECISIONS:
        return node
    return None


def _rule_arg(call: ast.Call) -> ast.expr:
    """The rule a decision call names: the `rule=` keyword, else its first positional argument
    (Stop's rule is keyword-only in practice; Continue/Resend/Remind take it first)."""
    for kw in call.keywords:
        if kw.arg == "rule":
            return kw.value
    return call.args[0] if call.args else ast.Constant("?")


def _apply(node: ast.AST, site: _Site) -> str:
    """Mutate `node` in place for `site`; return the change as text."""
    if site.kind == "constant":
        assert isinstance(node, ast.Constant)
        old = node.value
        assert isinstance(old, (int, float))
        node.value = old + 1 if site.variant == 0 else old - 1
        return f"{old!r} -> {node.value!r}"
    if site.kind == "comparison":
        assert isinstance(node, ast.Compare)
        op = node.ops[site.variant]
        new = _FLIP[type(op)]()
        node.ops[site.variant] = new
        return f"{_OP_TEXT[type(op)]} -> {_OP_TEXT[type(new)]}"
    if site.kind == "negation":
        if isinstance(node, ast.comprehension):
            cond = node.ifs[site.variant]
            node.ifs[site.variant] = ast.UnaryOp(ast.Not(), cond)
        else:
            assert isinstance(node, (ast.If, ast.While, ast.IfExp))
            cond = node.test
            node.test = ast.UnaryOp(ast.Not(), cond)
        return f"`{_short(ast.unparse(cond))}` negated"
    assert isinstance(node, ast.Return)
    call = _decision_call(node.value)
    assert call is not None
    name = call.func.id  # type: ignore[attr-defined]
    if name == "Stop":
        for kw in call.keywords:
            if kw.arg == "ok":
                kw.value = ast.UnaryOp(ast.Not(), kw.value)
                break
        else:
            call.args[1] = ast.UnaryOp(ast.Not(), call.args[1])
        return "Stop: ok inverted"
    rule = _rule_arg(call)
    if name == "Resend":
        node.value = ast.Call(ast.Name("Continue", ast.Load()), [rule],
                              [ast.keyword("run", ast.Tuple([], ast.Load()))])
        return "Resend -> Continue (no calls run)"
    node.value = ast.Call(ast.Name("Resend", ast.Load()), [rule], [])
    return f"{name} -> Resend"


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def mutants(port: str, path: Path) -> Iterator[Mutant]:
    """Every mutant of one port file, in source order of the walk (deterministic)."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = source.splitlines()
    for site in _sites(tree):
        fresh = copy.deepcopy(tree)
        node = next(n for i, n in enumerate(ast.walk(fresh)) if i == site.index)
        line = getattr(node, "lineno", 0)
        change = _apply(node, site)
        ast.fix_missing_locations(fresh)
        yield Mutant(port=port, path=path, line=line, kind=site.kind, change=change,
                     line_text=lines[line - 1].strip() if 0 < line <= len(lines) else "",
                     source=ast.unparse(fresh))


# ---------------------------------------------------------------- checking mutants


class _Hang(Exception):
    pass


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise _Hang


def check(mutant: Mutant, sequences: Seq[Sequence], golden: Golden, workdir: Path,
          timeout: float = MUTANT_TIMEOUT) -> Verdict:
    """Load the mutant from `workdir`, replay every sequence with a reviewed cell, stop at the
    first cell that no longer matches its golden cell."""
    target = workdir / f"{mutant.port}.py"
    target.write_text(mutant.source, encoding="utf-8")
    module = f"stopbench_predicates.{mutant.port}"
    saved = sys.modules.get(module)
    try:
        loaded = load_file(target)
    finally:
        if saved is not None:
            sys.modules[module] = saved
        else:
            sys.modules.pop(module, None)
    if not isinstance(loaded, Predicate):
        return Verdict(mutant, True, f"does not load: {loaded.error}")
    old = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        for seq in sequences:
            exp = golden.expectation(mutant.port, seq.id)
            if exp is None:
                continue
            diff = compare(replay(seq, loaded, judged=False), exp)
            if diff is not None:
                return Verdict(mutant, True, f"{seq.id}: {diff.what}")
    except _Hang:
        return Verdict(mutant, True, f"no result within {timeout:g} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return Verdict(mutant, False, "every reviewed cell still matches")


def ports(predicates_dir: Path) -> list[tuple[str, Path]]:
    """(name, file) of every port in the folder: source not "constructed", plus the reference loop."""
    out = []
    for path in sorted(predicates_dir.glob("*.py")):
        if path.name.startswith("_"):
            continue
        loaded = load_file(path)
        sys.modules.pop(f"stopbench_predicates.{path.stem}", None)
        if not isinstance(loaded, Predicate):
            continue
        if path.stem == REFERENCE or not loaded.source.startswith("constructed"):
            out.append((path.stem, path))
    return out


def sweep(predicates_dir: Path, sequences_dir: Path, expected_dir: Path, only: Seq[str] = (),
          select: Callable[[Mutant], bool] | None = None) -> Iterator[Verdict]:
    """Every mutant of every port (or of the ports named in `only`), checked."""
    catalogue = load_catalogue(sequences_dir)
    golden = load_golden(expected_dir)
    with tempfile.TemporaryDirectory(prefix="stopbench-mutate-") as tmp:
        work = Path(tmp)
        for name, path in ports(predicates_dir):
            if only and name not in only:
                continue
            shutil.copy2(path, work / path.name)
            for mutant in mutants(name, path):
                if select is None or select(mutant):
                    yield check(mutant, catalogue.sequences, golden, work)


# ---------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mutate", description=__doc__.split("\n\n")[0])
    parser.add_argument("port", nargs="*", help="only these ports (default: every port)")
    parser.add_argument("--predicates", type=Path, default=Path("predicates"))
    parser.add_argument("--sequences", type=Path, default=Path("sequences"))
    parser.add_argument("--expected", type=Path, default=Path("expected"))
    args = parser.parse_args(argv)
    started = time.perf_counter()
    by_port: dict[str, list[Verdict]] = {}
    for verdict in sweep(args.predicates, args.sequences, args.expected, args.port):
        by_port.setdefault(verdict.mutant.port, []).append(verdict)
    unexplained = 0
    for port, verdicts in by_port.items():
        caught = sum(v.caught for v in verdicts)
        per_kind = ", ".join(f"{k} {sum(v.caught for v in verdicts if v.mutant.kind == k)}/"
                             f"{sum(v.mutant.kind == k for v in verdicts)}" for k in KINDS)
        print(f"{port}: {caught}/{len(verdicts)} mutants caught ({per_kind})")
        for v in verdicts:
            if v.caught:
                continue
            m = v.mutant
            why = EQUIVALENT.get(m.key)
            unexplained += why is None
            label = f"equivalent: {why}" if why else "SURVIVED"
            print(f"  {label}: {m.where()} [{m.kind}] {m.change}: {_short(m.line_text, 90)}")
    total = sum(len(v) for v in by_port.values())
    caught = sum(v.caught for vs in by_port.values() for v in vs)
    print(f"total: {caught}/{total} mutants caught, {unexplained} unexplained survivor(s), "
          f"{time.perf_counter() - started:.1f} s")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
