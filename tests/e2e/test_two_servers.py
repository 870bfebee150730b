"""Two app servers on one PostgreSQL (issue 13 item 10), in Chromium.

A real PostgreSQL (tests/pgserver.py) and two ``streamlit run`` processes on different ports,
as a load balancer would spread a room over them: a session started on one continues on the
other through its link; writes from both to the same session never overwrite each other (the
stale one is refused with a clear message and the newer steps stay whole); in shared mode the
owner cookie opens the session on both servers and another browser opens it on neither.
The servers (``pair``, ``shared_pair``) are tests/e2e/conftest.py's, which test_room.py shares.
"""

from __future__ import annotations

import re

import pytest

from flowdebug.store.sessions import open_store
from tests.e2e import app_server
from tests.e2e.app_server import session_of, wait_idle
from ui.browser import OWNER_COOKIE

pytestmark = pytest.mark.browser

STALE = "changed in another tab; reload to see the newer steps"
# The weather scenario's phases, as the status line says each one's outcome.
AFTER = [
    "the model is asked",
    "the model asked for 2 calls",
    "2 results, 1 failed",
    "results sent",
    "the cycle is done",
]


def open_page(context, url: str):
    """A new tab on the Debugger at ``url``, once its Step button is drawn."""
    return app_server.open_page(context, url, ready=".st-key-step button")


def step_shown(page) -> int:
    """The step number the control bar shows."""
    text = page.locator(".st-key-fd_controls").inner_text()
    found = re.search(r"step (\d+) · round", text)
    assert found, text
    return int(found.group(1))


def status(page) -> str:
    return " ".join(page.locator("[data-testid='stAlert']").all_inner_texts())


def step(page, expect: str | None = None) -> None:
    page.locator(".st-key-step button").first.click()
    if expect:
        page.locator("[data-testid='stAlert']").filter(has_text=expect).first.wait_for()
    wait_idle(page)


def stored(db: str, sid: str) -> tuple[int, int, list[str]]:
    """What the database holds of ``sid``: its step, its revision and its messages' roles."""
    with open_store(db) as store:
        state, revision = store.load_at(sid)
    return state.step, revision, [m.role for m in state.conversation.messages]


def test_a_session_started_on_one_server_continues_on_the_other(pair, browser):
    url_a, url_b, db = pair
    context = browser.new_context(viewport={"width": 1600, "height": 1200})
    try:
        a = open_page(context, url_a)
        sid = session_of(a)
        step(a, AFTER[0])
        step(a, AFTER[1])
        assert step_shown(a) == 2
        # Its link, opened on the other server, shows the same steps and steps on from there.
        b = open_page(context, f"{url_b}/?session={sid}")
        assert session_of(b) == sid
        assert step_shown(b) == 2 and AFTER[1] in status(b)
        step(b, AFTER[2])  # the execution: one result, one timeout
        assert step_shown(b) == 3
        assert stored(db, sid)[0] == 3
        # Back on the first server: the link shows the other server's step.
        a.goto(f"{url_a}/?session={sid}", wait_until="domcontentloaded")
        a.locator(".st-key-step button").first.wait_for()
        wait_idle(a)
        assert step_shown(a) == 3 and AFTER[2] in status(a)
        step(a, AFTER[3])
        b.reload(wait_until="domcontentloaded")
        b.locator(".st-key-step button").first.wait_for()
        wait_idle(b)
        assert step_shown(b) == 4 and AFTER[3] in status(b)
        step(b, AFTER[4])
        assert stored(db, sid)[0] == 5
        assert stored(db, sid)[2] == ["user", "assistant", "tool", "assistant"]
    finally:
        context.close()


