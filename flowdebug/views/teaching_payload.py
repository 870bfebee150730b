"""The teaching picture as the component receives it: the row table's JSON bytes, kept per
state and view, so a run that changes neither (a Play beat that reveals nothing new, a
click elsewhere on the page, a room's followers drawing one state) sends the same bytes
without building the table or its JSON again.

A state's history is never changed in place, with one exception: a step appends its events
to the new state's list before the state is shown. So a state's picture is named by its
event list and conversation (the objects, held by the entry so that their ids are not
reused while it is here, and the event count), its step (which events are lit) and its tool
names; the view by the vendors, the window, the event picked and how far Play has revealed.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from flowdebug.engine.session.session_state import SessionState
from flowdebug.engine.tracing.trace import Rejection
from flowdebug.views.debugger import refusals
from flowdebug.views.teaching import Picture, picture

SIZE = 64  # entries: a room of 30 with a few views each


@dataclass(frozen=True)
class Drawn:
    """One state's picture for one view: the table (for the exports), its JSON as bytes (for
    the component), and the vendors that refused a request (their message beside it)."""

    table: Picture
    data: bytes
    refused: dict[str, Rejection]


_DRAWN: OrderedDict[tuple[object, ...], tuple[tuple[object, object], Drawn]] = OrderedDict()
# The pages' script threads and the room route's worker threads share it: a lookup and its
# move, an insert and its eviction, each under the lock (the build itself outside it).
_LOCK = threading.Lock()


def drawn(
    state: SessionState,
    names: Sequence[str],
    window: int | None,
    selected: int | None = None,
    upto_seq: int | None = None,
) -> Drawn:
    """The teaching picture of ``state`` for the vendors ``names`` (see
    :func:`flowdebug.views.teaching.picture` for ``window``, ``selected`` and ``upto_seq``),
    built once per state and view."""
    events, conv = state.events, state.conversation
    key = (id(events), len(events), id(conv), state.step, tuple(state.toolset.names),
           tuple(names), window, selected, upto_seq)  # fmt: skip
    with _LOCK:
        hit = _DRAWN.get(key)
        if hit is not None and hit[0][0] is events and hit[0][1] is conv:
            _DRAWN.move_to_end(key)
            return hit[1]
    refused = refusals(conv, events, names)
    table = picture(state, names, refused, window=window, selected=selected, upto_seq=upto_seq)
    # Bytes, not a dict nor a string: Streamlit looks for dataframes in a dict's values, and
    # asking whether a string is one imports pandas and pyarrow; bytes it passes as they are.
    data = json.dumps(table.data(), ensure_ascii=False, separators=(",", ":")).encode()
    out = Drawn(table, data, refused)
    with _LOCK:
        _DRAWN[key] = ((events, conv), out)
        if len(_DRAWN) > SIZE:
            _DRAWN.popitem(last=False)
    return out
