"""AppTest: hostile JSON pasted on the Tools page or imported on the Sessions page is refused
with one clear message; nothing changes and no exception reaches the page."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from flowdebug.store.sessions import open_store
from tests.app.markdown import shown

PAGES = Path(__file__).resolve().parents[2] / "pages"
HOSTILE = {
    "1000-deep": ("[" * 1_000 + "]" * 1_000, "more than 128 levels"),
    "100000-deep": ("[" * 100_000 + "]" * 100_000, "more than 128 levels"),
    "NaN": ('[{"name": "t", "input_schema": {"type": "object", "x": NaN}}]', "NaN is not"),
    "Infinity": ('{"tools": [], "x": Infinity}', "Infinity is not"),
    "raw NUL": ('{"x": "a\x00b"}', "Invalid control character"),
    "raw ESC": ('{"x": "\x1b[31m"}', "Invalid control character"),
}


def page(name: str) -> AppTest:
    app = AppTest.from_file(str(PAGES / name), default_timeout=60)
    app.run()
    assert not app.exception
    return app


def said(app: AppTest) -> str:
    return " ".join(shown(e.value) for e in app.error)


@pytest.mark.parametrize(("text", "words"), HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_paste_on_the_tools_page_changes_nothing(text, words):
    app = page("tools.py")
    before = app.session_state.fd_session.state.toolset
    app.text_area(key="paste_text").input(text).run()
    assert not app.exception
    assert words in said(app) and "Nothing imported" in said(app)
    assert not [b for b in app.button if b.key == "paste_import"]  # nothing offered to add
    assert app.session_state.fd_session.state.toolset == before


@pytest.mark.parametrize(("text", "words"), HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_import_on_the_sessions_page_changes_nothing(text, words):
    app = page("sessions.py")
    current = app.session_state.fd_session.state.id
    app.text_area(key="imp_text").input(text).run()
    app.button(key="imp_go").click().run()
    assert not app.exception
    assert words in said(app) and "Not imported" in said(app)
    assert app.session_state.fd_session.state.id == current
    assert [i.id for i in open_store().list()] == [current]
