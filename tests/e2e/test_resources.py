"""What a browser session starts ends with it (issue 18 item 2), against `streamlit run`.

Several Chromium sessions open saved ``mcp_weather`` sessions by their links and run them to
the end at the same time (a stdio MCP server each), use the Compare page's offline emulator,
and play the model live against a local emulator; then the browsers leave. Streamlit lets a
browser session go when its browser disconnects (its session-scoped resources released, the
session kept ``--server.disconnectedSessionTTL`` seconds for a reconnect, short here); the
test waits until Streamlit's own gauge of active sessions (``/_stcore/metrics``) reads 0, then
reads /proc (no psutil) until none of the child processes, threads or temporary files those
sessions started is still there.

The baseline is taken after one warm-up session has come and gone: what is left then is the
process's own (Streamlit's threads, the one shared emulator, the MCP client's loop thread, the
reaper), and more sessions must leave the server exactly as the warm-up left it. Streamlit's
own pool of file-serving threads is let shrink before each reading (it drops idle workers only
when next used), so that it is not mistaken for what a session left. The server is
tests/e2e/pooled_server.py, `streamlit run` in the same process with the pools the process keeps
for itself made predictable: that pool lets an idle worker go after half a second (AnyIO's
default is 10 s, which made each reading wait 11 s), and Streamlit's config-polling pool starts
at its full four threads instead of growing by one, for good, when two polls overlap on a
loaded machine (which once read as a thread left by a session).
"""

from __future__ import annotations

import os
import re
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from flowdebug.emulator.server import Emulator
from flowdebug.engine.session.debugger import Session
from flowdebug.hosting import RESUME_ENV
from flowdebug.mcp.client import close_all
from flowdebug.store.sessions import open_store
from tests.e2e.app_server import ROOT, open_sidebar, start, stop, wait_idle

pytestmark = pytest.mark.browser

TTL = 2  # seconds Streamlit keeps a disconnected session for its reconnect
SETTLE = 60.0  # seconds the server gets to let go of what the dropped sessions held (a loaded
# machine, three test workers on two cores, once needed more than 40)
ANYIO_IDLE = 0.5  # seconds after which the server's AnyIO pool lets an idle worker thread go
IDLE_WORKER = ANYIO_IDLE + 0.5  # what a reading waits for that pool's idle workers to be idle
STEADY = 4  # readings in a row with the same thread count that make the baseline


@dataclass
class Server:
    url: str
    pid: int
    tmp: Path


@dataclass(frozen=True)
class Usage:
    """What the server process holds, read from /proc."""

    children: tuple[str, ...]  # every descendant process's command line
    threads: int
    rss_kb: int
    children_rss_kb: int
    temp_fds: int  # open descriptors on files in its TMPDIR (deleted or not)
    temp_files: int  # files left in its TMPDIR

    def __str__(self) -> str:
        return (
            f"{len(self.children)} child processes ({self.children_rss_kb / 1024:.0f} MB), "
            f"{self.threads} threads, RSS {self.rss_kb / 1024:.0f} MB, "
            f"{self.temp_fds} open temporary files, "
            f"{self.temp_files} files in TMPDIR"
        )


def _descendants(pid: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the fields follow the last ')'.
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":  # a zombie holds nothing but its exit status
            parents[int(entry)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == parent]
        found += kids
        frontier += kids
    return found


def _cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


def _rss_kb(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(ln.split()[1]) for ln in status.splitlines() if ln.startswith("VmRSS")), 0)


def usage(server: Server) -> Usage:
    pid = server.pid
    kids = _descendants(pid)
    temp_fds = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        temp_fds += target.startswith(str(server.tmp))
    return Usage(
        children=tuple(_cmdline(p) for p in kids),
        threads=len(os.listdir(f"/proc/{pid}/task")),
        rss_kb=_rss_kb(pid),
        children_rss_kb=sum(_rss_kb(p) for p in kids),
        temp_fds=temp_fds,
        temp_files=sum(1 for _ in server.tmp.rglob("*")),
    )


