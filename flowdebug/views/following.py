"""What a room's follower is shown, made once per pulse per process and shared by its followers.

Sixty attendees following one room on one app server all draw the same step: the followed
session (:meth:`flowdebug.store.rooms.Rooms.follow` reads it once per pulse) and the same
teaching picture. :func:`followed` builds the picture and its JSON once per pulse and set of
vendors, so a Step costs the server one picture, not sixty; an attendee who lit an event of
their own (a click on a row) gets a picture of their own.

The Room page does not use it yet: with it, follower pages in Chromium now and then lost
everything above the picture after a Step (1 run of 5 with 8 followers; never in 6 runs
without), not understood yet. ``bench/room_load.py --shared`` measures it.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from flowdebug.engine.session.session_state import SessionState
from flowdebug.engine.tracing.trace import Rejection
from flowdebug.store.rooms import Pulse, Rooms
from flowdebug.views.debugger import refusals
from flowdebug.views.teaching import Picture, picture

POLL = 0.5  # seconds between a follower's checks of the room's pulse


@dataclass(frozen=True)
class Followed:
    """A room's current step as its followers draw it. Shared: treat it as frozen."""

    state: SessionState
    pulse: Pulse
    refused: dict[str, Rejection]
    table: Picture
    data: bytes  # the table as the picture component takes it (see component_data)


def component_data(table: Picture) -> bytes:
    """The picture's table as compact JSON bytes for the component. Bytes, not the dict nor a
    string: Streamlit looks for dataframes in a dict's values (two thirds of the picture's
    server time in a room of 30), and asking whether a string is one imports pandas and
    pyarrow (70 MB of the server's memory); bytes it passes as they are."""
    return json.dumps(table.data(), ensure_ascii=False, separators=(",", ":")).encode()


# (store, room, pulse, vendors, window, lit event) → what the followers draw.
_SHOWN: OrderedDict[tuple[object, ...], Followed] = OrderedDict()
_BUILDING = threading.Lock()  # one picture built at a time: the others wait and take it
KEEP = 32  # pictures kept: a few rooms' current steps and the events their attendees lit


def followed(
    rooms: Rooms,
    code: str,
    names: Sequence[str],
    window: int | None,
    selected: int | None = None,
    max_age: float = 0.0,
    drawn: tuple[int, int] | None = None,
) -> Followed:
    """Room ``code``'s current step for the vendors ``names``, its picture cut to ``window``
    (``selected``: the event this follower lit, else the step's own). Raises
    :class:`~flowdebug.store.rooms.RoomClosed` once the room is over.

    ``max_age``: as :meth:`~flowdebug.store.rooms.Rooms.pulse`, for a follower whose poll saw
    the shared pulse move from ``drawn`` (the pulse key it last drew): the page's rerun then
    takes that pulse rather than read it again. While the shared pulse still says ``drawn``
    (the run is a click, or the room changed in the last ``max_age``), it is read afresh."""
    if drawn is not None and max_age > 0 and rooms.pulse(code, max_age=max_age).key == drawn:
        max_age = 0.0
    state, pulse = rooms.follow(code, max_age=max_age)
    key = (rooms.store.url, code, pulse.key, tuple(names), window, selected)
    with _BUILDING:
        shown = _SHOWN.get(key)
        if shown is None:
            refused = refusals(state.conversation, state.events, names)
            table = picture(state, names, refused, window=window, selected=selected,
                            upto_seq=pulse.beat)  # fmt: skip
            shown = Followed(state, pulse, refused, table, component_data(table))
            _SHOWN[key] = shown
            while len(_SHOWN) > KEEP:
                _SHOWN.popitem(last=False)
        else:
            _SHOWN.move_to_end(key)
    return shown
