"""The aligned view as one SVG: every vendor's lanes side by side, on shared rows.

Our own renderer, not graphviz: a sequence diagram's layout is a walk down its rows, and we
need exact row alignment across vendors, one scale for all of them, and our own classes.
Every element of event N carries ``class="ev ev-N"``; one ``<style>`` lights an event in every
vendor while any of its elements is hovered (``:has()``, no script), the lit step's labels
are filled with :data:`~flowdebug.render.dot.HIGHLIGHT` (the page's follow script finds
them), and ``selected`` lights one event everywhere.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from functools import lru_cache

from flowdebug.engine.tracing.trace import LANES, PHASES
from flowdebug.render import safe
from flowdebug.render.aligned import (
    LONG_ROWS,
    Cell,
    Column,
    Metrics,
    table,
)
from flowdebug.render.dot import ERROR_COLOR, HIGHLIGHT, PHASE_COLORS, Style

SELECTED = "#cfe3ff"
SANS = "Helvetica, Arial, sans-serif"
MONO = "DejaVu Sans Mono, Menlo, Consolas, monospace"
TINTS = {phase: color + "14" for phase, color in PHASE_COLORS.items()}  # ~8 % of the colour
PHASE_NAMES = {p: p.capitalize() for p in PHASES}
# Characters of a hover title (a refusal's whole message). A vendor's message quotes the call
# id, which can be a megabyte: in every vendor's column, at every rerun, to every browser.
TITLE_MAX = safe.TOOLTIP_MAX


def _attr(text: object) -> str:
    return safe.svg(text)


def _css(seqs: Sequence[int], m: Metrics) -> str:
    hover = " ".join(
        f".fd-aligned:has(.ev-{n}:hover) .ev-{n} .bg {{fill:{SELECTED};fill-opacity:1;"
        f"stroke:#1f5fa8}} .fd-aligned:has(.ev-{n}:hover) .ev-{n} .ln "
        f"{{stroke-width:{m.font * 0.3:.1f}px}}"
        for n in seqs
    )
    return (
        "<style>.fd-aligned text{white-space:pre} .fd-aligned .ev{cursor:default} "
        f".fd-aligned .selected .bg{{fill:{SELECTED};fill-opacity:1;stroke:#1f5fa8}} "
        f"{hover}</style>"
    )


class _Canvas:
    def __init__(self, m: Metrics):
        self.m = m
        self.out: list[str] = []

    def text(
        self,
        x: float,
        y: float,
        lines: Sequence[str],
        color: str,
        size: float,
        *,
        anchor: str = "middle",
        bold: bool = False,
        family: str = SANS,
        cls: str = "",
    ) -> None:
        """Lines of text, the first line's top at ``y``. Every line but the last ends in a
        space, so the element's text reads as one phrase."""
        weight = ' font-weight="bold"' if bold else ""
        klass = f' class="{cls}"' if cls else ""
        spans = "".join(
            f'<tspan x="{x:.1f}" y="{y + size * 0.95 + i * self.m.line * size / self.m.font:.1f}">'
            f"{_attr(line)}{' ' if i < len(lines) - 1 else ''}</tspan>"
            for i, line in enumerate(lines)
        )
        self.out.append(
            f'<text{klass} font-family="{family}" font-size="{size:.0f}" fill="{color}" '
            f'text-anchor="{anchor}"{weight}>{spans}</text>'
        )

    def line(self, x1: float, y1: float, x2: float, y2: float, color: str, extra: str = "") -> None:
        self.out.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="{color}"{extra}/>'
        )

    def rect(self, x: float, y: float, w: float, h: float, extra: str) -> None:
        self.out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" {extra}/>')


def _lane_x(x0: float, i: int, m: Metrics) -> float:
    return x0 + m.head_w / 2 + i * m.gap


def _heads(c: _Canvas, col: Column, x0: float, y: float) -> None:
    m = c.m
    for i, lane in enumerate(col.lanes):
        x = _lane_x(x0, i, m)
        c.rect(
            x - m.head_w / 2 + 4,
            y,
            m.head_w - 8,
            m.head_h,
            'rx="8" fill="#eef2f7" stroke="#5a6b80" stroke-width="1.5"',
        )
        c.text(
            x,
            y + (m.head_h - m.lane_font * 1.2) / 2,
            [LANES[lane]],
            "#1d2733",
            m.lane_font,
            bold=True,
            cls="lane",
        )


@lru_cache(maxsize=4096)
def _cell_body(
    m: Metrics, lanes: tuple[str, ...], cell: Cell, x0: float, lit: bool, selected: bool
) -> str:
    """One cell's SVG drawn at the top of the view, remembered: a Step redraws the whole view,
    and every cell but the new ones and those it lights or unlights looks as it did. Its row
    moves it down (a window that slides moves every row), so the place is not part of it."""
    c = _Canvas(m)
    _cell(c, lanes, cell, 0.0, x0, lit, selected)
    return "".join(c.out)


