"""The data the HTML page embeds: sequences, predicates, cells and summaries, as plain JSON values.

Gathered only through public functions and types (runner results, catalogue sequences, loaded
predicates, conformance records), and a pure function of them: the same inputs give the same
dictionary, every list in a fixed order, so the page built from it is byte-identical.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from collections.abc import Sequence as Seq
from pathlib import PurePosixPath
from typing import Any

from bench.conform.report import first_step_difference, status_of, steps_json
from bench.engine.changes import ChangesError, changes_from, changes_text
from bench.engine.discovery import Broken, Loaded
from bench.engine.model import Cell, Sequence, Turn
from bench.golden.expected import Golden
from bench.golden.run import Result
from bench.report.labels import VERDICTS, label, tool_runs, verdict
from bench.report.page.citations import citation_links, provenance_links

GROUP_ORDER = ("seed000", "constructed", "recorded", "found")
"""Row groups of the matrix: the catalogue's top folders in this order, any other after them."""

EXCERPT = 600
"""Characters of a turn's content or reasoning kept on the page (head and tail, the middle elided)."""

ARGS_EXCERPT = 300

STEPS_DRAWN = 1000
"""Steps of one cell the page draws (its first ones); a longer cell (a high ``--safety-cap``) says how many
it left out (``elided``), so the page stays the same size however long the loop ran. A longer tool list
is written as runs (``read_file x60000``), as labels write it."""

TURNS_DRAWN = 1000
"""Turns of one sequence the page draws (its first ones, and any a drawn step uses); a longer sequence
says how many it left out (``turns_elided``) and how many it has (``n_turns``)."""


def _names(names: Seq[str]) -> list[str]:
    """A cell's tool list as the page shows it: whole when short, else as the label's runs
    (:func:`bench.report.labels.tool_runs`)."""
    return list(names) if len(names) <= STEPS_DRAWN else tool_runs(names)


def excerpt(text: str | None, limit: int = EXCERPT) -> str | None:
    """`text` whole when short, else its head and tail around a note of what was left out."""
    if text is None or len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]} […{len(text) - 2 * half} characters…] {text[-half:]}"


def group_of(seq: Sequence) -> str:
    """The catalogue folder a sequence lives in (``sequences/<group>/...``), or its kind."""
    parts = PurePosixPath(seq.path.replace("\\", "/")).parts
    if "sequences" in parts:
        rest = parts[parts.index("sequences") + 1:]
        if len(rest) > 1:
            return rest[0]
    return seq.kind


def requirement_kind(requirement: str) -> str:
    """``stops_within: 4`` -> ``stops_within``: the requirement without its parameter."""
    return requirement.split(":", 1)[0].strip()


def unusable(turn: Turn) -> bool:
    """A turn that is not a usable answer or tool round as it stands: an error in place of a response,
    a truncated, filtered, failed or unrecognised finish, or ``tool_calls`` that carries no call."""
    return (turn.error is not None or turn.finish in ("length", "content_filter", "error", "unknown")
            or (turn.finish == "tool_calls" and not turn.tool_calls))


def after_unusable(seq: Sequence | None, cell: Cell) -> int:
    """Requests the loop made after the first step that an unusable turn answered."""
    if seq is None:
        return 0
    for i, s in enumerate(cell.steps):
        if unusable(seq.turns[s.turn]):
            return len(cell.steps) - i - 1
    return 0


def _turn(t: Turn) -> dict[str, Any]:
    out: dict[str, Any] = {"finish": t.finish, "raw": t.finish_raw, "content": excerpt(t.content),
                           "calls": [{"id": c.id, "name": c.name, "args": excerpt(c.arguments, ARGS_EXCERPT)}
                                     for c in t.tool_calls]}
    if t.reasoning is not None:
        out["reasoning"] = excerpt(t.reasoning)
    if t.error is not None:
        out["error"] = {"kind": t.error.kind, "status": t.error.status, "code": t.error.code,
                        "message": excerpt(t.error.message)}
    if t.usage is not None:
        out["usage"] = [t.usage.input_tokens, t.usage.output_tokens]
    if t.end_turn is not None:
        out["end_turn"] = t.end_turn
    if t.finish_detail is not None:
        out["detail"] = t.finish_detail
    if t.steer is not None:
        out["steer"] = excerpt(t.steer)
    if t.after:
        out["after"] = dict(t.after)
    return out


def _require(seq: Sequence) -> dict[str, Any]:
    r = seq.require
    out: dict[str, Any] = {}
    for name in ("ok", "stops_within", "answer_on"):
        value = getattr(r, name)
        if value is not None:
            out[name] = list(value) if isinstance(value, tuple) else value
    for name in ("no_dropped_calls", "no_truncated_runs", "answer_after_tools", "no_malformed_runs"):
        if getattr(r, name):
            out[name] = True
    return out


