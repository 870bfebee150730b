"""The server freezes what it built to start, once per process, after a page has run."""

from __future__ import annotations

import gc
from pathlib import Path

from streamlit.testing.v1 import AppTest

from ui import lifetime

APP = Path(__file__).resolve().parents[2] / "app.py"


def test_the_first_run_collects_and_freezes_once(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append("collect") or 0)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    lifetime._frozen.clear()
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    assert not at.exception
    at.run()
    assert calls == ["collect", "freeze"]  # the imports' garbage first, then the rest; once
    lifetime._frozen.clear()
