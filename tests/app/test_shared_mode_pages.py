"""AppTest on a shared server (FLOWDEBUG_SHARED=1): the pages open, the Tools page refuses a
handler that would run code on the server with the library's one message, and nothing changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from flowdebug import hosting
from tests.app.markdown import shown

PAGES = Path(__file__).resolve().parents[2] / "pages"
MESSAGE = "refused on this shared server (FLOWDEBUG_SHARED=1)"


@pytest.fixture(autouse=True)
def shared(monkeypatch):
    monkeypatch.setenv(hosting.SHARED_ENV, "1")


@pytest.mark.parametrize("page", ["debugger.py", "tools.py", "sessions.py"])
def test_the_pages_open_on_a_shared_server(page):
    app = AppTest.from_file(str(PAGES / page), default_timeout=60)
    app.run()
    assert not app.exception


@pytest.mark.parametrize(
    ("kind", "key", "value"),
    [
        ("code", "tool_source", "def handler(args):\n    return 1\n"),
        ("python", "tool_function", "subprocess:run"),
    ],
    ids=["code", "python"],
)
def test_the_tools_page_refuses_a_handler_that_runs_code(kind, key, value):
    app = AppTest.from_file(str(PAGES / "tools.py"), default_timeout=60)
    app.run()
    before = app.session_state.fd_session.state.toolset
    app.selectbox(key="tool_handler_kind").set_value(kind).run()
    widget = app.text_area(key=key) if kind == "code" else app.text_input(key=key)
    widget.input(value).run()
    app.button(key="tool_save").click().run()
    assert not app.exception
    assert any(MESSAGE in shown(e.value) for e in app.error)
    assert app.session_state.fd_session.state.toolset == before
