"""What a room's followers are shown (issue 33 item 4): one picture per pulse for all the
followers of a process, the same a page of one's own would draw, a new one after each Step."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

from flowdebug import protocols
from flowdebug.engine.session.debugger import Session
from flowdebug.store.rooms import Rooms
from flowdebug.store.sessions import open_store
from flowdebug.views import following
from flowdebug.views.debugger import refusals
from flowdebug.views.teaching import picture

NAMES = list(protocols.model_protocols())[:4]


@contextmanager
def room(tmp_path, steps: int) -> Iterator[tuple[Session, Rooms, str]]:
    """The weather scenario stepped ``steps`` times, saved, and its room's code."""
    with open_store(str(tmp_path / "s.db")) as store:
        s = Session.from_scenario("weather")
        for _ in range(steps):
            s.step()
        store.save(s.state)
        rooms = Rooms(store)
        yield s, rooms, rooms.open(s.state.id).code


def test_followers_of_one_pulse_share_one_picture_equal_to_the_sessions_own(tmp_path):
    with room(tmp_path, 3) as (s, rooms, code):
        one = following.followed(rooms, code, NAMES, 12)
        two = following.followed(Rooms(rooms.store), code, NAMES, 12)
        assert two is one
        own = picture(s.state, NAMES, refusals(s.state.conversation, s.state.events, NAMES), 12)
        assert json.loads(one.data) == own.data()
        assert one.pulse.step == 3 and one.state.step == 3


def test_a_step_gives_the_followers_a_new_picture_and_a_lit_event_one_of_its_own(tmp_path):
    with room(tmp_path, 1) as (s, rooms, code):
        before = following.followed(rooms, code, NAMES, None)
        s.step()
        rooms.store.save(s.state)
        after = following.followed(rooms, code, NAMES, None)
        assert after is not before
        assert (before.pulse.step, after.pulse.step) == (1, 2)
        assert len(after.table.rows) > len(before.table.rows)
        first = after.table.rows[0].seq
        mine = following.followed(rooms, code, NAMES, None, selected=first)
        assert mine is not after and mine.table.lit == (first,)
        assert following.followed(rooms, code, NAMES, None) is after


def test_play_beat_shows_the_followers_the_events_up_to_it(tmp_path):
    with room(tmp_path, 3) as (s, rooms, code):
        upto = s.state.events[1].seq
        rooms.beat(code, upto)
        shown = following.followed(rooms, code, NAMES, None)
        assert shown.pulse.beat == upto
        assert [r.seq for r in shown.table.rows] == [e.seq for e in s.state.events[:2]]