def disconnected(server: Server, timeout: float = SETTLE) -> None:
    """Until Streamlit has let go of every browser session: its ``active_sessions`` gauge
    reads 0 (a session leaves it when Streamlit handles its browser's disconnect, which
    releases what the session holds)."""
    deadline = time.monotonic() + timeout
    url = f"{server.url}/_stcore/metrics?families=active_sessions"
    while True:
        with urllib.request.urlopen(url, timeout=10) as r:
            found = re.search(rb"^active_sessions (\d+)", r.read(), re.M)
        assert found, "Streamlit's metrics no longer report active_sessions"
        if found[1] == b"0":
            return
        assert time.monotonic() < deadline, f"{found[1].decode()} sessions still active"
        time.sleep(0.1)


def _prune_pools(server: Server) -> None:
    """Let the server's own worker pool shrink back: Streamlit serves files through AnyIO's
    thread pool, whose idle workers (10 s) are only let go of when the pool is next used. A
    pool the process keeps for itself, not a thread any session started."""
    time.sleep(IDLE_WORKER)
    for _ in range(2):
        with urllib.request.urlopen(f"{server.url}/", timeout=10) as r:
            r.read()


def settled(server: Server, baseline: Usage, timeout: float = SETTLE) -> Usage:
    """The server's usage once it is back to ``baseline`` (or the last reading at ``timeout``)."""
    deadline = time.monotonic() + timeout
    while True:
        _prune_pools(server)
        now = usage(server)
        back = (
            len(now.children) <= len(baseline.children)
            and now.threads <= baseline.threads
            and now.temp_fds <= baseline.temp_fds
            and now.temp_files <= baseline.temp_files
        )
        if back or time.monotonic() > deadline:
            return now


def steady(server: Server, timeout: float = SETTLE) -> Usage:
    """The server's usage once the warm-up's sessions are gone: no child process and no
    temporary file left, and the same thread count for :data:`STEADY` readings in a row (or
    the last reading at ``timeout``)."""
    deadline = time.monotonic() + timeout
    threads: list[int] = []
    while True:
        _prune_pools(server)
        now = usage(server)
        threads = [*threads[1 - STEADY :], now.threads]
        gone = not now.children and not now.temp_fds and not now.temp_files
        if (gone and len(threads) == STEADY and len(set(threads)) == 1) or (
            time.monotonic() > deadline
        ):
            return now


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    """`streamlit run serve.py` whose disconnected sessions are dropped after TTL seconds."""
    base = tmp_path_factory.mktemp("resources")
    tmp = base / "tmp"
    tmp.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "FLOWDEBUG_DB": str(base / "sessions.db"),
        "TMPDIR": str(tmp),  # every temporary file the server makes lands here
        "FLOWDEBUG_TEST_ANYIO_IDLE": str(ANYIO_IDLE),
        RESUME_ENV: "0",  # each test's browser starts on a new session
    }
    env.pop("FLOWDEBUG_SHARED", None)  # the MCP scenario's stdio server must be allowed
    # The server's own interpreter, not a wrapper (pooled_server hands over to Streamlit in its
    # own process): its pid is the one whose children count.
    proc, url = start(
        ["-m", "tests.e2e.pooled_server", "run", str(ROOT / "serve.py")],
        env,
        base,
        "--server.disconnectedSessionTTL",
        str(TTL),
    )
    try:
        yield Server(url, proc.pid, tmp)
    finally:
        stop(proc)


# The conftest's emulator, which a live player talks to (in this test's process).
EMULATOR = {"scenario": "mcp_weather"}


def saved_mcp_session() -> str:
    """A new saved ``mcp_weather`` session in the server's store: its id, for the link."""
    session = Session.from_scenario("mcp_weather")  # lists the tools (a stdio server here)
    with open_store(os.environ.get("FLOWDEBUG_TEST_DB")) as store:
        store.save(session.state)
    close_all()  # this test process's listing server
    return session.state.id


def start_run(page) -> None:
    wait_idle(page)
    page.locator(".st-key-run button").first.click()


def run_ended(page) -> None:
    wait_idle(page)
    # The cycle is over when Run is disabled (the model answered without calls).
    page.locator(".st-key-run button[disabled]").first.wait_for(timeout=60_000)


def run_to_the_end(page) -> None:
    start_run(page)
    run_ended(page)


