"""The page's two charts, drawn as inline SVG text: violations per loop, and requirement kind by loop.

Drawn here rather than in the browser so that they are part of the deterministic page (and readable
with scripts off). Every number is written as text beside its bar or in its square, so the charts never
rely on colour alone; the heat map uses one hue, light to dark, which reads the same to every eye.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

ROW = 22
LABEL_W = 210
BAR_W = 360


def _num(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def bar_chart(rows: Sequence[Mapping[str, Any]]) -> str:
    """Horizontal bars: requirement violations per predicate, most first (ties by name)."""
    data = sorted(((int(r["violations"]), str(r["predicate"])) for r in rows), key=lambda x: (-x[0], x[1]))
    top = max([v for v, _ in data] + [1])
    height = ROW * len(data) + 30
    width = LABEL_W + BAR_W + 60
    out = [f'<svg class="chart" role="img" aria-labelledby="bar-title" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
           '<title id="bar-title">Requirement violations per loop</title>']
    for i, (v, name) in enumerate(data):
        y = 10 + i * ROW
        w = BAR_W * v / top
        out.append(f'<text x="{LABEL_W - 8}" y="{y + 15}" text-anchor="end" class="lbl">{escape(name)}</text>')
        out.append(f'<rect x="{LABEL_W}" y="{y + 3}" width="{_num(w)}" height="{ROW - 6}" class="bar">'
                   f'<title>{escape(name)}: {v} violation(s)</title></rect>')
        out.append(f'<text x="{_num(LABEL_W + w + 6)}" y="{y + 15}" class="val">{v}</text>')
    out.append("</svg>")
    return "\n".join(out)


def heat_map(kinds: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> str:
    """Squares of requirement kind (rows) by predicate (columns), darker for more violations, each
    with its count written in it."""
    cols = [str(r["predicate"]) for r in rows]
    top = max([int(r["by_kind"].get(k, 0)) for r in rows for k in kinds] + [1])
    cell = 34
    left = 170
    head = 200
    width = left + cell * len(cols) + 120
    height = head + cell * len(kinds) + 10
    out = [f'<svg class="chart" role="img" aria-labelledby="heat-title" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">',
           '<title id="heat-title">Requirement violations by requirement kind and loop</title>']
    for j, name in enumerate(cols):
        x = left + j * cell + cell / 2
        out.append(f'<text transform="translate({_num(x + 4)},{head - 6}) rotate(-60)" class="lbl">'
                   f'{escape(name)}</text>')
    for i, kind in enumerate(kinds):
        y = head + i * cell
        out.append(f'<text x="{left - 8}" y="{y + cell / 2 + 5:.0f}" text-anchor="end" class="lbl">'
                   f'{escape(kind)}</text>')
        for j, row in enumerate(rows):
            n = int(row["by_kind"].get(kind, 0))
            level = 0 if n == 0 else 1 + round(4 * n / top)
            x = left + j * cell
            out.append(f'<rect x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" class="h{min(level, 5)}">'
                       f'<title>{escape(cols[j])}, {escape(kind)}: {n}</title></rect>')
            if n:
                cls = "num dark" if level >= 3 else "num"
                out.append(f'<text x="{x + (cell - 2) / 2:.0f}" y="{y + cell / 2 + 3:.0f}" text-anchor="middle" '
                           f'class="{cls}">{n}</text>')
    out.append("</svg>")
    return "\n".join(out)
