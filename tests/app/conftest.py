"""Every app test saves sessions to its own temporary store, never the user's."""

import pytest


@pytest.fixture(autouse=True)
def _private_store(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOWDEBUG_DB", str(tmp_path / "sessions.db"))


@pytest.fixture(autouse=True, scope="session")
def _one_script_cache():
    """Compile each page once, as a server does: AppTest makes a new script cache at every
    run, and compiling a page (with Streamlit's magic rewrite of its syntax tree) took as
    long as running it."""
    import streamlit.testing.v1.app_test as app_test
    import streamlit.testing.v1.local_script_runner as local
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache

    shared = ScriptCache()
    app_test.ScriptCache = local.ScriptCache = lambda: shared  # type: ignore[assignment,misc]
    yield
    app_test.ScriptCache = local.ScriptCache = ScriptCache  # type: ignore[misc]