def mcp_sessions(browser, server: Server, count: int) -> Usage:
    """``count`` browsers, each on a new saved MCP session opened by its link, run their
    cycles to the end at the same time, then leave: what the server held before they left."""
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(count)]
    pages = [ctx.new_page() for ctx in contexts]
    for page in pages:
        page.set_default_timeout(60_000)
        page.goto(f"{server.url}/?session={saved_mcp_session()}")
    for page in pages:
        start_run(page)
    for page in pages:
        run_ended(page)
    busy = usage(server)
    for ctx in contexts:
        ctx.close()
    return busy


def compare_session(browser, url: str, session_id: str) -> None:
    """Compare two players on the offline emulator, then the A/B test."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{url}/compare?session={session_id}")
    wait_idle(page)
    page.locator(".st-key-cmp_run button").click()
    wait_idle(page)
    page.locator("[data-testid='stDataFrame']").first.wait_for()
    page.locator(".st-key-ab_run button").click()
    wait_idle(page)
    page.get_by_text("Runs per variant", exact=False).first.wait_for()
    page.locator("[data-testid='stDataFrame']").first.wait_for()
    ctx.close()


def live_session(browser, url: str, session_id: str, emulator: Emulator) -> None:
    """Play the model live (OpenAI Chat) against the local emulator, to the end."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{url}/?session={session_id}")
    wait_idle(page)
    page.get_by_text("Who plays the model").click()
    field = page.locator(".st-key-live_base_url input")
    # Under CI's load the choice was once lost (pressed while the page's first runs were still
    # drawing): choose again until the live player's fields are there; three presses at most.
    for _ in range(3):
        page.locator(".st-key-player_kind").get_by_text("Live model").click()
        wait_idle(page)
        try:
            field.wait_for(timeout=15_000)
            break
        except PlaywrightTimeout:
            if not page.locator(".st-key-player_kind").is_visible():
                page.get_by_text("Who plays the model").click()
    field.fill(emulator.base_url("openai-chat"))
    field.press("Enter")
    wait_idle(page)
    page.locator(".st-key-apply_player button").click()
    wait_idle(page)
    page.get_by_text("openai-chat:", exact=False).first.wait_for()
    run_to_the_end(page)
    ctx.close()


def test_sessions_leave_nothing_behind_when_streamlit_drops_them(
    server, browser, emulator, tmp_path, monkeypatch
):
    db = Path(server.tmp).parent / "sessions.db"
    monkeypatch.setenv("FLOWDEBUG_TEST_DB", str(db))
    start = usage(server)

    # Warm-up: what the process keeps for itself (shared emulator, loop threads) starts here.
    mcp_sessions(browser, server, 1)
    compare_session(browser, server.url, saved_mcp_session())
    disconnected(server)
    baseline = steady(server)

    busy = mcp_sessions(browser, server, 3)
    compare_session(browser, server.url, saved_mcp_session())
    live_session(browser, server.url, saved_mcp_session(), emulator)
    disconnected(server)
    after = settled(server, baseline)

    report = f"start: {start}\nbaseline: {baseline}\nbusy: {busy}\nafter: {after}"
    print(report)
    (ROOT / "artifacts").mkdir(exist_ok=True)
    (ROOT / "artifacts" / "resources.txt").write_text(report + "\n")
    assert baseline.children == (), f"left by the warm-up: {baseline.children}\n{report}"
    assert after.children == (), f"child processes left: {after.children}\n{report}"
    assert after.threads <= baseline.threads, report
    assert after.temp_fds == 0 and after.temp_files == 0, report


def test_the_sidebar_keeps_its_values_from_page_to_page(server, browser):
    """Drawn once by app.py, the sidebar's widgets are never unmounted by a page change."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(server.url)
    wait_idle(page)
    page.locator(".st-key-presenter label").click()
    wait_idle(page)
    open_sidebar(page)  # presenter mode collapsed it
    chips = page.locator(".st-key-protocols [data-tag]")
    before = chips.count()
    assert before >= 5
    page.locator(".st-key-protocols button[aria-label^='Remove']").first.click()
    wait_idle(page)
    assert chips.count() == before - 1
    for title in ("Tools", "Sessions", "Debugger"):
        page.locator("[data-testid='stSidebarNav']").get_by_text(title, exact=True).click()
        wait_idle(page)
        assert page.locator(".st-key-presenter input").is_checked(), title
        assert chips.count() == before - 1, title
    ctx.close()
