"""What every browser test shares: Chromium (Debian's, never a download), one app server per
test process, and the rule that CI runs these tests rather than skipping them."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from flowdebug import hosting
from tests import pgserver
from tests.e2e.app_server import CHROMIUM, FLAGS, app_server, forget, fresh, wait_idle

if not Path(CHROMIUM).exists() and os.environ.get("CI"):
    raise RuntimeError(f"{CHROMIUM} is missing: CI must install Debian's chromium")
HERE = Path(__file__).resolve().parent


LANES = 2
"""Workers that run browser tests at once under ``--dist loadgroup``: the browser modules are
dealt into this many groups (lanes), so that on three workers (`make test`) two of them work
through the browser modules, which mostly wait for a page or a server, while the third runs
the unit tests, which keep a core busy; the other workers join the unit tests once their lane
is done. With a group per module, xdist hands the groups out first: three Chromiums ran at once
for four minutes and the unit tests after them. The wall time is the same either way (408-411 s
against 408 s: the suite is bound by the machine's CPU); the lanes keep one Chromium fewer."""

SECONDS = {
    "e2e-postgres": 83, "test_play": 80, "test_resources": 51, "test_browser": 45,
    "test_aligned": 38, "test_teaching": 31, "test_projector": 28, "test_session_owners": 28,
    "test_xss_aligned": 27, "test_developer_loop": 26, "test_room_pulse": 20, "test_xss": 19,
    "test_first_visit": 10, "test_rejection": 9,
}  # fmt: skip
"""What each browser module (the PostgreSQL ones as one) took, setup to teardown, with two
workers on an idle two-core machine (stop 40): the weights by which the lanes are dealt.
A module missing here weighs the median; a stale figure only makes the lanes less even."""


def lanes(units: list[str], count: int = LANES) -> dict[str, int]:
    """Each unit's lane: the heaviest first, each into the lightest lane so far (ties by
    name, so every worker deals the same lanes, as ``--dist loadgroup`` requires)."""
    known = sorted(SECONDS.values())
    median = known[len(known) // 2]
    load = [0.0] * count
    out: dict[str, int] = {}
    for unit in sorted(set(units), key=lambda u: (-SECONDS.get(u, median), u)):
        lane = load.index(min(load))
        out[unit] = lane
        load[lane] += SECONDS.get(unit, median)
    return out


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]):
    """A browser module's tests run on one worker (``--dist loadgroup``: its module-scoped
    server starts once), in one of :data:`LANES` groups of modules; the modules on PostgreSQL
    stay together, so that its server and app servers start once for all of them. Without
    Chromium (outside CI) they are skipped, saying why."""
    skip = None if Path(CHROMIUM).exists() else pytest.mark.skip(reason="Chromium is not installed")
    units: dict[pytest.Item, str] = {}
    for item in items:
        path = Path(item.path).resolve()
        if HERE in path.parents:
            on_pg = "pg" in getattr(item, "fixturenames", ())
            units[item] = "e2e-postgres" if on_pg else path.stem
    dealt = lanes(list(units.values()))
    for item, unit in units.items():
        item.add_marker(pytest.mark.xdist_group(f"e2e-lane{dealt[unit]}"))
        item.add_marker(pytest.mark.browser)  # one module without the mark ran in test-fast
        if skip:
            item.add_marker(skip)
    result = yield
    if getattr(config.option, "loadgroup", False):  # an xdist worker under --dist loadgroup
        _name_groups(items)
    return result


def _name_groups(items: list[pytest.Item]) -> None:
    """The group in each grouped test's node id, as pytest-xdist means to put it: xdist 3.8
    appends ``@<group>`` to ``item._nodeid``, which pytest 9.2's structured node ids no longer
    read (pytest-dev/pytest-xdist#1386), so that ``--dist loadgroup`` silently spread every
    browser module's tests over both workers, each starting the module's servers."""
    for item in items:
        groups = sorted({str(m.args[0]) for m in item.iter_markers("xdist_group") if m.args})
        node_id = getattr(item, "_id", None)
        if groups and node_id is not None and "@" not in item.nodeid:
            item._id = type(node_id).parse(f"{item.nodeid}@{'_'.join(groups)}")


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """The app's URL, with a fresh sessions database, shared by the modules one worker runs:
    each test opens its own browser context, so its own session (sessions belong to the
    browser that made them), and none changes the server's settings. A module that needs a
    server of its own (another page, other settings) starts it itself."""
    with app_server(tmp_path_factory.mktemp("store") / "sessions.db") as url:
        yield url


@pytest.fixture(scope="package")
def pg():
    """A PostgreSQL server (tests/pgserver.py) for the browser modules that need one."""
    server = pgserver.start_or_skip()
    yield server
    server.stop()


