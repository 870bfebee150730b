"""A room in Chromium (issue 33's Done-when): one instructor and two attendees, one of them on a
second app server sharing the PostgreSQL database. The attendees see each Step within a
second, both answer a prediction that the next Step reveals, one forks and steps alone while
the other keeps following, then goes back to the room."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from flowdebug.store.rooms import Rooms
from flowdebug.store.sessions import open_store
from tests.e2e.app_server import session_of, wait_idle
from tests.e2e.room_host import open_room
from tests.e2e.test_two_servers import open_page, step

pytestmark = pytest.mark.browser
FOLLOW_MS = 1_000  # an attendee sees a Step within this


def _room_page(context, url: str):
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(url, wait_until="domcontentloaded")
    return page


def _shows_step(page, n: int, timeout: float = 30_000) -> float:
    """Waits until the room page says step ``n``; the seconds it took."""
    t0 = time.perf_counter()
    page.get_by_text(re.compile(rf"^Room [A-Z2-7]{{10}} · .* · step {n}\b")).first.wait_for(
        timeout=timeout
    )
    return time.perf_counter() - t0


def _answer(page, choice: str) -> None:
    page.get_by_text("Predict:").first.wait_for()
    wait_idle(page)  # the run the question asked for, drawn: a pick made during it was lost
    enabled = page.locator(".st-key-fd_room_answer_0 button:not([disabled])").first
    option = page.locator("[data-testid='stRadio'] label").filter(has_text=choice).first
    for _ in range(5):  # a pick made while the page redraws a pulse is drawn again unpicked
        option.click()
        wait_idle(page)
        try:
            enabled.wait_for(timeout=3_000)
            break
        except PlaywrightTimeout:
            continue
    enabled.click()
    page.get_by_text(f"Your answer: {choice}").first.wait_for()


def test_two_attendees_on_two_servers_follow_predict_and_one_tries_alone(shared_pair, browser):
    url_a, url_b, db = shared_pair
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(3)]
    try:
        teacher = open_page(contexts[0], url_a)
        sid = session_of(teacher)
        step(teacher, "the model is asked")
        open_room(teacher)
        room = Rooms(open_store(db)).of_session(sid)
        assert room is not None
        ann = _room_page(contexts[1], f"{url_a}/room?room={room.code}")
        bob = _room_page(contexts[2], f"{url_b}/room?room={room.code}")  # the other server
        _shows_step(ann, 1)
        _shows_step(bob, 1)

        teacher.locator(".st-key-fd_room_ask button").first.click()
        _answer(ann, "get_weather")
        _answer(bob, "no tool: it answers")
        teacher.get_by_text("2 answers").first.wait_for()

        step(teacher, "the model asked for 2 calls")
        delays = [_shows_step(ann, 2, FOLLOW_MS + 500), _shows_step(bob, 2, FOLLOW_MS + 500)]
        print(f"follow delays after the Step (s): {delays}")
        assert max(delays) * 1000 < FOLLOW_MS + 500, delays
        ann.get_by_text("Right: get_weather").first.wait_for()
        bob.get_by_text("the answer: get_weather").first.wait_for()

        # Ann tries it herself: her own session, stepped alone; Bob keeps following.
        ann.locator(".st-key-fd_room_try button").first.click()
        ann.locator(".st-key-step button").first.wait_for()
        mine = session_of(ann)
        assert mine != sid
        step(ann, "2 results, 1 failed")
        with open_store(db) as store:
            assert store.info(sid).step == 2
            assert store.info(mine).step == 3 and store.info(mine).parent == sid
        step(teacher, "2 results, 1 failed")
        _shows_step(bob, 3, FOLLOW_MS + 500)
        ann.locator(".st-key-fd_room_back button").first.click()
        _shows_step(ann, 3)
    finally:
        for c in contexts:
            c.close()
