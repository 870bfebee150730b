"""The teaching picture's bytes, kept per state and view (flowdebug.views.teaching_payload)."""

from __future__ import annotations

import json

from flowdebug import protocols
from flowdebug.engine.execution.faults import parse_fault
from flowdebug.engine.session.debugger import Session
from flowdebug.views import teaching
from flowdebug.views.debugger import refusals
from flowdebug.views.teaching_payload import drawn

NAMES = list(protocols.PROTOCOLS)


def _stepped(n: int) -> Session:
    session = Session.from_scenario("weather")
    for _ in range(n):
        session.step()
    return session


def test_the_same_state_and_view_get_the_same_bytes_without_building_them_again():
    state = _stepped(4).state
    first = drawn(state, NAMES, 30)
    again = drawn(state, NAMES, 30)
    assert again is first
    assert again.data is first.data


def test_the_bytes_are_the_table_the_picture_builds_for_that_view():
    state = _stepped(4).state
    seq = state.events[1].seq
    made = drawn(state, NAMES, 30, selected=seq)
    refused = refusals(state.conversation, state.events, NAMES)
    table = teaching.picture(state, NAMES, refused, window=30, selected=seq)
    assert json.loads(made.data) == table.data()
    assert made.data.decode().count('"seq":') == len(state.events)
    assert json.loads(made.data)["lit"] == [seq]


def test_a_step_an_undo_a_pick_or_a_play_beat_gets_the_picture_of_what_it_shows():
    session = _stepped(3)
    before = drawn(session.state, NAMES, 30)
    session.step()
    after = drawn(session.state, NAMES, 30)
    assert len(json.loads(after.data)["rows"]) > len(json.loads(before.data)["rows"])
    session.undo()
    assert drawn(session.state, NAMES, 30).data == before.data
    first = session.state.events[0].seq
    assert json.loads(drawn(session.state, NAMES, 30, selected=first).data)["lit"] == [first]
    played = json.loads(drawn(session.state, NAMES, 30, upto_seq=first).data)
    assert [r["seq"] for r in played["rows"]] == [first]
    fewer = json.loads(drawn(session.state, NAMES[:2], 30).data)
    assert [v for v, _ in fewer["vendors"]] == NAMES[:2]


def test_a_refused_request_is_named_with_the_picture_that_shows_it():
    """A result dropped from the history: some vendors refuse the next request."""
    session = Session.from_scenario("weather")
    session.set_faults([parse_fault("drop_result@#1")])
    session.run()
    made = drawn(session.state, NAMES, None)
    assert made.refused
    assert made.refused == refusals(session.state.conversation, session.state.events, NAMES)
    errors = [c for r in json.loads(made.data)["rows"] for c in r["cells"] if c and c["error"]]
    assert errors
