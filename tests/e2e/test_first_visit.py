"""A server's first visitor may come by a room link, not the app's root: the sidebar must list
the app's pages by their titles, not the pages/ folder's file names (Streamlit's old pages
directory, which it assumed until app.py's st.navigation first ran; serve.py says so at start)."""

from __future__ import annotations

import pytest

from tests.e2e.app_server import app_server

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def new_server(tmp_path_factory):
    """A server no browser has visited yet."""
    with app_server(tmp_path_factory.mktemp("first") / "sessions.db") as url:
        yield url


def test_a_room_link_as_the_servers_first_visit_lists_the_apps_pages_by_title(browser, new_server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{new_server}/room?room=ABCDEFGHJK", wait_until="domcontentloaded")
    nav = page.locator('[data-testid="stSidebarNav"] a')
    nav.filter(has_text="Debugger").wait_for()
    names = [" ".join(t.split()) for t in nav.all_inner_texts()]
    assert [n.split(" ", 1)[-1] for n in names] == [
        "Debugger", "Tools", "History", "Protocols", "Failures", "Compare", "Sessions",
        "Encodings", "Room",
    ]  # fmt: skip
    page.get_by_role("heading", name="Room").first.wait_for()  # the Room page, in the app
    ctx.close()
