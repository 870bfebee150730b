"""A protocol's sequence as DOT: lanes are columns, time flows down, one row per arrow.

Graphviz has no sequence diagrams, so each lane is a chain of invisible points (its
lifeline) and every arrow joins two points of the same rank. Edges always run left to right
(``dir=back`` for arrows that point left), because dot reorders a rank to make flat edges
point right. Calls of one parallel batch sit in a labelled cluster so they read as parallel.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from flowdebug.engine.tracing.trace import LANES, Arrow, Lane
from flowdebug.render import safe

PHASE_COLORS = {
    "declaration": "#1f5fa8",
    "request": "#7b3fb0",
    "execution": "#1f7a3a",
    "continuation": "#c05a00",
}
ERROR_COLOR = "#d11f1f"
HIGHLIGHT = "#fff0a0"


@dataclass(frozen=True)
class Style:
    """Type sizes; ``presenter`` is for a projector at the back of a room."""

    font: int = 14
    lane_font: int = 16
    penwidth: float = 1.8
    lane_gap: float = 0.35  # inches between lane heads (labels widen it as needed)
    lane_width: float = 1.15
    row_gap: float = 0.32
    wrap: int = 16  # characters per label line

    @classmethod
    def presenter(cls) -> Style:
        """One graph the width of a projected screen."""
        return cls(
            font=22, lane_font=24, penwidth=3.0, lane_gap=1.4, lane_width=2.2, row_gap=0.42, wrap=20
        )

    @classmethod
    def presenter_pair(cls) -> Style:
        """Two or more graphs a row on a projector: larger type in the compact lanes, and
        shorter label lines, so each graph still fits its column when scaled up to it."""
        return cls(font=20, lane_font=20, penwidth=2.4, row_gap=0.36, wrap=11)


def _esc(text: str) -> str:
    """Text made safe inside an HTML-like label or a quoted DOT attribute."""
    return safe.dot(text)


def _width(arrow: Arrow, style: Style) -> int:
    """Characters per line of an arrow's label: a vendor's refusal gets wider lines, so its
    message keeps its words."""
    return style.wrap + 10 if arrow.kind == "rejection" else style.wrap


def wrap(text: str, width: int, max_lines: int = 3) -> list[str]:
    """Break a label into at most ``max_lines`` lines of about ``width`` characters, at spaces
    or after an opening parenthesis; the last line ends in "…" when text is left over.

    Linear in the length of ``text``: only the head that can be shown is looked at (a 1.6 MB
    call id once took seconds when a long word was cut by repeated slicing).
    """
    width = max(width, 2)
    budget = max_lines * (width + 8) + 1
    head = text[: budget * 2]  # whitespace runs collapse below, so keep some slack
    head = " ".join(head.split())
    cut = len(head) > budget or bool(text[budget * 2 :].strip())
    head = head[:budget]
    # Break after a space or an opening parenthesis; a lone separator ("·", "—") stays on the
    # line before it.
    words: list[str] = []
    for w in re.findall(r"[^ (]*\(|[^ (]+ *| +", head):
        if words and w.strip() in ("·", "—", "→", ""):
            words[-1] += w
        else:
            words.append(w)
    lines = [""]
    for w in words:
        if lines[-1] and len(lines[-1]) + len(w.rstrip()) > width:
            lines.append("")
        lines[-1] += w
    out: list[str] = []
    for line in lines:  # a single word longer than the width is cut
        line = line.strip()
        start = 0
        while len(line) - start > width + 8 and len(out) <= max_lines:
            out.append(line[start : start + width])
            start += width
        out.append(line[start:])
        if len(out) > max_lines:
            break
    if len(out) > max_lines or cut:
        out = out[:max_lines]
        out[-1] = out[-1][: width - 1].rstrip() + "…"
    return out or [""]


def _label(arrow: Arrow, current: bool, style: Style) -> str:
    color = ERROR_COLOR if arrow.error else PHASE_COLORS[arrow.phase]
    text = "<BR/>".join(
        _esc(line) for line in wrap(safe.visible(arrow.label), _width(arrow, style))
    )
    weight = f"<B>{text}</B>" if current or arrow.error else text
    bg = f' BGCOLOR="{HIGHLIGHT}"' if current else ""
    return (
        f'<<TABLE BORDER="0" CELLBORDER="0" CELLPADDING="2"{bg}><TR><TD>'
        f'<FONT COLOR="{color}" POINT-SIZE="{style.font}">{weight}</FONT>'
        "</TD></TR></TABLE>>"
    )


LONG_ROWS = 8  # rows beyond which the lane names are repeated at the bottom


def _lane_head(lane: Lane, style: Style) -> str:
    return (
        f'shape=box style="rounded,filled" fillcolor="#eef2f7" color="#5a6b80" '
        f'fontname="Helvetica-Bold" fontsize={style.lane_font} width={style.lane_width} '
        f'height=0.6 label="{LANES[lane]}"'
    )


def _rows(arrows: list[Arrow]) -> list[tuple[str, Arrow]]:
    """Arrows in order, with a note row before each parallel batch."""
    rows: list[tuple[str, Arrow]] = []
    seen: set[tuple[int | None, str]] = set()
    for a in arrows:
        group = "calls" if a.kind == "tool_call" else "execution" if a.kind == "dispatch" else None
        if group and a.batch_size > 1 and (a.batch, group) not in seen:
            seen.add((a.batch, group))
            rows.append((group, a))
        # Something a lane does by itself (the runtime refusing a call) is a note on it.
        rows.append(("self" if a.source == a.target else "arrow", a))
    return rows


def to_dot(
    arrows: list[Arrow],
    lanes: list[Lane],
    title: str = "",
    current_step: int | None = None,
    style: Style | None = None,
    rows: Sequence[tuple[str, Arrow | None, int]] | None = None,
) -> str:
    """The DOT text of one sequence graph. ``current_step`` arrows are highlighted.

    ``rows`` (see :func:`flowdebug.render.aligned.dot_rows`): the rows of an aligned view,
    ``(what, arrow, lines)``, so this graph keeps the rows other vendors need (``empty``
    rows, ``lines`` tall) and its events sit where they sit in the aligned view.
    """
    style = style or Style()
    order = {lane: i for i, lane in enumerate(lanes)}
    out = [
        "digraph sequence {",
        f"  graph [rankdir=TB newrank=true splines=line nodesep={style.lane_gap} "
        f'ranksep={style.row_gap} fontname="Helvetica" fontsize={style.lane_font} '
        f'labelloc=t label="{_esc(title) if title else ""}" bgcolor="white"];',
        '  node [shape=point width=0.03 height=0.03 color="#9a9a9a" label=""];',
        f'  edge [fontname="Helvetica" penwidth={style.penwidth} arrowsize=1.1];',
    ]
    heads = []
    for lane in lanes:
        out.append(f'  "h_{lane}" [{_lane_head(lane, style)}];')
        heads.append(f'"h_{lane}"')
    out.append(f"  {{rank=same; {'; '.join(heads)}}}")
    out.append(f"  {' -> '.join(heads)} [style=invis];")

    shaped: list[tuple[str, Arrow | None, int | None]] = (
        list(rows) if rows is not None else [(w, a, None) for w, a in _rows(arrows)]
    )
    for r, (what, a, _) in enumerate(shaped):
        names = "; ".join(f'"r{r}_{lane}"' for lane in lanes)
        out.append(f"  {{rank=same; {names}}}")
        if what in ("arrow", "empty") or a is None:
            continue
        if what == "self":
            color = ERROR_COLOR if a.error else PHASE_COLORS[a.phase]
            text = "<BR/>".join(_esc(line) for line in wrap(safe.visible(a.label), style.wrap + 6))
            out.append(
                f'  "r{r}_{a.source}" [shape=box style="rounded,filled" fillcolor="#fff5f5" '
                f'color="{color}" fontname="Helvetica" fontsize={style.font} '
                f'fontcolor="{color}" label=<{text}>];'
            )
            continue
        # A note row: the lane that fans out says the batch is parallel.
        lane = "model" if what == "calls" else a.source
        caption = (
            f"one response · {a.batch_size} calls"
            if what == "calls"
            else f"{a.batch_size} calls run in parallel"
        )
        out.append(
            f'  "r{r}_{lane}" [shape=box style="rounded,dashed" color="#8a8a8a" '
            f'fontname="Helvetica-Oblique" fontsize={style.font} fontcolor="#444444" '
            f'label="{_esc(caption)}"];'
        )

    # Lifelines. A row whose label wraps onto several lines sits that many ranks below the
    # row before it: dot does not make room for the labels of flat edges by itself.
    gaps = [
        lines
        if lines is not None
        else len(wrap(safe.visible(a.label), _width(a, style)))
        if what == "arrow" and a is not None
        else 1
        for what, a, lines in shaped
    ]
    # A long graph names its lanes again at the bottom, as sequence diagrams do: the heads
    # have scrolled away by the time a reader gets there.
    feet = len(shaped) > LONG_ROWS
    for lane in lanes:
        out.append(f'  "end_{lane}" [{_lane_head(lane, style)}];' if feet else f'  "end_{lane}";')
        points = [f'"h_{lane}"'] + [f'"r{r}_{lane}"' for r in range(len(shaped))]
        points.append(f'"end_{lane}"')
        for i in range(len(points) - 1):
            gap = gaps[i] if i < len(gaps) else 1
            out.append(
                f"  {points[i]} -> {points[i + 1]} [arrowhead=none style=dashed "
                f'color="#b8b8b8" penwidth=1.2 weight=100 minlen={gap}];'
            )

    for r, (what, a, _) in enumerate(shaped):
        if what != "arrow" or a is None:
            continue
        current = current_step is not None and a.step == current_step
        color = ERROR_COLOR if a.error else PHASE_COLORS[a.phase]
        width = style.penwidth * (2.2 if current else 1.0)
        dash = " style=dashed" if a.kind in ("result", "tool_call", "final_answer", "text") else ""
        # Split a long arrow at every lifeline it crosses: flat edges between neighbouring
        # lanes stay straight, a labelled edge across a lane would bend around it.
        lo, hi = sorted((order[a.source], order[a.target]))
        points = [f'"r{r}_{lanes[i]}"' for i in range(lo, hi + 1)]
        leftward = order[a.source] > order[a.target]
        label_seg = len(points) - 2 if leftward else 0
        for i in range(len(points) - 1):
            head = (i == 0 and leftward) or (i == len(points) - 2 and not leftward)
            direction = ("back" if leftward else "forward") if head else "none"
            label = f" label={_label(a, current, style)}" if i == label_seg else ""
            if label and a.detail:  # the whole text on hover (an SVG <title>)
                tip = safe.dot(a.detail, tooltip=True)
                label += f' tooltip="{tip}" labeltooltip="{tip}"'
            out.append(
                f'  {points[i]} -> {points[i + 1]} [dir={direction} color="{color}" '
                f"penwidth={width:.1f} constraint=false{dash}{label}];"
            )
    out.append("}")
    return "\n".join(out) + "\n"
