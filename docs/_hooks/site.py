"""The docs site's build hook: everything the pages show that the code or a generated report holds.

A page never types a figure, a table of the code's vocabulary or a copy of a report. It writes a
marker instead, and this hook fills it in when ``mkdocs build`` runs:

- ``<!-- include: PATH -->`` puts the repository file PATH in its place (the README on the home page,
  the CHANGELOG); ``<!-- include: PATH#Heading -->`` only that section of a generated report (the
  lines under the heading, up to the next heading of the same or a higher level).
- ``<!-- generate: NAME -->`` puts the Markdown that :data:`GENERATORS` makes from the code: the
  requirement kinds, the exit statuses, the subcommands, the sequence and golden file schemas.

The generated reports (``reports/*.md``, the framework scorecard, the HTML matrix) become pages of
the site at the same paths, so a link written for the repository (``reports/decision-table.md``,
``../reports/frameworks/scorecard.md`` from ``docs/``) works on the site too. A link from a page or an
included file to a repository file the site does not hold is shown as the file's path in code.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files
    from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parents[2]
DOCS = "docs"

MOUNTED_PAGES = ("reports/decision-table.md", "reports/conformance.md", "reports/fuzz-findings.md",
                 "reports/frameworks/scorecard.md")
"""Generated Markdown reports that become pages of the site, at their repository paths."""
MOUNTED_STATIC = ("reports/index.html",)
"""Generated files copied into the site as they are (the interactive matrix)."""

_MARKER = re.compile(r"^<!-- (include|generate): ([^>]*?) -->[ \t]*$", re.M)
_LINK = re.compile(r"(!?\[[^\]\n]*\]\()([^)\s]+)(\))")
_FENCE = re.compile(r"^(```|~~~)", re.M)


# ---------------------------------------------------------------- generators


def _error(message: str) -> Exception:
    """mkdocs' own error (one line, the build stops) when mkdocs is there; a ValueError for the tests."""
    try:
        from mkdocs.exceptions import PluginError
    except ImportError:
        return ValueError(message)
    return PluginError(message)


def _requirements() -> str:
    from bench.check.explain import requirements_markdown

    return requirements_markdown()


def _exit_statuses() -> str:
    """The statuses `bench/cli/_common.py` declares: its ``EXIT_*`` constants, each with the words its
    docstring gives that number (``Exit statuses ...: 0 clean; 1 a verdict failed; ...``)."""
    from bench.cli import _common

    doc = " ".join((_common.__doc__ or "").split())
    found = re.search(r"Exit statuses[^:]*: (.*?)\. ", doc)
    if found is None:
        raise _error("bench/cli/_common.py's docstring no longer says its exit statuses")
    words: dict[str, str] = {}
    for part in found.group(1).split(";"):
        number, _, meaning = part.strip().partition(" ")
        words[number] = meaning
    names: dict[int, list[str]] = {}
    for name, value in vars(_common).items():
        if name.startswith("EXIT_") and isinstance(value, int):
            names.setdefault(value, []).append(f"`{name}`")
    if sorted(int(n) for n in words) != sorted(names):
        raise _error(f"bench/cli/_common.py: the docstring's statuses {sorted(words)} are not its EXIT_ "
                          f"constants {sorted(names)}")
    rows = ["| status | means | constant |", "| --- | --- | --- |"]
    rows += [f"| {code} | {words[str(code)]} | {', '.join(names[code])} |" for code in sorted(names)]
    return "\n".join(rows) + "\n"


def _commands() -> str:
    from bench.cli import COMMANDS

    rows = ["| command | does |", "| --- | --- |"]
    rows += [f"| [`stopbench {name}`](#stopbench-{name}) | {help_} |" for name, (_, help_) in sorted(COMMANDS.items())]
    return "\n".join(rows) + "\n"


def _schema(model: Any) -> str:
    """A table of a pydantic model's fields: name, type, default, constraints."""
    rows = ["| field | type | default | constraints |", "| --- | --- | --- | --- |"]
    for name, info in model.model_fields.items():
        annotation = _type_name(info.annotation)
        default = "required" if info.is_required() else _default(info.get_default(call_default_factory=True))
        limits = "; ".join(_limit(m) for m in info.metadata) or ""
        rows.append(f"| `{name}` | {annotation} | {default} | {limits} |")
    return "\n".join(rows) + "\n"


