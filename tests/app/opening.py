"""Opening a page as a new browser session would (AppTest), optionally on a saved session."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

PAGES = Path(__file__).resolve().parents[2] / "pages"


def page(name: str, session: str | None = None) -> AppTest:
    """``pages/<name>`` run once in a new browser session (``session``: its address names that
    saved session, as a reload does); it ran without an exception."""
    app = AppTest.from_file(str(PAGES / name), default_timeout=60)
    if session is not None:
        app.query_params["session"] = session
    app.run()
    assert not app.exception
    return app
