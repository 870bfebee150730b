"""The aligned comparison view: every chosen vendor's lanes on shared rows, one SVG.

What the Debugger page shows by default: the same event on the same row for every vendor,
labelled in that vendor's terms, a refusal acted out in the vendor that refuses, and (when
the model's turn was streamed) each vendor's argument deltas under the call they carry.
Per-vendor exports (SVG, PNG through graphviz, Mermaid) keep the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from flowdebug import protocols
from flowdebug.engine.session.session_state import SessionState
from flowdebug.engine.tracing.trace import Rejection, TraceEvent, lanes, sequence, shorten
from flowdebug.render import safe, to_dot, to_mermaid
from flowdebug.render.aligned import Column, Delta, Metrics, dot_rows, table
from flowdebug.render.aligned_svg import to_aligned_svg
from flowdebug.render.dot import Style
from flowdebug.views.streams import stream_deltas

WINDOW = 30  # events drawn by default (the weather cycle has 13); long sessions show a window
# around the lit step. Each event is about 40 SVG elements across six vendors: the browser
# lays out and paints them at every Step.

_Deltas = tuple[tuple[int, tuple[Delta, ...]], ...]


class Events(tuple):
    """Trace events hashed by what a graph shows, so drawings are cached per trace."""

    def _key(self) -> tuple:
        return tuple(
            (e.seq, e.step, e.kind, e.label, e.error, e.call_id, e.source, e.target) for e in self
        )

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Events) and self._key() == other._key()


@lru_cache(maxsize=256)
def _column(protocol: str, events: Events, rejection: Rejection | None, deltas: _Deltas) -> Column:
    return Column(
        protocol,
        protocols.get(protocol).title,
        tuple(lanes(protocol)),
        tuple(sequence(list(events), protocol, rejection)),
        dict(deltas),
    )


@lru_cache(maxsize=64)
def _svg(
    columns: tuple[Column, ...],
    style: Style,
    current: int | None,
    selected: int | None,
    upto: int | None,
    only: str | None = None,
) -> str:
    return to_aligned_svg(columns, style, current, selected, upto, only)


@dataclass(frozen=True, eq=False)
class AlignedView:
    """The aligned SVG and what the page says around it; per-vendor exports on demand."""

    svg: str
    columns: tuple[Column, ...]
    style: Style
    events: tuple[tuple[int, str], ...]  # (seq, what it is) of the events drawn, to select one
    hidden: int  # events outside the window
    refusals: tuple[tuple[str, str], ...]  # (protocol, the sentence saying it refuses, whole)
    streamed: bool

    def export_svg(self, protocol: str) -> str:
        """``protocol``'s column alone, on the rows every vendor needs."""
        return _svg(self.columns, self.style, None, None, None, protocol)

    def export_dot(self, protocol: str) -> str:
        """``protocol``'s graph as DOT with the aligned rows (empty where others need one)."""
        col = next(c for c in self.columns if c.protocol == protocol)
        rows, _ = table(self.columns, Metrics.of(self.style), 0)
        return to_dot(
            list(col.arrows), list(col.lanes), col.title, style=Style(), rows=dot_rows(col, rows)
        )

    def export_mermaid(self, protocol: str) -> str:
        """``protocol``'s sequence as Mermaid, the same arrows in the same order."""
        col = next(c for c in self.columns if c.protocol == protocol)
        return to_mermaid(list(col.arrows), list(col.lanes), col.title)


def window_of(
    events: Sequence[TraceEvent], window: int | None, selected: int | None
) -> tuple[int, int]:
    """The slice ``[lo, hi)`` of ``events`` drawn: all of them, the last ``window``, or
    ``window`` centred on the selected event."""
    n = len(events)
    if window is None or n <= window:
        return 0, n
    at = None
    if selected is not None:  # no event picked: no need to look through a long trace
        at = next((i for i, e in enumerate(events) if e.seq == selected), None)
    lo = n - window if at is None else min(max(at - window // 2, 0), n - window)
    return lo, lo + window


def aligned(
    state: SessionState,
    names: Sequence[str],
    refused: dict[str, Rejection],
    style: Style | None = None,
    window: int | None = WINDOW,
    selected: int | None = None,
    upto_seq: int | None = None,
    stream: bool = False,
) -> AlignedView:
    """The aligned view of ``state`` for the protocols ``names``.

    ``refused`` (see :func:`flowdebug.views.debugger.refusals`): a vendor that refuses a
    request is drawn up to its refusal and halts there. ``window``: events drawn (None: all);
    ``selected``: an event's seq, lit in every vendor and the window's centre; ``upto_seq``:
    draw only up to that event (Play); ``stream``: show each vendor's argument deltas.
    """
    style = style or Style()
    events = state.events
    lo, hi = window_of(events, window, selected)
    shown = events[lo:hi]
    first = shown[0].seq if shown else 0
    columns = []
    for name in names:
        rejection = refused.get(name)
        mine = list(shown)
        if rejection is not None:
            mine = [e for e in mine if e.seq <= rejection.seq]
            if rejection.seq < first:  # refused before the window: its refusal still shows
                mine = [e for e in events if e.seq == rejection.seq]
        deltas: _Deltas = ()
        if stream:
            deltas = tuple(sorted(stream_deltas(state.conversation, mine, name).items()))
        columns.append(_column(name, Events(mine), rejection, deltas))
    current = state.step if events and events[-1].step == state.step else None
    svg = _svg(tuple(columns), style, current, selected, upto_seq)
    choices = tuple(
        (e.seq, f"{e.seq} · {e.phase} · {safe.visible(shorten(e.label, 48))}")
        for e in shown
        if e.kind != "discover" or "mcp" in names
    )
    sentences = tuple(
        (
            name,
            f"{protocols.get(name).title} refuses this request (HTTP {r.status}), so its cycle "
            f"stops: {shorten(r.message, 1000)}",
        )
        for name, r in refused.items()
        if name in names
    )
    return AlignedView(
        svg,
        tuple(columns),
        style,
        choices,
        len(events) - len(shown),
        sentences,
        stream and any(c.deltas for c in columns),
    )
