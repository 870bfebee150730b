"""The server freezes what it built to start, once: every flowdebug module imported first."""

from __future__ import annotations

import gc
import sys

from pages import lifetime


def test_freeze_imports_loads_every_module_then_collects_and_freezes(monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append("collect") or 0)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    imported = lifetime.freeze_imports()
    assert calls == ["collect", "freeze"]  # the garbage of the imports first, then the rest
    assert imported >= 150  # the library has about 190 modules
    for name in ("flowdebug.views.aligned", "flowdebug.players.live.bedrock", "flowdebug.cli"):
        assert name in sys.modules
