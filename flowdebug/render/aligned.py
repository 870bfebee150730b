"""The row table of the aligned view: every vendor's arrows on shared rows.

A row is keyed by the canonical trace event it draws (``Arrow.seq``) plus the extra rows some
vendors need: the note before a parallel batch, the deltas of a streamed call, a rejection. A
row exists for every vendor if any vendor needs it (that vendor stretches its row for
everyone), and a row is as tall as its tallest cell. :mod:`flowdebug.render.aligned_svg`
draws the table; :func:`dot_rows` gives the DOT export the same rows.

Layout is linear in the number of arrows: one pass builds the cells, one sort orders the keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from flowdebug.engine.tracing.trace import LANES, Arrow, Lane, Phase
from flowdebug.render import safe
from flowdebug.render.dot import Style, wrap

# A row's key: (event seq, what, k). ``what`` orders the rows of one event: the batch note
# above its first call, the event, the call's stream deltas under it, a refusal last.
NOTE, EVENT, DELTA, REJECT = 0, 1, 2, 3
RowKey = tuple[int, int, int]
CellKind = Literal["arrow", "self", "note", "delta", "rejection"]

LONG_ROWS = 8  # rows beyond which the lane heads are repeated at the bottom
CHAR = 0.6  # average advance of a character, in ems (Helvetica; monospace is exactly 0.6)


@dataclass(frozen=True)
class Delta:
    """One streamed fragment of a call's arguments, and the arguments so far."""

    fragment: str
    text: str


