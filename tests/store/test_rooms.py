"""Rooms (issue 33): a session's followers, its questions, on SQLite and PostgreSQL."""

from __future__ import annotations

import math
import time
from collections import Counter

import pytest

from flowdebug import protocols
from flowdebug.engine.session.debugger import Session
from flowdebug.errors import UsageError
from flowdebug.exchange.exports import Trace
from flowdebug.store.owners import NotOwner
from flowdebug.store.rooms import (
    CODE_BYTES,
    ENTROPY_BITS,
    MAX_AGE,
    RoomClosed,
    Rooms,
    new_code,
    normal_code,
)
from flowdebug.store.sessions import open_store
from flowdebug.views import predictions
from tests.store import test_store_servers as servers

# The same database fixtures as the store's own tests: SQLite and a real PostgreSQL.
pg_server = servers.pg_server
store_url = servers.store_url


def _saved(store, owner=None) -> Session:
    s = Session.from_scenario("weather")
    store.save(s.state, owner=owner)
    return s


def test_a_room_code_carries_at_least_40_random_bits():
    assert ENTROPY_BITS >= 40
    codes = [new_code() for _ in range(2000)]
    assert len(set(codes)) == len(codes)
    assert all(len(c) == CODE_BYTES and normal_code(c.lower()) == c for c in codes)
    # Every position is spread over the 32 letters (a fixed or counted code is not).
    letters = Counter(ch for c in codes for ch in c)
    assert len(letters) == 32
    per_letter = len(codes) * CODE_BYTES / 32
    assert max(letters.values()) < per_letter * 1.3
    assert CODE_BYTES * math.log2(32) == ENTROPY_BITS


def test_a_typed_code_with_dashes_and_lower_case_is_read_and_a_wrong_one_refused():
    code = new_code()
    assert normal_code(f" {code[:5].lower()}-{code[5:]} ") == code
    with pytest.raises(RoomClosed):
        normal_code("0000")


def test_every_save_of_the_instructors_session_moves_the_followers_pulse(store_url):
    with open_store(store_url) as store:
        s = _saved(store)
        rooms = Rooms(store)
        room = rooms.open(s.state.id)
        assert rooms.open(s.state.id).code == room.code  # one open room per session
        first = rooms.pulse(room.code)
        s.step()
        store.save(s.state)
        after_step = rooms.pulse(room.code)
        assert after_step.session_revision == first.session_revision + 1
        assert after_step.step == 1
        s.undo()
        store.save(s.state)
        assert rooms.pulse(room.code).step == 0
        rooms.beat(room.code, 2)
        beat = rooms.pulse(room.code)
        assert (beat.beat, beat.room_revision) == (2, first.room_revision + 1)
        rooms.beat(room.code, 2)  # the same beat again changes nothing
        assert rooms.pulse(room.code).key == beat.key


def test_two_stores_on_one_database_see_the_same_room(store_url):
    with open_store(store_url) as a, open_store(store_url) as b:
        s = _saved(a)
        room = Rooms(a).open(s.state.id)
        followed, pulse = Rooms(b).follow(room.code)
        assert followed.id == s.state.id and pulse.step == 0
        s.step()
        a.save(s.state)
        assert Rooms(b).pulse(room.code).step == 1
        assert Rooms(b).follow(room.code)[0].model_dump_json() == s.state.model_dump_json()
        Rooms(a).close(room.code)
        with pytest.raises(RoomClosed, match="closed"):
            Rooms(b).pulse(room.code)


def test_a_follower_cannot_write_into_the_instructors_session(tmp_path):
    with open_store(str(tmp_path / "s.db")) as store:
        s = _saved(store, owner="instructor")
        rooms = Rooms(store)
        room = rooms.open(s.state.id, owner="instructor")
        copy, _ = rooms.follow(room.code)
        copy.status_text = "hijacked"
        with pytest.raises(NotOwner):
            store.save(copy, owner="attendee")
        with pytest.raises(NotOwner):
            rooms.close(room.code, owner="attendee")
        with pytest.raises(NotOwner):
            rooms.ask(room.code, predictions.make("next_tool", s.state, []), owner="attendee")
        with pytest.raises(NotOwner):
            rooms.open(s.state.id, owner="attendee")
        assert store.load(s.state.id).status_text != "hijacked"


def test_closing_a_room_stops_its_followers_and_a_new_room_gets_a_new_code(store_url):
    with open_store(store_url) as store:
        s = _saved(store)
        rooms = Rooms(store)
        room = rooms.open(s.state.id)
        rooms.close(room.code)
        with pytest.raises(RoomClosed, match="closed this room"):
            rooms.follow(room.code)
        assert rooms.of_session(s.state.id) is None
        assert rooms.open(s.state.id).code != room.code


def test_a_room_expires_with_its_session_and_after_its_max_age(store_url):
    with open_store(store_url) as store:
        s = _saved(store)
        rooms = Rooms(store)
        room = rooms.open(s.state.id)
        with pytest.raises(RoomClosed, match="expired"):
            rooms.pulse(room.code, now=time.time() + MAX_AGE + 1)
        store.delete(s.state.id)
        with pytest.raises(RoomClosed, match="ended"):
            rooms.pulse(room.code)