def _default(value: Any) -> str:
    """A default as the YAML a file would hold: ``null``, ``false``, ``end``; a nested block's default
    (every field unset) as "none"."""
    if hasattr(type(value), "model_fields"):
        return "none"
    if value is None:
        return "`null`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def _limit(meta: Any) -> str:
    if getattr(meta, "min_length", None) == 1:
        return "not empty"
    words = {"ge": ">=", "le": "<=", "gt": ">", "lt": "<", "min_length": "length at least",
             "max_length": "length at most"}
    for attr, word in words.items():
        if getattr(meta, attr, None) is not None:
            return f"{word} {getattr(meta, attr)}"
    return str(meta)


def _type_name(tp: Any) -> str:
    import typing

    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, __import__("types").UnionType):
        return " or ".join(_type_name(a) for a in args)
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if origin is dict:
        return f"mapping of {_type_name(args[0])} to {_type_name(args[1])}"
    if tp is type(None):
        return "`null`"
    name = getattr(tp, "__name__", str(tp))
    if hasattr(tp, "model_fields"):
        title = name.lstrip("_").removesuffix("In")
        return f"[`{title}`](#{title.lower()})"
    return f"`{name}`"


def _schema_of(module: str, *models: str) -> Callable[[], str]:
    def generate() -> str:
        import importlib

        mod = importlib.import_module(module)
        parts = []
        for name in models:
            model = getattr(mod, name)
            title = name.lstrip("_").removesuffix("In")
            doc = model.__doc__ if "__doc__" in vars(model) and model.__doc__ else ""
            about = re.sub(r":\w+:`", "`", " ".join(doc.split())) + "\n\n" if doc else ""
            parts.append(f"#### `{title}`\n\n{about}{_schema(model)}")
        return "\n".join(parts)

    return generate


def _from(module: str, name: str) -> Callable[[], str]:
    """The generator `name` of `module` (a function returning Markdown), imported when the page is built."""
    def generate() -> str:
        import importlib

        made: str = getattr(importlib.import_module(module), name)()
        return made

    return generate


def _layout() -> str:
    """The package's modules and sub-packages, each with the first line of its docstring."""
    import ast

    rows = ["| module | what it holds |", "| --- | --- |"]
    package = ROOT / "bench"
    entries = sorted(p for p in package.iterdir()
                     if (p.suffix == ".py" or (p / "__init__.py").is_file()) and p.name != "__pycache__")
    for path in entries:
        source = path / "__init__.py" if path.is_dir() else path
        doc = ast.get_docstring(ast.parse(source.read_text(encoding="utf-8"))) or ""
        first = " ".join(doc.split("\n\n")[0].split())
        name = f"bench.{path.stem}" if path.name != "__init__.py" else "bench"
        first = first.replace("|", "\\|")
        rows.append(f"| `{name}`{'/' if path.is_dir() else ''} | {first} |")
    return "\n".join(rows) + "\n"


def _legend() -> str:
    from bench.report.labels import LEGEND

    return LEGEND


def _reference_rules() -> str:
    """The reference loop's rules in the order it checks them, as its own docstring lists them."""
    import ast

    doc = ast.get_docstring(ast.parse((ROOT / "predicates" / "reference.py").read_text(encoding="utf-8"))) or ""
    start = doc.find(" 1. ")
    if start < 0:
        raise _error("predicates/reference.py's docstring no longer lists its rules from ' 1. '")
    return "```text\n" + doc[start:].rstrip() + "\n```\n"


def _loop_guard_score() -> str:
    """The loop-guard score of every predicate of ``predicates/`` on the catalogue's sequences tagged
    ``repeat`` (:mod:`bench.report.guards`), replayed now; the section of the decision table without its
    heading."""
    from bench.catalogue.load import load_catalogue
    from bench.engine.discovery import discover
    from bench.golden.run import run
    from bench.report.guards import guard_cases, guard_scores, markdown_section

    catalogue = load_catalogue(ROOT / "sequences")
    ids = {c.sequence for c in guard_cases(catalogue.sequences)}
    sequences = [s for s in catalogue.sequences if s.id in ids]
    loaded = list(discover(ROOT / "predicates", entry_points_too=False))
    section = markdown_section(guard_scores(run(sequences, loaded), sequences, [p.name for p in loaded]), loaded)
    return section.split("\n", 2)[2]