def _cell_svg(
    m: Metrics, lanes: tuple[str, ...], cell: Cell, y: float, x0: float, lit: bool, selected: bool
) -> str:
    """One cell's group: its event's classes (what the hover style and the follow script
    find), moved down to its row."""
    a = cell.arrow
    classes = f"ev ev-{a.seq}" + (" current" if lit else "") + (" selected" if selected else "")
    return (
        f'<g class="{classes}" data-kind="{cell.kind}" transform="translate(0 {y:.1f})">'
        f"{_cell_body(m, lanes, cell, x0, lit, selected)}</g>"
    )


def _cell(
    c: _Canvas,
    lanes: tuple[str, ...],
    cell: Cell,
    y: float,
    x0: float,
    lit: bool,
    selected: bool,
) -> None:
    m, a = c.m, cell.arrow
    color = ERROR_COLOR if a.error else PHASE_COLORS[a.phase]
    if a.detail:  # the whole text of a shortened label, on hover
        detail = a.detail if len(a.detail) <= TITLE_MAX else a.detail[: TITLE_MAX - 1] + "…"
        c.out.append(f"<title>{_attr(detail)}</title>")
    xa, xb = _lane_x(x0, cell.lo, m), _lane_x(x0, cell.hi, m)
    size = m.font
    width = max(len(line) for line in cell.lines) * m.char + 10
    if cell.kind == "delta":
        width = len(cell.lines[0]) * m.font * 0.6 + 10
    top = y + 3
    fill = (
        f'fill="{HIGHLIGHT}" fill-opacity="1"'
        if lit
        else f'fill="{SELECTED}" fill-opacity="1"'
        if selected
        else 'fill="#ffffff" fill-opacity="0"'
    )
    if cell.kind == "rejection":
        mid = x0 + m.column_width(len(lanes)) / 2
    elif cell.kind in ("note", "self"):
        mid = xa
    else:
        mid = (xa + xb) / 2
    if cell.kind == "delta":
        # Arguments as they assemble: the text so far, the newest fragment in bold colour.
        c.out.append(
            f'<rect class="bg" x="{mid - width / 2:.1f}" y="{top - 1:.1f}" width="{width:.1f}" '
            f'height="{len(cell.lines) * m.line + 2:.1f}" rx="3" {fill}/>'
        )
        (line,) = cell.lines
        # The fragment is the end of the line: only as much of it as the line shows is made
        # visible (a streamed megabyte is not), and an empty one is no "(empty)" to embolden.
        raw = cell.delta.fragment[-len(line) :] if cell.delta and line else ""
        fragment = safe.visible(raw) if raw else ""
        cut = max(len(line) - len(fragment), 1 if line.startswith("…") else 0)
        c.out.append(
            f'<text class="delta" x="{mid:.1f}" y="{top + size * 0.95:.1f}" '
            f'font-family="{MONO}" font-size="{size:.0f}" fill="#555555" text-anchor="middle">'
            f"{html.escape(line[:cut])}"  # both pieces went through safe.visible
            f'<tspan fill="{color}" font-weight="bold">{html.escape(line[cut:])}</tspan></text>'
        )
        return
    box = (
        'stroke="none"'
        if cell.kind not in ("note", "self")
        else (
            f'stroke="{color if cell.kind == "self" else "#8a8a8a"}" stroke-dasharray='
            f'"{"0" if cell.kind == "self" else "5,4"}" stroke-width="1.5"'
        )
    )
    c.out.append(
        f'<rect class="bg" x="{mid - width / 2:.1f}" y="{top - 2:.1f}" width="{width:.1f}" '
        f'height="{len(cell.lines) * m.line + 6:.1f}" rx="5" {fill} {box}/>'
    )
    bold = lit or a.error or cell.kind == "rejection"
    ink = "#444444" if cell.kind == "note" else color
    c.text(mid, top, cell.lines, ink, size, bold=bold, cls="label")
    if cell.kind in ("arrow", "rejection"):
        y = top + len(cell.lines) * m.line + m.arrow * 0.55
        leftward = a.source != lanes[cell.lo] if cell.kind == "arrow" else True
        reply = a.kind in ("result", "tool_call", "final_answer", "text")
        pen = m.font * (0.22 if lit else 0.13)
        dash = f' stroke-dasharray="{m.font * 0.5:.0f},{m.font * 0.3:.0f}"' if reply else ""
        c.line(xa, y, xb, y, color, f' class="ln" stroke-width="{pen:.1f}"{dash}')
        tip, back = (xa, 1) if leftward else (xb, -1)
        h = m.font * 0.45
        c.out.append(
            f'<polygon class="head" points="{tip:.1f},{y:.1f} {tip + back * h * 1.6:.1f},'
            f'{y - h * 0.7:.1f} {tip + back * h * 1.6:.1f},{y + h * 0.7:.1f}" fill="{color}"/>'
        )
    if cell.kind == "rejection":
        y = top + len(cell.lines) * m.line + m.arrow + 2
        c.text(
            mid,
            y,
            ["■ cycle halted: the vendor refused the request"],
            ERROR_COLOR,
            size,
            bold=True,
            cls="halted",
        )