def _two(pg, tmp: Path, **env: str):
    """Two app servers, A and B, on one new PostgreSQL database: (url A, url B, database URL),
    as a load balancer would spread a room over them."""
    db = pg.create_database(f"two_{uuid.uuid4().hex[:10]}")
    # app_server's path argument only places the server's log: FLOWDEBUG_DB overrides it.
    a = app_server(tmp / "a.db", FLOWDEBUG_DB=db, **env)
    b = app_server(tmp / "b.db", FLOWDEBUG_DB=db, **env)
    return a, b, db


@pytest.fixture(scope="package")
def pair(pg, tmp_path_factory):
    """Two app servers on one PostgreSQL database: (url A, url B, database URL)."""
    a, b, db = _two(pg, tmp_path_factory.mktemp("pair"))
    with a as url_a, b as url_b:
        yield url_a, url_b, db


@pytest.fixture(scope="package")
def shared_pair(pg, tmp_path_factory):
    """:func:`pair` in shared mode (sessions belong to the browser that made them), for the
    two-server and room tests."""
    a, b, db = _two(pg, tmp_path_factory.mktemp("shared"), **{hosting.SHARED_ENV: "1"})
    with a as url_a, b as url_b:
        yield url_a, url_b, db


class _Chromium:
    """Headless Chromium, started when a browser test first asks for it and kept for the
    browser tests that follow on this worker (under ``--dist loadgroup`` a lane's modules come
    one after another): starting Playwright's driver and Chromium costs 1.1 s of CPU, once per
    lane rather than once per module.

    Stopped before any other test runs on the worker (:func:`pytest_runtest_setup`): while sync
    Playwright runs, its event loop is this thread's running loop, so a later test that runs
    one of its own (asyncio.run, anyio.run: the MCP, recorder and room-route tests) failed with
    "cannot be called from a running event loop"."""

    def __init__(self) -> None:
        self._playwright: Any = None
        self._browser: Any = None

    def get(self) -> Any:
        if self._browser is None:
            from playwright.sync_api import sync_playwright

            self._playwright = sync_playwright().start()
            try:
                self._browser = self._playwright.chromium.launch(
                    executable_path=CHROMIUM, args=FLAGS, headless=True
                )
            except BaseException:
                self.stop()
                raise
        return self._browser

    def stop(self) -> None:
        browser, playwright = self._browser, self._playwright
        self._browser = self._playwright = None
        try:
            if browser is not None:
                browser.close()
        finally:
            if playwright is not None:
                playwright.stop()


CHROMIUM_PROCESS = _Chromium()


class _StopChromium:
    """Stops Chromium before any test outside this folder (a plugin of its own: a conftest's
    own hooks see only the tests beside it), and at the end of the session."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if HERE not in Path(item.path).resolve().parents:
            CHROMIUM_PROCESS.stop()

    def pytest_sessionfinish(self) -> None:
        CHROMIUM_PROCESS.stop()


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("flowdebug-stop-chromium"):
        config.pluginmanager.register(_StopChromium(), "flowdebug-stop-chromium")


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium (one for the browser modules that run one after another on this
    worker: :class:`_Chromium`); each test or module works in a browser context of its own,
    and a module needing another kind of page makes its own context from this one."""
    return CHROMIUM_PROCESS.get()


def _at_start_of(page, scenario: str) -> bool:
    """Whether the Debugger shows ``scenario`` at step 0 already (a new browser's session on
    a server that does not resume the session saved last): nothing to choose or reset."""
    chosen = page.get_by_role("combobox", name="Scenario").input_value()
    at_zero = page.locator(".st-key-fd_controls").filter(has_text="step 0 ·").count()
    return chosen.startswith(f"{scenario} ") and bool(at_zero)


@pytest.fixture(scope="module")
def tab(browser, request):
    """One browser context and its page for a module's tests, at the module's ``WIDTH`` by
    ``HEIGHT`` (1700 by 1300 if it names none): see :func:`page`."""
    module = request.module
    size = {"width": getattr(module, "WIDTH", 1700), "height": getattr(module, "HEIGHT", 1300)}
    ctx = browser.new_context(viewport=size)
    pg = ctx.new_page()
    yield pg
    ctx.close()


@pytest.fixture
def page(tab, server, request):
    """A page as a new browser would open it (no cookie, nothing stored: a session of its
    own), in its module's tab (:func:`tab`). A module with ``OPENS_DEBUGGER = True`` gets it
    already on the Debugger with the weather scenario at step 0.

    One tab per module rather than a context per test: a tab that loads the app again reuses
    its renderer, which has compiled Streamlit's scripts once; a new context starts a renderer
    that compiles them all again (2.0 s of Chromium's CPU a load against 0.95 s)."""
    forget(tab)
    tab.set_default_timeout(30_000)
    if getattr(request.module, "OPENS_DEBUGGER", False):
        tab.goto(server, wait_until="domcontentloaded")
        tab.locator(".st-key-step button").first.wait_for()
        wait_idle(tab)
        if not _at_start_of(tab, "weather"):
            fresh(tab)
    return tab