def _pins() -> str:
    from bench.conform.pins import pins_markdown

    return pins_markdown()


def _columns() -> str:
    """Every predicate of ``predicates/``: what it models and what it was read from, as it declares them."""
    from bench.engine.discovery import discover

    rows = ["| column | what it models | source |", "| --- | --- | --- |"]
    for loaded in discover(ROOT / "predicates", entry_points_too=False):
        if not hasattr(loaded, "decide"):
            raise _error(f"predicates/{loaded.name}.py does not load: {getattr(loaded, 'error', '')}")
        cells = [" ".join(str(v).split()).replace("|", "\\|") for v in (loaded.description, loaded.source)]
        rows.append(f"| `{loaded.name}` | {cells[0]} | {cells[1]} |")
    return "\n".join(rows) + "\n"


def _action() -> str:
    """The GitHub Action's inputs and outputs, from ``action.yml``."""
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    rows = ["| input | default | what it is |", "| --- | --- | --- |"]
    for name, spec in action["inputs"].items():
        default = "required" if spec.get("required") else f"`{spec.get('default', '')}`"
        rows.append(f"| `{name}` | {default} | {' '.join(str(spec['description']).split())} |")
    rows += ["", "| output | what it is |", "| --- | --- |"]
    rows += [f"| `{name}` | {' '.join(str(spec['description']).split())} |" for name, spec in action["outputs"].items()]
    return "\n".join(rows) + "\n"


_SHOWN = 6
"""Sequences named per stop reason on the stop-reasons page; the rest are counted."""


def _stop_reasons() -> str:
    """Every wire's finish table (``bench.TABLES``): each raw stop reason, the finish it means, the
    documentation it cites, and the catalogue's sequences that serve it."""
    from bench.catalogue.load import load_catalogue
    from bench.wires.dialects import TABLES, unspecified

    served: dict[tuple[str, str], list[str]] = {}
    for sequence in load_catalogue(ROOT / "sequences").sequences:
        for raw in dict.fromkeys(t.finish_raw for t in sequence.turns if t.finish_raw is not None):
            served.setdefault((sequence.dialect, raw), []).append(sequence.id)
    out: list[str] = []
    for dialect, table in TABLES.items():
        out += [f"### {dialect}", "", "| stop reason | means | documented by | sequences |",
                "| --- | --- | --- | --- |"]
        for raw, entry in table.items():
            ids = sorted(served.get((dialect, raw), []))
            where = ", ".join(f"`{i}`" for i in ids[:_SHOWN]) if ids else "none yet"
            if len(ids) > _SHOWN:
                where += f" and {len(ids) - _SHOWN} more"
            cite = " ".join(entry.cite.split()).replace("|", "\\|")
            out.append(f"| `{raw}` | `{entry.finish}` | {cite} | {where} |")
        unknown = sorted({raw for (d, raw) in served if d == dialect and raw not in table})
        if unknown:
            out += ["", "Served as their raw strings, not in the table (`unknown`): "
                    + ", ".join(f"`{raw}` ({', '.join(f'`{i}`' for i in sorted(served[(dialect, raw)]))})"
                                for raw in unknown) + "."]
        if dialect in unspecified():
            out += ["", f"An unknown finish of another wire is served here as `{unspecified()[dialect]}`."]
        out.append("")
    return "\n".join(out)