def to_aligned_svg(
    columns: Sequence[Column],
    style: Style | None = None,
    current_step: int | None = None,
    selected: int | None = None,
    upto_seq: int | None = None,
    only: str | None = None,
) -> str:
    """One SVG of ``columns`` side by side on shared rows, at its natural size in px.

    ``current_step``: that step's arrows are lit; ``selected``: the event with that seq is lit
    in every vendor; ``upto_seq``: only events up to it are drawn (the rows of the others stay,
    empty, so the picture does not move as it is played); ``only``: draw that protocol's
    column alone, still on the rows every column needs (a per-vendor export that lines up
    with the others).
    """
    m = Metrics.of(style or Style())
    pad = m.font * 0.5
    title_h = m.lane_font * 1.6
    heads_y = pad + title_h
    rows, per_col = table(columns, m, heads_y + m.head_h + 8)
    if only is not None:
        keep = [i for i, col in enumerate(columns) if col.protocol == only]
        columns, per_col = [columns[i] for i in keep], [per_col[i] for i in keep]
    bottom = rows[-1].y + rows[-1].height if rows else heads_y + m.head_h + 8
    feet = len(rows) > LONG_ROWS
    lifeline_end = bottom + 6
    height = lifeline_end + (m.head_h + 12 + m.lane_font * 1.4 if feet else 0) + pad
    xs = []
    x = pad
    for col in columns:
        xs.append(x)
        x += m.column_width(len(col.lanes)) + m.col_gap
    width = max(x - m.col_gap + pad, 200)

    c = _Canvas(m)
    seqs = sorted({r.key[0] for r in rows})
    c.out.append(_css(seqs, m))
    c.rect(0, 0, width, height, 'fill="#ffffff"')
    # Phase bands across the whole width, each named at its left edge.
    i = 0
    while i < len(rows):
        j = i
        while (
            j + 1 < len(rows)
            and rows[j + 1].phase == rows[i].phase
            and (rows[j + 1].y == rows[j].y + rows[j].height)
        ):
            j += 1
        phase = rows[i].phase
        band_top = rows[i].y - m.strip
        band_h = rows[j].y + rows[j].height - band_top
        c.rect(0, band_top, width, band_h, f'class="band band-{phase}" fill="{TINTS[phase]}"')
        c.line(0, band_top, width, band_top, PHASE_COLORS[phase], ' stroke-opacity="0.35"')
        c.text(
            pad,
            band_top + 2,
            [PHASE_NAMES[phase]],
            PHASE_COLORS[phase],
            m.font,
            anchor="start",
            bold=True,
            cls="phase",
        )
        if i > 0:  # whose column is whose, once the titles have scrolled away
            for col, x0 in zip(columns, xs, strict=True):
                c.text(
                    x0 + m.column_width(len(col.lanes)) / 2,
                    band_top + 2,
                    [col.title],
                    "#5a6b80",
                    m.font,
                    cls="vendor-tag",
                )
        i = j + 1

    for col, x0, found in zip(columns, xs, per_col, strict=True):
        c.out.append(f'<g class="fd-vendor" data-protocol="{_attr(col.protocol)}">')
        c.text(
            x0 + m.column_width(len(col.lanes)) / 2,
            pad * 0.8,
            [col.title],
            "#1d2733",
            m.lane_font,
            bold=True,
            cls="title",
        )
        _heads(c, col, x0, heads_y)
        halt = next(
            (r for r in rows if found.get(r.key) and found[r.key].kind == "rejection"), None
        )
        end = halt.y + halt.height if halt else lifeline_end
        for k in range(len(col.lanes)):
            lx = _lane_x(x0, k, m)
            c.line(
                lx,
                heads_y + m.head_h,
                lx,
                end,
                "#b8b8b8",
                ' stroke-width="1.2" stroke-dasharray="6,5"',
            )
        if halt is not None and end < lifeline_end:  # nothing after the refusal
            c.rect(
                x0,
                end,
                m.column_width(len(col.lanes)),
                lifeline_end - end,
                'class="after-halt" fill="#f2f2f2" fill-opacity="0.85"',
            )
        for row in rows:
            cell = found.get(row.key)
            if cell is None or (upto_seq is not None and row.key[0] > upto_seq):
                continue
            lit = current_step is not None and cell.arrow.step == current_step
            c.out.append(_cell_svg(m, col.lanes, cell, row.y, x0, lit, selected == row.key[0]))
        if feet and halt is None:  # the heads again, and whose they are, under a long view
            _heads(c, col, x0, lifeline_end + 4)
            c.text(
                x0 + m.column_width(len(col.lanes)) / 2,
                lifeline_end + m.head_h + 8,
                [col.title],
                "#1d2733",
                m.lane_font,
                bold=True,
                cls="title",
            )
        c.out.append("</g>")
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="fd-aligned" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img">'
        + "".join(c.out)
        + "</svg>"
    )