def sequence_data(seq: Sequence, used: Iterable[int] = ()) -> dict[str, Any]:
    """A row's sequence; one of more than :data:`TURNS_DRAWN` turns draws its first ones and the turns
    `used` by the steps drawn (``more_turns``, by index), and counts the rest (``turns_elided``)."""
    out: dict[str, Any] = {"id": seq.id, "title": seq.title, "kind": seq.kind, "group": group_of(seq),
                           "dialect": seq.dialect, "tags": list(seq.tags), "then": seq.then, "source": seq.source,
                           "path": seq.path,
                           "links": [link.as_json() for link in provenance_links(seq.source)],
                           "require": _require(seq), "turns": [_turn(t) for t in seq.turns[:TURNS_DRAWN]]}
    if len(seq.turns) > TURNS_DRAWN:
        more = sorted({i for i in used if TURNS_DRAWN <= i < len(seq.turns)})
        out.update(n_turns=len(seq.turns), more_turns={str(i): _turn(seq.turns[i]) for i in more},
                   turns_elided=len(seq.turns) - TURNS_DRAWN - len(more))
    return out


def predicate_data(p: Loaded, record: Mapping[str, Any] | None) -> dict[str, Any]:
    """A column: its description and source with links, its rules with their citations' links, and
    the conformance driver whose record covers it. Links come from the citations a port declares as
    data (:class:`~bench.Cited`); a citation given as text is shown, never parsed for links."""
    conf = None if record is None else {"driver": record.get("driver"), "install": record.get("install")}
    if isinstance(p, Broken):
        return {"name": p.name, "live": False, "broken": p.error, "description": "", "source": p.origin, "links": [],
                "rules": [], "max_steps": None, "cap": None, "conformance": conf}
    rules = [{"id": rid, "text": text, "links": [link.as_json() for link in citation_links(p.citations.get(rid, ()))]}
             for rid, text in p.rules.items()]
    if p.max_steps is not None and p.cap.rule not in p.rules:
        rules.append({"id": p.cap.rule, "text": f"the loop's own cap: {p.max_steps} requests, then stop "
                      f"{p.cap.reason} (ok={str(p.cap.ok).lower()})", "links": []})
    return {"name": p.name, "live": False, "broken": None, "description": p.description, "source": p.source,
            "links": [link.as_json() for link in citation_links(p.source_citations)], "rules": rules,
            "max_steps": p.max_steps, "cap_note": p.cap_note,
            "cap": None if p.max_steps is None else {"reason": p.cap.reason, "ok": p.cap.ok, "rule": p.cap.rule},
            "conformance": conf}


def live_predicate_data(column: str) -> dict[str, Any]:
    """A ``<name>@live`` column (:func:`bench.report.live.live_columns`): a program observed by
    ``stopbench check``, with no rules, source or golden file of its own."""
    return {"name": column, "live": True, "broken": None,
            "description": "observed live: a program run against the replay server by stopbench check, each "
                           "step inferred from its requests; judged against each sequence's require:, never "
                           "replayed and never compared with a golden file",
            "source": f"reports/live/{column.rsplit('@', 1)[0]}.json", "links": [], "rules": [],
            "max_steps": None, "cap_note": None, "cap": None, "conformance": None}


def _recorded_step(step: Mapping[str, Any]) -> dict[str, Any]:
    out = {"turn": step.get("turn"), "action": step.get("action"), "run": list(step.get("run") or []),
           "failed": list(step.get("failed") or [])}
    if step.get("action") == "stop":
        out["reason"], out["ok"] = step.get("reason"), step.get("ok")
    try:
        changed = changes_text(changes_from(step.get("changes")))
    except ChangesError:  # a record written by hand or by a later version: shown without them
        changed = ""
    if changed:
        out["changes"] = changed
    return out


def _conformance(record: Mapping[str, Any] | None, explained: Mapping[str, str], cell: Cell) -> dict[str, Any] | None:
    """The cell's row of its port's conformance record, with its status; when the record keeps the
    original's steps (``original_steps``), those steps and ``first_step``: the index of the first
    step where the port's steps now and the original's differ (None: they agree)."""
    if record is None:
        return None
    seq = cell.sequence
    row = record.get("sequences", {}).get(seq)
    out: dict[str, Any] = {"status": status_of(row, explained, seq)}
    if isinstance(row, Mapping):
        for key in ("port", "original", "difference", "driver_error", "not_run", "not_driven"):
            if row.get(key) is not None:
                out[key] = row[key]
        steps = row.get("original_steps")
        if isinstance(steps, list) and all(isinstance(s, Mapping) for s in steps):
            out["original_steps"] = [_recorded_step(s) for s in steps]
            out["first_step"] = first_step_difference(steps_json(cell), steps)
    if out["status"] == "explained":
        out["why"] = explained[seq]
    return out


