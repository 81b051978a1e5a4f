"""The mutation check: proof that the golden gate notices a changed rule in a port.

For each port (every predicate whose source is not "constructed", plus the reference loop) this
makes small AST-level changes to its file, one at a time, in a temporary folder: a numeric constant
plus or minus one, a comparison flipped (``<`` and ``<=``, ``>`` and ``>=``, ``==`` and ``!=``), a
condition negated (``if``, ``while``, a conditional expression, a comprehension filter), and a
returned decision swapped (a stop's ``ok`` inverted; continue, resend and remind exchanged). Each
mutant replays the shipped catalogue and is compared with the shipped golden files
(:func:`bench.golden.expected.compare`): it is *caught* when at least one reviewed cell no longer matches.
A shared rules module (``predicates/_vercel_ai.py``: see :mod:`bench.engine.discovery`) is mutated like a
port, and each of its mutants is judged against every column that loads it. A mutant that survives
is either equivalent or a rule the catalogue does not pin down (a coverage gap): the port says which,
line by line, and why, in its own file (``@predicate(mutation_notes=[MutationNote(...)])``, read from
the loaded predicate), or one of the few :data:`GENERIC` rules true of every port does.

``python -m devtools.mutate`` (``make mutate``) prints, per port, mutants caught out of made, each
survivor as ``file:line``, its change and the line, and the time taken. It exits 1 when a mutant
survives that no note explains, so CI can run it, and 2 (one line each) when a sequence or
golden file is unusable or there is no predicate file.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from collections.abc import Sequence as Seq
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bench.catalogue.load import load_catalogue
from bench.engine.contain import DEFAULT_DECISION_TIMEOUT, decision_time_limit
from bench.engine.discovery import SHARED_PREFIX, load_file, shared_users
from bench.engine.model import Sequence
from bench.engine.predicate import MutationNote, Predicate
from bench.engine.replay import replay
from bench.errors import UnusableInput
from bench.golden.expected import Golden, compare, load_golden

Kind = Literal["constant", "comparison", "negation", "decision"]
KINDS: tuple[Kind, ...] = ("constant", "comparison", "negation", "decision")

REFERENCE = "reference"
"""The reference loop is ours (source "constructed") but its golden cells guard its rules too."""

_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
}
_OP_TEXT: dict[type[ast.cmpop], str] = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
}
_DECISIONS = ("Continue", "Resend", "Remind", "Stop")



@dataclass(frozen=True, slots=True)
class Mutant:
    """One change to one port file: where, what kind, and the mutated source.

    `columns` are the columns whose golden cells judge it: empty for a column's own file (the
    column `port`), the columns that load it for a shared rules module."""

    port: str
    path: Path
    line: int
    kind: Kind
    change: str
    line_text: str
    source: str
    next_text: str = ""
    columns: tuple[str, ...] = ()

    def judged_by(self) -> tuple[str, ...]:
        return self.columns or (self.port,)

    def where(self) -> str:
        return f"{self.path.parent.name}/{self.path.name}:{self.line}"


@dataclass(frozen=True, slots=True)
class Verdict:
    """A mutant's result: caught (and by which cell, or because it hung) or survived."""

    mutant: Mutant
    caught: bool
    detail: str


_499 = ("only HTTP status 499 tells the mutant apart; no provider API returns 499 (nginx's "
        "client-closed-request code), so no sequence carries it")
_STATUS_BOUND_500 = re.compile(r"\b(?:status|code|s)\s*(?:>=|<)\s*500\b")
_BEFORE_STOP = "a reset just before the loop stops: nothing reads the memo after a stop"
_MEMO_WRITE = re.compile(r'^(?:memo|m)(?:\["\w+"\]\s*=|\.update\()')


def _status_499(mutant: Mutant) -> MutationNote | None:
    """A status bound of 500 (``>= 500``, ``< 500``) moved to 499: only a status 499 tells it apart."""
    if mutant.change == "500 -> 499" and _STATUS_BOUND_500.search(mutant.line_text):
        return MutationNote(mutant.line_text, _499, ("500 -> 499",), equivalent=False)
    return None


def _reset_before_stop(mutant: Mutant) -> MutationNote | None:
    """A constant written to the memo on the line right before ``return Stop(``: the stop ends the
    cell, and the memo is the cell's own, so nothing reads the value."""
    if (mutant.kind == "constant" and mutant.next_text.startswith("return Stop(")
            and _MEMO_WRITE.match(mutant.line_text)):
        return MutationNote(mutant.line_text, _BEFORE_STOP)
    return None