def test_a_stale_write_from_the_other_server_is_refused_and_nothing_is_lost(pair, browser):
    url_a, url_b, db = pair
    context = browser.new_context(viewport={"width": 1600, "height": 1200})
    try:
        a = open_page(context, url_a)
        sid = session_of(a)
        b = open_page(context, f"{url_b}/?session={sid}")
        _, revision, _ = stored(db, sid)
        # A steps first; B's copy is now older than the saved session: its step is refused.
        step(a, AFTER[0])
        step(b)
        assert STALE in status(b)
        assert stored(db, sid)[:2] == (1, revision + 1)
        # B reads the newer steps and goes on from A's step, not from its own.
        b.get_by_role("button", name="Reload the newer steps").click()
        wait_idle(b)
        assert step_shown(b) == 1 and STALE not in status(b)
        step(b, AFTER[1])
        assert stored(db, sid)[:2] == (2, revision + 2)
        # Now A is the stale one.
        step(a)
        assert STALE in status(a)
        a.get_by_role("button", name="Reload the newer steps").click()
        wait_idle(a)
        assert step_shown(a) == 2
        # Both press Step at once: one step is saved, the other refused, nothing mixed.
        a.locator(".st-key-step button").first.click()
        b.locator(".st-key-step button").first.click()
        wait_idle(a)
        wait_idle(b)
        refused = [STALE in status(p) for p in (a, b)]
        assert refused.count(True) == 1, refused
        kept, revision_now, roles = stored(db, sid)
        assert (kept, revision_now) == (3, revision + 3)
        assert roles == ["user", "assistant", "tool"]
        winner = b if refused[0] else a
        assert step_shown(winner) == 3
    finally:
        context.close()


def test_the_owner_cookie_opens_a_session_on_both_servers_and_only_for_its_browser(
    shared_pair, browser
):
    url_a, url_b, db = shared_pair
    alice = browser.new_context(viewport={"width": 1600, "height": 1200})
    bob = browser.new_context(viewport={"width": 1600, "height": 1200})
    try:
        a = open_page(alice, url_a)
        sid = session_of(a)
        step(a, AFTER[0])
        cookies = [c for c in alice.cookies() if c["name"] == OWNER_COOKIE]
        # Cookies belong to a host, not to a port: the one server A set goes to B as well.
        assert len(cookies) == 1 and cookies[0]["domain"] == "127.0.0.1"
        secret = cookies[0]["value"]
        b = open_page(alice, f"{url_b}/?session={sid}")
        assert session_of(b) == sid and "belongs to another browser" not in status(b)
        assert step_shown(b) == 1
        step(b, AFTER[1])
        assert [c["value"] for c in alice.cookies() if c["name"] == OWNER_COOKIE] == [secret]
        with open_store(db) as store:
            assert [i.id for i in store.list(owner=secret)] == [sid]
            assert store.info(sid, owner=secret).step == 2
        # Another browser opens it on neither server, and gets a session of its own instead.
        for url in (url_a, url_b):
            other = open_page(bob, f"{url}/?session={sid}")
            assert "belongs to another browser" in status(other)
            assert session_of(other) != sid
        assert stored(db, sid)[0] == 2  # and changed nothing of it
    finally:
        alice.close()
        bob.close()


def test_a_rerun_on_one_server_notices_the_other_servers_steps(pair, browser):
    # Needs ui/common.py to check the stored revision once a run (notice_newer).
    url_a, url_b, db = pair
    context = browser.new_context(viewport={"width": 1600, "height": 1200})
    try:
        a = open_page(context, url_a)
        sid = session_of(a)
        step(a, AFTER[0])
        b = open_page(context, f"{url_b}/?session={sid}")
        step(b, AFTER[1])
        # Any rerun on A, not a reload: here a sidebar toggle.
        a.get_by_text("Presenter mode (large type)").click()
        wait_idle(a)
        assert "changed in another tab or on another app server" in status(a)
        assert step_shown(a) == 1  # this tab's copy, until it reads the newer one
        a.get_by_role("button", name="Reload the newer steps").click()
        wait_idle(a)
        assert step_shown(a) == 2 and AFTER[1] in status(a)
        step(a, AFTER[2])
        assert stored(db, sid)[0] == 3
    finally:
        context.close()