def cell_data(r: Result, seq: Sequence | None, record: Mapping[str, Any] | None,
              explained: Mapping[str, str], golden: Golden | None = None) -> dict[str, Any]:
    c = r.cell
    out: dict[str, Any] = {
        "v": verdict(c), "label": label(c), "outcome": c.outcome, "reason": c.reason, "ok": c.ok, "n": c.n_steps,
        "tools_run": _names(c.tools_run), "tools_failed": _names(c.tools_failed), "reminders": c.reminders,
        "resends": c.resends, "tokens": c.tokens, "error": c.error, "golden": r.status,
        "after_unusable": after_unusable(seq, c),
        "violations": [{"requirement": v.requirement, "kind": requirement_kind(v.requirement), "step": v.step,
                        "detail": v.detail, **({"guess": True} if v.guess else {})} for v in c.violations],
        "steps": [[s.turn, s.decision.action, s.decision.rule, s.decision.reason, s.decision.ok,
                   list(s.tools_run), list(s.tools_failed), changes_text(s.decision.changes)]
                  for s in c.steps[:STEPS_DRAWN]],
    }
    if c.n_steps > STEPS_DRAWN:
        out["elided"] = c.n_steps - STEPS_DRAWN
    if r.mismatch is not None:
        out["mismatch"] = {"what": r.mismatch.what, "expected": r.mismatch.expected, "actual": r.mismatch.actual}
    exp = golden.expectation(c.predicate, c.sequence) if golden is not None else None
    if exp is not None:
        out["expected"] = {"basis": exp.basis, "note": exp.note, "path": list(exp.path)}
    conf = _conformance(record, explained, c)
    if conf is not None:
        out["conformance"] = conf
    return out


def ordered_sequences(sequences: Seq[Sequence]) -> list[Sequence]:
    """Rows in matrix order: by group (:data:`GROUP_ORDER` first), then first tag, then id."""
    def key(s: Sequence) -> tuple[int, str, str, str]:
        g = group_of(s)
        rank = GROUP_ORDER.index(g) if g in GROUP_ORDER else len(GROUP_ORDER)
        return (rank, g, s.tags[0] if s.tags else "", s.id)
    return sorted(sequences, key=key)


def summary(cells: Mapping[str, Mapping[str, Any]], predicates: Seq[str]) -> dict[str, Any]:
    """Per predicate: cells by verdict and golden status, violations by requirement kind, requests
    wasted (resends, reminders, requests after the first unusable turn) and tokens."""
    kinds = sorted({v["kind"] for c in cells.values() for v in c["violations"]})
    rows = []
    for p in predicates:
        mine = [c for key, c in sorted(cells.items()) if key.split("\t", 1)[1] == p]
        by_kind = {k: sum(1 for c in mine for v in c["violations"] if v["kind"] == k) for k in kinds}
        rows.append({
            "predicate": p,
            "verdicts": {v: sum(c["v"] == v for c in mine) for v in VERDICTS},
            "golden": {g: sum(c["golden"] == g for c in mine) for g in ("match", "mismatch", "unreviewed")},
            "live": bool(mine) and all(c["golden"] == "live" for c in mine),
            "cells_violating": sum(bool(c["violations"]) for c in mine),
            "violations": sum(len(c["violations"]) for c in mine),
            "by_kind": by_kind,
            "resends": sum(c["resends"] for c in mine),
            "reminders": sum(c["reminders"] for c in mine),
            "after_unusable": sum(c["after_unusable"] for c in mine),
            "requests": sum(c["n"] for c in mine),
            "tokens": sum(c["tokens"] for c in mine),
        })
    return {"kinds": kinds, "rows": rows}


