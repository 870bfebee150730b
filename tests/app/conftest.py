"""Every app test saves sessions to its own temporary store, never the user's; the AppTests
share what a server does once per process (the compiled pages, the installed components)."""

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


@pytest.fixture(autouse=True, scope="session")
def _one_component_scan():
    """Find the installed Streamlit components once, as a server does when it starts: each new
    AppTest scanned every installed package's metadata for component manifests at its first run
    (about 0.2 s of CPU each, more than the page run it preceded)."""
    import streamlit.components.v2.manifest_scanner as scanner

    scan = scanner.scan_component_manifests
    found = scan()
    scanner.scan_component_manifests = lambda max_workers=None: list(found)  # type: ignore[assignment]
    yield
    scanner.scan_component_manifests = scan  # type: ignore[assignment]
