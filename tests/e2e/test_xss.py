"""Content is text: hostile tool names, descriptions, arguments, results, message text and a
session name, saved in the session store before the app starts (what an import or another
attendee leaves behind), are shown as typed on every page and run nothing.

Each vector sets ``window.__xss`` or asks a local "pixel" server for an image if it ever
runs or renders; the test asserts the flag stays unset, the pixel server hears nothing, no
dialog opens, and the text is on the page as typed.
"""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from flowdebug.exchange.imports import import_session
from flowdebug.store.sessions import open_store
from tests import http_stub
from tests.e2e.app_server import app_server, wait_idle

pytestmark = pytest.mark.browser


class _Pixel(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.server.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def vectors(pixel: str) -> str:
    """The classic ways text turns into markup, in one string."""
    return (
        "<img src=x onerror=window.__xss=1> "
        '<iframe srcdoc="<script>parent.__xss=1</script>"></iframe> '
        "<svg><script>window.__xss=1</script></svg> "
        "[click me](javascript:window.__xss=1) "
        f"![x]({pixel}/pixel) "
        "`tick` **bold**"
    )


@pytest.fixture(scope="module")
def pixel():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pixel)
    server.hits = []
    with http_stub.serving(server):
        yield server


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, pixel):
    """(app URL, session id, what each field holds) for a session full of vectors."""
    url = f"http://127.0.0.1:{pixel.server_address[1]}"
    v = vectors(url)
    fields = {
        "tool": f"tool`**{v}",
        "description": f"description {v}",
        "argument": f"argument {v}",
        "result": f"result {v}",
        "text": f"text {v}",
        "session": f"session {v}",
    }
    conversation = {
        "tools": [{"name": fields["tool"], "description": fields["description"]}],
        "messages": [
            {"role": "user", "parts": [{"kind": "text", "text": fields["text"]}]},
            {
                "role": "assistant",
                "parts": [
                    {
                        "kind": "tool_call",
                        "id": "call_1",
                        "name": fields["tool"],
                        "arguments": {"q": fields["argument"]},
                    }
                ],
            },
            {
                "role": "tool",
                "parts": [
                    {
                        "kind": "tool_result",
                        "call_id": "call_1",
                        "name": fields["tool"],
                        "content": [{"kind": "text", "text": fields["result"]}],
                    }
                ],
            },
        ],
    }
    db = tmp_path_factory.mktemp("store") / "sessions.db"
    imported = import_session(conversation, name=fields["session"], store=open_store(str(db)))
    with app_server(db) as app:
        yield app, imported.state.id, fields


@pytest.fixture(scope="module")
def page(hostile, browser):
    ctx = browser.new_context(viewport={"width": 1600, "height": 1200})
    pg = ctx.new_page()
    pg.set_default_timeout(30_000)
    pg.dialogs = []
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    yield pg
    ctx.close()


PAGES = {
    "": ("text", "result"),  # Debugger: the history below the graphs
    "history": ("text", "argument", "result"),
    "tools": ("tool", "description"),
    "protocols": ("text", "result"),
    "sessions": ("session",),
}


@pytest.mark.parametrize("slug", list(PAGES), ids=[s or "debugger" for s in PAGES])
def test_hostile_content_runs_nothing_and_shows_as_typed(page, hostile, pixel, slug):
    app, session_id, fields = hostile
    pixel.hits.clear()  # each page answers for itself
    page.goto(f"{app}/{slug}?session={session_id}", wait_until="domcontentloaded")
    page.locator("h1").first.wait_for()
    wait_idle(page)
    if not slug:
        page.locator(".st-key-show_history").get_by_text("Message history").click()
        wait_idle(page)
    assert not page.locator("[data-testid='stException']").count()
    # What the page shows: its text and what its inputs hold (a select's choice, an editor).
    shown = page.evaluate(
        "() => document.body.innerText + '\\n' + [...document.querySelectorAll('input, textarea')]"
        ".map(e => e.value).join('\\n')"
    )
    for name in PAGES[slug]:
        # As typed: the tags and quotes are text (summaries cut long text, so a prefix).
        assert fields[name][:45] in shown, (slug, name)
    page.wait_for_timeout(500)  # time for an injected script or image to act
    assert page.evaluate("window.__xss") is None, slug
    assert not page.dialogs, slug
    assert not pixel.hits, slug
    for made in ("img[onerror]", "iframe[srcdoc]", "a[href^='javascript:']", "svg script"):
        assert not page.locator(made).count(), (slug, made)
