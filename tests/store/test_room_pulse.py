"""A room's pulse shared by the followers of one process (issue 33 item 4): sixty followers
polling cost one read of the database per ``max_age``, not sixty, and still see every save."""

from __future__ import annotations

import threading
import time

import pytest

from flowdebug.engine.session.debugger import Session
from flowdebug.store.rooms import RoomClosed, Rooms
from flowdebug.store.sessions import open_store
from tests.store import test_store_servers as servers

pg_server = servers.pg_server
store_url = servers.store_url


class Reads:
    """The database's transactions, counted."""

    def __init__(self, store):
        self.count, self._transaction, self._lock = 0, store._db.transaction, threading.Lock()
        store._db.transaction = self

    def __call__(self, write: bool = False):
        with self._lock:
            self.count += 1
        return self._transaction(write)


def _room(store) -> tuple[Session, str]:
    s = Session.from_scenario("weather")
    store.save(s.state)
    return s, Rooms(store).open(s.state.id).code


def test_sixty_followers_polling_at_once_read_the_pulse_once(store_url):
    with open_store(store_url) as store:
        _, code = _room(store)
        rooms = Rooms(store)
        reads = Reads(store)
        start = threading.Barrier(60)
        keys = []

        def poll():
            start.wait()
            keys.append(rooms.pulse(code, max_age=60.0).key)

        threads = [threading.Thread(target=poll) for _ in range(60)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert reads.count == 1
        assert len(keys) == 60 and len(set(keys)) == 1


def test_a_shared_pulse_sees_a_save_once_it_is_older_than_max_age(store_url):
    with open_store(store_url) as store:
        s, code = _room(store)
        rooms = Rooms(store)
        first = rooms.pulse(code, max_age=0.2)
        s.step()
        store.save(s.state)
        assert rooms.pulse(code, max_age=0.2).key == first.key  # within the age: as read
        assert rooms.pulse(code).step == 1  # max_age 0 reads now
        time.sleep(0.25)
        moved = rooms.pulse(code, max_age=0.2)
        assert (moved.session_revision, moved.step) == (first.session_revision + 1, 1)


def test_a_closed_room_ends_a_shared_pulse_within_max_age(store_url):
    with open_store(store_url) as store:
        _, code = _room(store)
        rooms = Rooms(store)
        rooms.pulse(code, max_age=0.2)
        rooms.close(code)
        with pytest.raises(RoomClosed, match="closed"):
            rooms.pulse(code)
        time.sleep(0.25)
        with pytest.raises(RoomClosed, match="closed"):
            rooms.pulse(code, max_age=0.2)


def test_an_expired_room_is_refused_even_from_a_fresh_shared_pulse(store_url):
    with open_store(store_url) as store:
        _, code = _room(store)
        rooms = Rooms(store)
        pulse = rooms.pulse(code, max_age=60.0)
        assert pulse.step == 0
        with pytest.raises(RoomClosed, match="expired"):
            rooms.pulse(code, now=time.time() + 13 * 3600, max_age=60.0)