_LIMITS = (  # (module, constant, unit, what it bounds, what happens past it)
    ("bench.catalogue.yaml_read", "MAX_BYTES", "bytes", "a YAML file read (sequence, golden file, cassette)",
     "refused unread, one line; a FIFO, a device or a folder is refused at once"),
    ("bench.catalogue.yaml_read", "MAX_DEPTH", "levels", "nesting in a YAML file", "refused, one line"),
    ("bench.catalogue.yaml_read", "ALIAS_BUDGET", "values", "what aliases may add to a cassette",
     "refused, one line (sequence and golden files allow no alias at all)"),
    ("bench.wires.capture", "MAX_INFLATED", "bytes", "a gzip body of a cassette, inflated",
     "refused when reached, one line naming the body"),
    ("bench.wires.capture", "MAX_RATIO", "times", "what a gzip body of a cassette or a row group of a Parquet corpus "
     "inflates to over its compressed size, past `RATIO_FLOOR` bytes", "refused when reached (a row group: before "
     "its rows are made), one line naming the body or the row group"),
    ("bench.engine.replay", "DEFAULT_SAFETY_CAP", "requests", "a replay (`--safety-cap`)", "the cell ends `capped`"),
    ("bench.check.limits", "MAX_TRIALS", "trials", "`check --trials`", "refused before any run, one line"),
    ("bench.check.limits", "MAX_NAME_CHARS", "characters", "a loop's name (`check --name`, `-c NAME=...`; letters "
     "of any script, digits, `_`, `.`, `-`)", "refused before any run, one line; a default name is cut to it"),
    ("bench.check.limits", "STDERR_TAIL_BYTES", "bytes", "a program's stderr that `check` reads for its cell's error "
     "(the last lines)", "only its end is read"),
    ("bench.engine.contain", "DEFAULT_DECISION_TIMEOUT", "seconds", "one decision or one predicate file's import "
     "(`--decision-timeout`)", "the cell crashes"),
    ("bench.engine.replay", "SHARE_AFTER", "steps", "a cell whose steps keep their own records",
     "a step like the one before shares its records"),
    ("bench.report.page.data", "STEPS_DRAWN", "steps", "a cell's steps drawn on the page",
     "the rest are counted, not drawn"),
    ("bench.report.page.data", "TURNS_DRAWN", "turns", "a sequence's turns drawn on the page (with those its drawn "
     "steps use)", "the rest are counted, not drawn"),
    ("bench.cli.serve", "DEFAULT_MAX_BODY", "bytes", "a request body the replay server reads (`--max-body`)",
     "HTTP 413"),
    ("bench.serve.app", "DEFAULT_JOURNAL", "requests", "a run's requests the replay server keeps whole",
     "counted and answered, not kept"),
    ("bench.serve.app", "DEFAULT_BODY_BUDGET", "bytes", "request bodies a run holds (`--keep-bodies` lifts it)",
     "the steps already answered are observed and their bodies released"),
)


def _limits() -> str:
    """The bench's bounds on what it reads and keeps, each with its value from the code."""
    import importlib

    rows = ["| a bound on | value | past it | constant |", "| --- | --- | --- | --- |"]
    for module, name, unit, what, past in _LIMITS:
        value = getattr(importlib.import_module(module), name)
        shown = f"{value:,}" if isinstance(value, int) else f"{value:g}"
        rows.append(f"| {what} | {shown} {unit} | {past} | `{module}.{name}` |")
    return "\n".join(rows) + "\n"


GENERATORS: dict[str, Callable[[], str]] = {
    "limits": _limits,
    "stop-reasons": _stop_reasons,
    "action": _action,
    "pins": _pins,
    "columns": _columns,
    "reference-rules": _reference_rules,
    "loop-guard-score": _loop_guard_score,
    "legend": _legend,
    "layout": _layout,
    "requirements": _requirements,
    "exit-statuses": _exit_statuses,
    "commands": _commands,
    "sequence-schema": _schema_of("bench.catalogue.load", "SequenceIn", "TurnIn", "ToolCallIn", "ErrorIn",
                                  "UsageIn", "RequireIn"),
    "golden-schema": _schema_of("bench.golden.expected", "_GoldenFileIn", "Covers", "ExpectedCell"),
    "fault-recipe": _from("bench.faults._docs", "recipe_markdown"),
    "fault-presets": _from("bench.faults._docs", "presets_markdown"),
    "fault-shapes": _from("bench.faults._docs", "shapes_markdown"),
}
"""Marker name -> the function that writes its Markdown from the code."""


# ---------------------------------------------------------------- includes and links