def test_try_it_yourself_forks_the_followed_step_into_the_attendees_own_session(tmp_path):
    with open_store(str(tmp_path / "s.db")) as store:
        s = _saved(store, owner="instructor")
        for _ in range(3):
            s.step()
        store.save(s.state, owner="instructor")
        rooms = Rooms(store)
        room = rooms.open(s.state.id, owner="instructor")
        mine = rooms.fork(room.code, owner="attendee")
        assert mine.id != s.state.id
        assert mine.conversation.messages == s.state.conversation.messages
        info = store.info(mine.id, owner="attendee")
        assert info.parent == s.state.id
        with pytest.raises(NotOwner):
            store.info(mine.id, owner="instructor")
        forked = Session(store.load(mine.id, owner="attendee"), s.player)
        forked.step()  # the attendee steps alone; the instructor's session stays where it was
        store.save(forked.state, owner="attendee")
        assert rooms.pulse(room.code).step == 3


def test_a_next_tool_question_is_tallied_revealed_by_the_step_and_exported(store_url):
    with open_store(store_url) as store:
        s = _saved(store)
        rooms = Rooms(store)
        room = rooms.open(s.state.id)
        s.step()  # declaration
        store.save(s.state)
        q = rooms.ask(room.code, predictions.make("next_tool", s.state, ["anthropic"]))
        assert q.choices == ("get_weather", predictions.NO_TOOL)
        rooms.answer(room.code, q.index, "ann", "get_weather")
        rooms.answer(room.code, q.index, "bob", predictions.NO_TOOL)
        rooms.answer(room.code, q.index, "bob", "get_weather")  # changed their mind
        assert rooms.tally(s.state.id, q.index) == {"get_weather": 2, predictions.NO_TOOL: 0}
        assert predictions.settle(rooms, s.state) is None  # not stepped yet
        s.step()  # the model's turn
        store.save(s.state)
        revealed = predictions.settle(rooms, s.state)
        assert revealed is not None and revealed.answers == ("get_weather",) and revealed.closed
        with pytest.raises(UsageError, match="closed"):
            rooms.answer(room.code, q.index, "cat", "get_weather")
        exported = rooms.export(s.state.id)
        assert exported[0]["answers"] == ["get_weather"]
        assert exported[0]["tally"] == {"get_weather": 2, predictions.NO_TOOL: 0}
        text = predictions.trace_with_questions(rooms, s.state, name="workshop")
        read = Trace.model_validate_json(text)
        assert read.metadata.model_extra == {"predictions": exported}
        assert read.conversation == s.state.conversation


def test_a_result_field_question_offers_the_vendors_own_field_against_the_others():
    s = Session.from_scenario("weather")
    for vendor in protocols.model_protocols():
        q = predictions.make("result_field", s.state, [vendor])
        assert q.answers is not None and len(q.answers) == 1
        right = q.answers[0]
        assert right in predictions.field_names(vendor)
        wrong = [c for c in q.choices if c != right]
        assert len(wrong) == 3
        assert all(c not in predictions.field_names(vendor) for c in wrong)


def test_a_refusal_question_lists_the_vendors_shown_and_reveals_who_refuses(tmp_path):
    with open_store(str(tmp_path / "s.db")) as store:
        s = _saved(store)
        rooms = Rooms(store)
        room = rooms.open(s.state.id)
        shown = list(protocols.model_protocols())[:2]
        q = rooms.ask(room.code, predictions.make("refusals", s.state, shown))
        assert q.choices == (*shown, predictions.NONE_REFUSES)
        s.step()
        store.save(s.state)
        revealed = predictions.settle(rooms, s.state)
        assert revealed is not None and revealed.answers == (predictions.NONE_REFUSES,)


def test_answers_are_refused_once_the_room_is_closed(tmp_path):
    with open_store(str(tmp_path / "s.db")) as store:
        s = _saved(store)
        rooms = Rooms(store)
        room = rooms.open(s.state.id)
        q = rooms.ask(room.code, predictions.make("next_tool", s.state, []))
        rooms.close(room.code)
        with pytest.raises(RoomClosed):
            rooms.answer(room.code, q.index, "ann", "get_weather")
        assert rooms.questions(s.state.id)[0].prompt == q.prompt  # kept with the session


def test_followers_of_one_pulse_share_one_read_and_a_save_gives_a_new_one(tmp_path):
    with open_store(str(tmp_path / "s.db")) as store:
        s = _saved(store)
        rooms = Rooms(store)
        room = rooms.open(s.state.id)
        first, _ = rooms.follow(room.code)
        assert rooms.follow(room.code)[0] is first
        s.step()
        store.save(s.state)
        again, pulse = rooms.follow(room.code)
        assert again is not first and again.step == pulse.step == 1