@dataclass(frozen=True, eq=False)  # hashed by identity: views cache one per trace
class Column:
    """One vendor in the aligned view: its lanes and its arrows (from
    :func:`flowdebug.engine.tracing.trace.sequence`), and per ``tool_call`` arrow seq the deltas its
    stream carried the arguments in (empty when the turn was not streamed)."""

    protocol: str
    title: str
    lanes: tuple[Lane, ...]
    arrows: tuple[Arrow, ...]
    deltas: Mapping[int, tuple[Delta, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Cell:
    """What one vendor draws on one row: ``lines`` of label between ``lo`` and ``hi`` (lane
    indexes; equal for a note on one lane)."""

    kind: CellKind
    arrow: Arrow
    lines: tuple[str, ...]
    lo: int
    hi: int
    delta: Delta | None = None


@dataclass(frozen=True)
class Row:
    """One shared row: where it starts, how tall it is, and which phase it belongs to."""

    key: RowKey
    phase: Phase
    y: float
    height: float
    lines: int  # the tallest cell's label lines (the DOT export's row gap)


@dataclass(frozen=True)
class Metrics:
    """Sizes in px derived from a :class:`Style`: one scale for every vendor."""

    font: float
    lane_font: float
    line: float
    char: float
    head_w: float
    head_h: float
    gap: float  # between two lanes
    col_gap: float  # between two vendors
    strip: float  # a phase band's name strip
    arrow: float  # room under a label for its arrow

    @classmethod
    def of(cls, style: Style) -> Metrics:
        """Metrics for ``style``; lanes wide enough for a label of ``style.wrap`` characters."""
        font, lane_font = float(style.font), float(style.lane_font)
        char = font * CHAR
        head_w = max(len(name) for name in LANES.values()) * lane_font * 0.58 + 14
        gap = max(head_w + 12, style.wrap * char + 18)
        return cls(
            font,
            lane_font,
            round(font * 1.25, 2),
            char,
            head_w,
            lane_font * 2.1,
            gap,
            font * 1.2,
            font * 1.6,
            font * 0.9,
        )

    def column_width(self, lanes: int) -> float:
        """A vendor's width with ``lanes`` lanes."""
        return self.head_w + (lanes - 1) * self.gap

    def chars(self, width: float) -> int:
        """Characters of label that fit in ``width`` px."""
        return max(int((width - 12) / self.char), 6)


def _group(a: Arrow) -> str | None:
    if a.batch_size > 1 and a.kind == "tool_call":
        return "calls"
    if a.batch_size > 1 and a.kind == "dispatch":
        return "execution"
    return None


def note_caption(group: str, size: int) -> str:
    """The text of a parallel batch's note row."""
    return f"one response · {size} calls" if group == "calls" else f"{size} calls run in parallel"


# Labels up to this long have their lines remembered (a Step draws every vendor's window of
# cells again, and all but the new ones wrap as they did); a longer one is wrapped each time.
# At most 2,048 of them: a few MB whatever a tool or an import names, and a server's memory
# stops growing once the cache is full (a long session's labels are all new: call ids).
_REMEMBERED = 500


@lru_cache(maxsize=2048)
def _wrapped(label: str, width: int, max_lines: int) -> tuple[str, ...]:
    return tuple(wrap(safe.visible(label), width, max_lines))


def label_lines(label: str, width: int, max_lines: int) -> tuple[str, ...]:
    """``label`` made visible and wrapped to ``max_lines`` lines of ``width`` characters."""
    if len(label) <= _REMEMBERED:
        return _wrapped(label, width, max_lines)
    return tuple(wrap(safe.visible(label), width, max_lines))


def cells(col: Column, m: Metrics) -> dict[RowKey, Cell]:
    """Every row ``col`` draws on, with what it draws there."""
    order = {lane: i for i, lane in enumerate(col.lanes)}
    last = len(col.lanes) - 1
    out: dict[RowKey, Cell] = {}
    seen: set[tuple[int | None, str]] = set()
    for a in col.arrows:
        src, dst = order[a.source], order[a.target]
        lo, hi = min(src, dst), max(src, dst)
        if a.kind == "rejection":
            # The vendor's refusal gets the vendor's whole width, so its message keeps its words.
            lines = label_lines(a.label, m.chars(m.column_width(last + 1)), 4)
            out[(a.seq, REJECT, 0)] = Cell("rejection", a, lines, lo, hi)
            continue
        group = _group(a)
        if group and (a.batch, group) not in seen:
            seen.add((a.batch, group))
            lane = order["model"] if group == "calls" else src
            caption = note_caption(group, a.batch_size)
            lines = label_lines(caption, m.chars(m.gap * 1.6), 2)
            out[(a.seq, NOTE, 0)] = Cell("note", a, lines, lane, lane)
        if lo == hi:  # a lane acting alone (the runtime refusing a call): a note on it
            lines = label_lines(a.label, m.chars(m.gap * 1.3), 3)
            out[(a.seq, EVENT, 0)] = Cell("self", a, lines, lo, hi)
        else:
            lines = label_lines(a.label, m.chars((hi - lo) * m.gap), 3)
            out[(a.seq, EVENT, 0)] = Cell("arrow", a, lines, lo, hi)
        for k, d in enumerate(col.deltas.get(a.seq, ()) if a.kind == "tool_call" else ()):
            tail = delta_lines(d, m.chars(m.gap * 2.2) * 5 // 6)  # monospace is wider
            out[(a.seq, DELTA, k)] = Cell("delta", a, tail, lo, hi, d)
    return out


def delta_lines(d: Delta, width: int) -> tuple[str, ...]:
    """The arguments so far on one line: their tail when longer (the fragment just added is
    at the end, and the rows above showed the head)."""
    text = safe.visible(d.text) if d.text else ""
    if len(text) > width:
        text = "…" + text[-(width - 1) :]
    return (text,)


def cell_height(c: Cell, m: Metrics) -> float:
    """The px a cell needs: its label lines, and room for its arrow or box."""
    text = len(c.lines) * m.line
    match c.kind:
        case "delta":
            return text + 4
        case "note" | "self":
            return text + 14
        case "rejection":
            return text + m.arrow + m.line + 8  # and the "halted" line under it
    return text + m.arrow + 6


def table(
    columns: Sequence[Column], m: Metrics, top: float
) -> tuple[list[Row], list[dict[RowKey, Cell]]]:
    """The shared rows (with phase strips before each phase run) starting at ``top`` px,
    and each column's cells."""
    per_col = [cells(c, m) for c in columns]
    phase_of: dict[RowKey, Phase] = {}
    tallest: dict[RowKey, float] = {}
    lines: dict[RowKey, int] = {}
    for found in per_col:
        for key, c in found.items():
            phase_of.setdefault(key, c.arrow.phase)
            tallest[key] = max(tallest.get(key, 0.0), cell_height(c, m))
            lines[key] = max(lines.get(key, 0), len(c.lines))
    rows: list[Row] = []
    y = top
    phase: Phase | None = None
    for key in sorted(tallest):
        if phase_of[key] != phase:
            phase = phase_of[key]
            y += m.strip
        rows.append(Row(key, phase, y, tallest[key] + 6, lines[key]))
        y += tallest[key] + 6
    return rows, per_col


def dot_rows(col: Column, shared: Sequence[Row]) -> list[tuple[str, Arrow | None, int]]:
    """``col``'s rows for the DOT export, aligned to ``shared``: ``(what, arrow, lines)`` with
    what ``arrow``, ``self``, ``calls``/``execution`` (a batch note), ``rejection`` or ``empty``
    (a row another vendor needs), and the row's height in label lines."""
    m = Metrics.of(Style())
    mine = cells(col, m)
    out: list[tuple[str, Arrow | None, int]] = []
    for row in shared:
        c = mine.get(row.key)
        if c is None or c.kind == "delta":
            out.append(("empty", None, max(row.lines, 1)))
        elif c.kind == "note":
            out.append((_group(c.arrow) or "calls", c.arrow, max(row.lines, 1)))
        elif c.kind == "rejection":
            out.append(("arrow", c.arrow, max(row.lines, 1)))
        else:
            out.append((c.kind, c.arrow, max(row.lines, 1)))
    return out