def _section(text: str, heading: str, path: str) -> str:
    """The lines of `text` under the heading whose words are `heading`, to the next heading of the
    same or a higher level. A heading that is not there stops the build (the page would say nothing)."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        m = re.match(r"^(#+) (.*?)\s*$", line)
        if m and m.group(2) == heading:
            level = len(m.group(1))
            body = []
            for rest in lines[i + 1:]:
                n = re.match(r"^(#+) ", rest)
                if n and len(n.group(1)) <= level:
                    break
                body.append(rest)
            return "".join(body).strip("\n") + "\n"
    raise _error(f"{path} has no heading {heading!r}")


def _rebase(text: str, source: PurePosixPath, page: PurePosixPath, mounted: set[str]) -> str:
    """Rewrite the relative links of `text`, written from repository file `source`, for the page at
    `page` (a path under docs/): a target under docs/ or mounted into the site gets its path relative
    to the page; any other repository file is shown as its path in code. Fenced code is left alone."""
    out, inside = [], False
    for chunk in re.split(r"(^(?:```|~~~).*$)", text, flags=re.M):
        if _FENCE.match(chunk):
            inside = not inside
            out.append(chunk)
            continue
        out.append(chunk if inside else _LINK.sub(lambda m: _relink(m, source, page, mounted), chunk))
    return "".join(out)


def _relink(m: re.Match[str], source: PurePosixPath, page: PurePosixPath, mounted: set[str]) -> str:
    target = m.group(2)
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
        return m.group(0)
    path, _, anchor = target.partition("#")
    repo_path = _normal(source.parent / path)
    if repo_path is None:
        return m.group(0)
    if repo_path.startswith(DOCS + "/"):
        site_path = repo_path[len(DOCS) + 1:]
    elif repo_path in mounted:
        site_path = repo_path
    else:
        if m.group(1).startswith("!"):
            return m.group(0)
        label = m.group(1)[1:-2]
        return label if label.startswith("`") else f"{label} (`{repo_path}`)"
    rel = _relative(site_path, str(page.parent))
    return f"{m.group(1)}{rel}{'#' + anchor if anchor else ''}{m.group(3)}"


def _normal(path: PurePosixPath) -> str | None:
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in (".", ""):
            parts.append(part)
    return "/".join(parts)


def _relative(target: str, start: str) -> str:
    import posixpath

    return posixpath.relpath(target, start or ".")


def _expand(markdown: str, page_src: PurePosixPath, mounted: set[str]) -> str:
    def fill(m: re.Match[str]) -> str:
        kind, arg = m.group(1), m.group(2).strip()
        if kind == "generate":
            if arg not in GENERATORS:
                raise _error(f"{page_src}: no generator {arg!r} (known: {', '.join(GENERATORS)})")
            return GENERATORS[arg]().rstrip("\n")
        path, _, heading = arg.partition("#")
        text = (ROOT / path).read_text(encoding="utf-8")
        if heading:
            text = _section(text, heading, path)
        if path.endswith(".md"):
            text = _rebase(text, PurePosixPath(path), page_src, mounted)
        return text.rstrip("\n")

    return _MARKER.sub(fill, markdown)


# ---------------------------------------------------------------- mkdocs events


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return config


def expand_page(src_uri: str) -> str:
    """The Markdown of the page `src_uri` (a path under docs/, or a mounted report) as the site shows it:
    markers filled in, links rebased. The tests use it to read a page as the build does."""
    mounted = set(MOUNTED_PAGES) | set(MOUNTED_STATIC)
    site_src = PurePosixPath(src_uri)
    page_src = site_src if src_uri in mounted else PurePosixPath(DOCS) / site_src
    markdown = (ROOT / page_src).read_text(encoding="utf-8")
    return _rebase(_expand(markdown, site_src, mounted), page_src, site_src, mounted)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    from mkdocs.structure.files import File

    for path in MOUNTED_PAGES:
        files.append(File.generated(config, path, content=(ROOT / path).read_text(encoding="utf-8")))
    for path in MOUNTED_STATIC:
        files.append(File.generated(config, path, abs_src_path=str(ROOT / path)))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    mounted = set(MOUNTED_PAGES) | set(MOUNTED_STATIC)
    site_src = PurePosixPath(page.file.src_uri)
    page_src = site_src if page.file.src_uri in mounted else PurePosixPath(DOCS) / site_src
    return _rebase(_expand(markdown, site_src, mounted), page_src, site_src, mounted)


_ROLE = re.compile(r":(?:class|func|data|mod|meth|attr|exc|obj):(?=<code>)")


def on_page_content(html: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """Docstrings are written with Sphinx roles (``:class:`State```); on the site the name is enough."""
    return _ROLE.sub("", html).replace("::</p>", ":</p>")
