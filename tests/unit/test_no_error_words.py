"""No port, no part of the replay server and no shipped loop decides by an error's words.

An error has a kind (and maybe a status): that is what a decision may read. Its ``message`` and its
``code`` are the provider's words, kept as data: echoed in a body, shown to people, never matched.
This test reads the source of ``predicates/``, ``bench/serve/`` and ``bench/loops/`` and fails on
any ``.message`` or ``.code`` of an error (``err.message``, ``turn.error.code``, ...) that reaches a
decision: the test of an ``if``, ``while``, conditional expression, ``assert`` or comprehension, a
comparison (``==``, ``in``, ...), a match subject, or a call that matches text (``re.search``,
``.startswith``, ``any``, ...), directly or through a variable assigned from it. Echoing the words
(an f-string, a dict value, ``code or kind`` as a fallback) is not a decision.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.helpers import ROOT

WORDS = ("message", "code")
"""The attributes of an error that hold the provider's words."""

ERROR_NAMES = ("err", "error", "exc_error", "turn_error", "reply_error")
"""Names that hold an error in the checked code (besides any ``<something>.error``)."""

MATCHING_CALLS = ("search", "match", "fullmatch", "findall", "finditer", "startswith", "endswith", "find",
                  "rfind", "index", "count", "any", "all", "bool")
"""Calls that look into a text or turn it into a truth value: a decision when an error's words go in
(a call that only transforms the text, ``.lower()``, passes the words on: the variable it is
assigned to is followed instead)."""

CHECKED = ("predicates", "bench/serve", "bench/wires", "bench/loops")


def _is_error(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in ERROR_NAMES
    return isinstance(node, ast.Attribute) and node.attr == "error"


def _word_reads(node: ast.AST) -> Iterator[ast.Attribute]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr in WORDS and _is_error(sub.value):
            yield sub


def _tainted_names(tree: ast.AST) -> set[str]:
    """Names assigned (anywhere in the module) from an expression holding an error's words."""
    names: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and node.value is not None:
                value = node.value
                holds = any(True for _ in _word_reads(value)) or any(
                    isinstance(n, ast.Name) and n.id in names for n in ast.walk(value))
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for t in ast.walk(target):
                        if holds and isinstance(t, ast.Name) and t.id not in names:
                            names.add(t.id)
                            changed = True
    return names


def _presence(node: ast.expr) -> bool:
    """``err.code`` alone or ``err.code is None``: whether the words are there, not what they say."""
    if isinstance(node, ast.Attribute):
        return True
    return (isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute)
            and all(isinstance(op, ast.Is | ast.IsNot) for op in node.ops)
            and all(isinstance(c, ast.Constant) and c.value is None for c in node.comparators))


def _decisions(tree: ast.AST) -> Iterator[ast.AST]:
    """Every expression whose value decides something (a presence test, echoing the words when
    there are some, is not one)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert):
            if not _presence(node.test):
                yield node.test
        elif isinstance(node, ast.comprehension):
            yield from node.ifs
        elif isinstance(node, ast.Compare):
            if not _presence(node):
                yield node
        elif isinstance(node, ast.Match):
            yield node.subject
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in MATCHING_CALLS:
                yield node


def _scopes(tree: ast.Module) -> Iterator[ast.AST]:
    """Each function (a variable's taint stays in the function that assigned it), and the module's
    own statements outside functions."""
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    yield from functions
    yield ast.Module(body=[n for n in tree.body if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef
                                                                   | ast.ClassDef)], type_ignores=[])


def word_decisions(source: str) -> list[int]:
    """The lines of `source` where an error's message or code reaches a decision."""
    lines: set[int] = set()
    for scope in _scopes(ast.parse(source)):
        tainted = _tainted_names(scope)
        for expr in _decisions(scope):
            for sub in ast.walk(expr):
                if (isinstance(sub, ast.Attribute) and sub.attr in WORDS and _is_error(sub.value)) or (
                        isinstance(sub, ast.Name) and sub.id in tainted and isinstance(sub.ctx, ast.Load)):
                    lines.add(sub.lineno)
    return sorted(lines)


def checked_files() -> list[Path]:
    return sorted(p for folder in CHECKED for p in (ROOT / folder).rglob("*.py"))


def test_no_port_server_or_loop_decides_by_an_error_message_or_code() -> None:
    files = checked_files()
    assert any(p.parent.name == "predicates" for p in files) and any(p.parent.name == "serve" for p in files)
    found = {str(p.relative_to(ROOT)): lines for p in files
             if (lines := word_decisions(p.read_text(encoding="utf-8")))}
    assert found == {}, f"an error's words decide at (file: lines): {found}"


def test_the_check_bites_on_every_way_a_port_used_to_read_words() -> None:
    planted = '''
def a(turn):
    return "overloaded" in turn.error.message.lower()
def b(err):
    if err.code == "context_length_exceeded":
        return 1
def c(err):
    text = f"{err.code} {err.message}".lower()
    return any(w in text for w in ("timeout", "reset"))
def d(turn):
    return bool(PATTERN.search(turn.error.message))
def e(err):
    return [w for w in WORDS if w in err.message]
'''
    assert word_decisions(planted) == [3, 5, 9, 11, 13]


def test_echoing_the_words_as_data_is_not_a_decision() -> None:
    echoed = '''
def body(err):
    name = err.code or err.kind
    code = err.code
    return {"error": {"type": name, "code": code, "message": err.message}}
def line(turn):
    return f"error {turn.error.kind}: {turn.error.message}"
def decide(turn):
    if turn.error.kind == "rate_limit" and turn.error.status == 429:
        return 1
def details(err):
    return [{"reason": err.code}] if err.code is not None else []
def other(response):
    code = response.status_code
    return code == 200
'''
    assert word_decisions(echoed) == []