GENERIC: tuple[Callable[[Mutant], MutationNote | None], ...] = (_status_499, _reset_before_stop)
"""Survivors explained by a fact of HTTP or of the replay, true of every port, so no port repeats it:
tried before the port's own notes. Everything particular to a port is its own declaration,
``@predicate(mutation_notes=[MutationNote(...)])`` (:class:`bench.engine.predicate.MutationNote`), read
from the loaded :class:`~bench.engine.predicate.Predicate`; a shared rules module's notes come with the
columns its factory builds."""


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


def mutants(port: str, path: Path, columns: tuple[str, ...] = ()) -> Iterator[Mutant]:
    """Every mutant of one port file (or shared rules module, judged by `columns`), in source
    order of the walk (deterministic)."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = source.splitlines()
    for site in _sites(tree):
        # a tree of its own per mutant: parsing again is a third of the cost of a deep copy, and the
        # walk visits the same nodes in the same order; the source is unparsed, so the nodes a
        # mutation adds need no locations
        fresh = ast.parse(source)
        node = next(n for i, n in enumerate(ast.walk(fresh)) if i == site.index)
        line = getattr(node, "lineno", 0)
        change = _apply(node, site)
        yield Mutant(port=port, path=path, line=line, kind=site.kind, change=change,
                     line_text=lines[line - 1].strip() if 0 < line <= len(lines) else "",
                     source=ast.unparse(fresh),
                     next_text=lines[line].strip() if 0 < line < len(lines) else "", columns=columns)


def explain(mutant: Mutant, notes: Seq[MutationNote] = ()) -> MutationNote | None:
    """The note that explains why `mutant` survives, if any: a :data:`GENERIC` rule, else the first
    of `notes` (its port's, :func:`port_notes`) that matches its line, change and next line."""
    for rule in GENERIC:
        found = rule(mutant)
        if found is not None:
            return found
    return next((n for n in notes if n.matches(mutant.line_text, mutant.change, mutant.next_text)), None)


# ---------------------------------------------------------------- checking mutants


def check(mutant: Mutant, sequences: Seq[Sequence], golden: Golden, workdir: Path,
          timeout: float = DEFAULT_DECISION_TIMEOUT) -> Verdict:
    """Load the mutant from `workdir` (beside copies of the shared rules modules and of the columns
    judging it), replay every sequence with a reviewed cell of those columns, stop at the first cell
    that no longer matches its golden cell. A decision (or the import) that takes more than
    `timeout` seconds crashes its cell (:mod:`bench.engine.contain`), which is a difference too."""
    source_dir = mutant.path.parent
    for name in [f"{c}.py" for c in mutant.judged_by()] + [p.name for p in source_dir.glob(f"{SHARED_PREFIX}*.py")]:
        if not (workdir / name).exists() and (source_dir / name).is_file():
            shutil.copy2(source_dir / name, workdir / name)
    target = workdir / mutant.path.name
    target.write_text(mutant.source, encoding="utf-8")
    # no bytecode: two mutants of one file of the same size written within a second would otherwise
    # share a cached .pyc (validated by the source's size and mtime in seconds) and the second be
    # judged as the first
    shutil.rmtree(workdir / "__pycache__", ignore_errors=True)
    writes_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    shared = [p.stem for p in workdir.glob(f"{SHARED_PREFIX}*.py")]
    names = [f"stopbench_predicates.{n}" for n in (*mutant.judged_by(), *shared)]
    saved = {n: sys.modules.pop(n, None) for n in names}
    try:
        with decision_time_limit(timeout):
            loaded: list[Predicate] = []
            for column in mutant.judged_by():
                one = load_file(workdir / f"{column}.py")
                if not isinstance(one, Predicate):
                    return Verdict(mutant, True, f"{column} does not load: {one.error}")
                loaded.append(one)
            for seq in sequences:
                for column, predicate in zip(mutant.judged_by(), loaded, strict=True):
                    exp = golden.expectation(column, seq.id)
                    if exp is None:
                        continue
                    diff = compare(replay(seq, predicate, judged=False), exp)
                    if diff is not None:
                        where = f"{column} on " if mutant.columns else ""
                        return Verdict(mutant, True, f"{where}{seq.id}: {diff.what}")
    finally:
        for n, module in saved.items():
            if module is not None:
                sys.modules[n] = module
            else:
                sys.modules.pop(n, None)
        shutil.copy2(mutant.path, target)  # the next mutant of another file loads this one unchanged
        sys.dont_write_bytecode = writes_bytecode
    return Verdict(mutant, False, "every reviewed cell still matches")


def ports(predicates_dir: Path) -> list[tuple[str, Path, Predicate]]:
    """(name, file, predicate) of every port in the folder: source not "constructed", plus the
    reference loop."""
    out = []
    for path in sorted(predicates_dir.glob("*.py")):
        if path.name.startswith("_"):
            continue
        loaded = load_file(path)
        sys.modules.pop(f"stopbench_predicates.{path.stem}", None)
        if not isinstance(loaded, Predicate):
            continue
        if path.stem == REFERENCE or not loaded.source.startswith("constructed"):
            out.append((path.stem, path, loaded))
    return out


def port_notes(predicates_dir: Path) -> dict[str, tuple[MutationNote, ...]]:
    """The mutation notes of every target :func:`targets` names, as the ports declare them: a port's
    own, and for a shared rules module those of the columns it builds (each carries the shared
    file's notes), without repeats."""
    out = {name: loaded.mutation_notes for name, _, loaded in ports(predicates_dir)}
    for path, cols in shared_users(predicates_dir).items():
        out[path.stem] = tuple(dict.fromkeys(n for c in cols if c in out for n in out[c]))
    return out


def targets(predicates_dir: Path) -> list[tuple[str, Path, tuple[str, ...]]]:
    """What the sweep mutates: (name, file, columns judging it) of every port (columns empty: the
    port itself), then of every shared rules module a port loads (its name is its file's stem)."""
    found = ports(predicates_dir)
    names = {name for name, _, _ in found}
    shared = [(path.stem, path, tuple(c for c in cols if c in names))
              for path, cols in shared_users(predicates_dir).items()]
    return [(name, path, ()) for name, path, _ in found] + [t for t in shared if t[2]]


def sweep(predicates_dir: Path, sequences_dir: Path, expected_dir: Path, only: Seq[str] = (),
          select: Callable[[Mutant], bool] | None = None) -> Iterator[Verdict]:
    """Every mutant of every port and shared rules module (or of those named in `only`, and of the
    shared rules modules the named ports load), checked."""
    catalogue = load_catalogue(sequences_dir)
    golden = load_golden(expected_dir)
    with tempfile.TemporaryDirectory(prefix="stopbench-mutate-") as tmp:
        work = Path(tmp)
        for name, path, columns in targets(predicates_dir):
            if only and name not in only and not set(columns) & set(only):
                continue
            for mutant in mutants(name, path, columns):
                if select is None or select(mutant):
                    yield check(mutant, catalogue.sequences, golden, work)


# ---------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.mutate", description=__doc__.split("\n\n")[0])
    parser.add_argument("port", nargs="*", help="only these ports (default: every port)")
    parser.add_argument("--predicates", type=Path, default=Path("predicates"))
    parser.add_argument("--sequences", type=Path, default=Path("sequences"))
    parser.add_argument("--expected", type=Path, default=Path("expected"))
    args = parser.parse_args(argv)
    # unusable input is one line each and exit 2, before any mutant is made
    try:
        problems = [*load_catalogue(args.sequences).problems, *load_golden(args.expected).problems]
    except UnusableInput as exc:
        problems = [str(exc)]
    if not args.predicates.is_dir() or not any(args.predicates.glob("*.py")):
        problems.append(f"{args.predicates}: no predicate files")
    if problems:
        for line in problems:
            print(line, file=sys.stderr)
        return 2
    started = time.perf_counter()
    notes = port_notes(args.predicates)
    by_port: dict[str, list[Verdict]] = {}
    for verdict in sweep(args.predicates, args.sequences, args.expected, args.port):
        by_port.setdefault(verdict.mutant.port, []).append(verdict)
    unexplained = 0
    for port, verdicts in by_port.items():
        caught = sum(v.caught for v in verdicts)
        per_kind = ", ".join(f"{k} {sum(v.caught for v in verdicts if v.mutant.kind == k)}/"
                             f"{sum(v.mutant.kind == k for v in verdicts)}" for k in KINDS)
        judged = verdicts[0].mutant.columns
        shown = f"{port} (judged on {', '.join(judged)})" if judged else port
        print(f"{shown}: {caught}/{len(verdicts)} mutants caught ({per_kind})")
        for v in verdicts:
            if v.caught:
                continue
            m = v.mutant
            note = explain(m, notes.get(m.port, ()))
            unexplained += note is None
            label = "SURVIVED" if note is None else ("equivalent" if note.equivalent else "gap")
            print(f"  {label}: {m.where()} [{m.kind}] {m.change}: {_short(m.line_text, 90)}")
            if note is not None:
                print(f"      {note.why}")
    if not args.port:
        survivors = [v.mutant for vs in by_port.values() for v in vs if not v.caught]
        used = {note for m in survivors for note in notes.get(m.port, ())
                if note.matches(m.line_text, m.change, m.next_text)}
        for port, declared in notes.items():
            for note in declared:
                if note not in used:
                    print(f"note explains no survivor any more (remove it): {port}: {note.line}")
    total = sum(len(v) for v in by_port.values())
    caught = sum(v.caught for vs in by_port.values() for v in vs)
    print(f"total: {caught}/{total} mutants caught, {unexplained} unexplained survivor(s), "
          f"{time.perf_counter() - started:.1f} s")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
