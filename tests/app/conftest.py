"""Every app test saves sessions to its own temporary store, never the user's."""

import pytest


@pytest.fixture(autouse=True)
def _private_store(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOWDEBUG_DB", str(tmp_path / "sessions.db"))