def page_data(results: Seq[Result], sequences: Seq[Sequence], predicates: Seq[Loaded],
              records: Mapping[str, Mapping[str, Any]], explained: Mapping[str, Mapping[str, str]],
              golden: Golden | None = None) -> dict[str, Any]:
    """Everything the page shows. `records` maps a predicate (port) name to its conformance record
    (``reports/conformance/<driver>.json``); `explained` a predicate name to its
    ``CONFORMANCE_EXPLAINED``; `golden`, when given, adds each reviewed cell's basis, note and
    decision path. Results with status ``live`` are ``<name>@live`` columns after the predicates, in
    the order they first appear. Cells are keyed ``"<sequence>\\t<predicate>"``."""
    seqs = ordered_sequences(sequences)
    by_id = {s.id: s for s in seqs}
    live = list(dict.fromkeys(r.cell.predicate for r in results if r.status == "live"))
    names = [p.name for p in predicates] + live
    cells: dict[str, dict[str, Any]] = {}
    for r in results:
        p = r.cell.predicate
        cells[f"{r.cell.sequence}\t{p}"] = cell_data(r, by_id.get(r.cell.sequence), records.get(p),
                                                     explained.get(p, {}), golden)
    used: dict[str, set[int]] = {}
    for key, cell in cells.items():  # the turns a long sequence's drawn steps use are drawn too
        sid = key.split("\t", 1)[0]
        if sid in by_id and len(by_id[sid].turns) > TURNS_DRAWN:
            used.setdefault(sid, set()).update(step[0] for step in cell["steps"])
    return {
        "sequences": [sequence_data(s, used.get(s.id, ())) for s in seqs],
        "predicates": [predicate_data(p, records.get(p.name)) for p in predicates]
                      + [live_predicate_data(col) for col in live],
        "cells": cells,
        "summary": summary(cells, names),
    }



SHARED_FIELDS = ("label", "tools_run", "tools_failed", "violations", "expected", "conformance")
"""A cell's fields the page embeds as an index into a table of their distinct values (many cells share one)."""


def _table(rows: list[Any], index: dict[str, int], item: Any) -> int:
    """`item`'s place in `rows` (a table of distinct items, `index` by their JSON), added when new."""
    key = json.dumps(item, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    if key not in index:
        index[key] = len(rows)
        rows.append(item)
    return index[key]


def by_reference(data: Mapping[str, Any]) -> dict[str, Any]:
    """The page's data with each repeated fact once, as the page embeds it. Every distinct drawn step of a
    port (table ``steps``), recorded step of an original loop (``recorded_steps``) and value of a field of
    :data:`SHARED_FIELDS` is one row of a table in ``tables``; a cell is a list: the index of its field
    names (``shapes``), then its fields' values in that order, a step or a shared field as its index; the
    cells are keyed by sequence, then predicate. The page's script puts them back in place when it loads.
    The cells are walked in key order, so the tables do not depend on the results' order."""
    tables: dict[str, list[Any]] = {name: [] for name in ("shapes", "steps", "recorded_steps", *SHARED_FIELDS)}
    seen: dict[str, dict[str, int]] = {name: {} for name in tables}

    def ref(name: str, item: Any) -> int:
        return _table(tables[name], seen[name], item)

    cells: dict[str, dict[str, list[Any]]] = {}
    for key in sorted(data["cells"]):
        cell = dict(data["cells"][key])
        cell["steps"] = [ref("steps", step) for step in cell["steps"]]
        conf = cell.get("conformance")
        if conf is not None and "original_steps" in conf:
            cell["conformance"] = {**conf, "original_steps": [ref("recorded_steps", s) for s in conf["original_steps"]]}
        for name in SHARED_FIELDS:
            if name in cell:
                cell[name] = ref(name, cell[name])
        fields = sorted(cell)
        sequence, predicate = key.split("\t", 1)
        cells.setdefault(sequence, {})[predicate] = [ref("shapes", fields), *(cell[name] for name in fields)]
    return {**data, "cells": cells, "tables": tables, "shared": list(SHARED_FIELDS)}


def unfold(embedded: Mapping[str, Any]) -> dict[str, Any]:
    """The page's data as :func:`by_reference` was given it, from what the page embeds: what the page's script
    does when it loads, for a reader of the page's data outside a browser (the tests)."""
    tables, shared = embedded["tables"], set(embedded["shared"])
    cells: dict[str, dict[str, Any]] = {}
    for sequence, row in embedded["cells"].items():
        for predicate, values in row.items():
            cell = dict(zip(tables["shapes"][values[0]], values[1:], strict=True))
            cell["steps"] = [tables["steps"][i] for i in cell["steps"]]
            for name in shared & cell.keys():
                cell[name] = tables[name][cell[name]]
            conf = cell.get("conformance")
            if conf is not None and "original_steps" in conf:
                cell["conformance"] = {**conf, "original_steps": [tables["recorded_steps"][i]
                                                                  for i in conf["original_steps"]]}
            cells[f"{sequence}\t{predicate}"] = cell
    return {**{k: v for k, v in embedded.items() if k not in ("tables", "shared")}, "cells": cells}
