"""Chromium on a shared server (FLOWDEBUG_SHARED=1): the browser keeps its owner secret in a
cookie the app sets, reopens its own session from the link, cannot open another browser's,
and a stale tab's change is refused instead of overwriting the newer one."""

from __future__ import annotations

import pytest

from flowdebug import hosting
from flowdebug.store.sessions import open_store
from tests.e2e.app_server import app_server, open_page, session_of, wait_idle
from ui.browser import OWNER_COOKIE

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    db = tmp_path_factory.mktemp("store") / "sessions.db"
    with app_server(db, **{hosting.SHARED_ENV: "1"}) as url:
        yield url, db


def owner_cookie(context) -> str:
    values = [c["value"] for c in context.cookies() if c["name"] == OWNER_COOKIE]
    assert len(values) == 1, context.cookies()
    return values[0]


def save_description(page, text: str) -> None:
    box = page.get_by_label("Description")
    box.fill(text)
    box.press("Tab")  # Streamlit takes a text area's value when it loses focus
    wait_idle(page)
    page.get_by_role("button", name="Save tool").click()
    wait_idle(page)


def errors(page) -> str:
    return " ".join(page.locator("[data-testid='stAlert']").all_inner_texts())


def test_sessions_belong_to_the_browser_that_made_them(shared, browser):
    url, db = shared
    alice = browser.new_context(viewport={"width": 1600, "height": 1200})
    bob = browser.new_context(viewport={"width": 1600, "height": 1200})
    try:
        first = open_page(alice, f"{url}/sessions")
        sid = session_of(first)
        secret = owner_cookie(alice)  # set by the app's own script, read back on the next visit
        assert len(secret) >= 32 and secret not in first.url
        with open_store(str(db)) as store:
            assert [i.id for i in store.list(owner=secret)] == [sid]
        # Her link reopens her session in another tab of her browser.
        again = open_page(alice, f"{url}/sessions?session={sid}")
        assert session_of(again) == sid and "belongs to another browser" not in errors(again)
        assert owner_cookie(alice) == secret
        # The same link in another browser opens nothing of it.
        other = open_page(bob, f"{url}/sessions?session={sid}")
        assert "belongs to another browser" in errors(other)
        assert session_of(other) != sid
        bob_secret = owner_cookie(bob)
        assert bob_secret != secret
        with open_store(str(db)) as store:
            assert sid not in [i.id for i in store.list(owner=bob_secret)]
            assert [i.id for i in store.list(owner=secret)] == [sid]
    finally:
        alice.close()
        bob.close()


def test_a_stale_tab_cannot_overwrite_newer_steps(shared, browser):
    url, db = shared
    context = browser.new_context(viewport={"width": 1600, "height": 1300})
    try:
        one = open_page(context, f"{url}/tools")
        sid = session_of(one)
        two = open_page(context, f"{url}/tools?session={sid}")
        save_description(one, "written in tab one")
        save_description(two, "written in tab two")
        assert "changed in another tab; reload to see the newer steps" in errors(two)
        with open_store(str(db)) as store:
            saved = store.load(sid).toolset.get("get_weather").tool.description
        assert saved == "written in tab one"
        two.get_by_role("button", name="Reload the newer steps").click()
        wait_idle(two)
        assert two.get_by_label("Description").input_value() == "written in tab one"
        save_description(two, "after the reload")
        assert "changed in another tab" not in errors(two)
        with open_store(str(db)) as store:
            saved = store.load(sid).toolset.get("get_weather").tool.description
        assert saved == "after the reload"
    finally:
        context.close()
