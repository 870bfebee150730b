"""`streamlit run serve.py` (the app and its routes; or another script) on a free port, for the
browser tests, and Chromium's settings."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from flowdebug.hosting import RESUME_ENV

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
# Headless Chromium builds its address bar's drop-down, a WebUI page in a renderer of its own,
# for every new browser context: about 1.7 s of CPU per context, nothing a test looks at.
NO_OMNIBOX_POPUP = ["WebUIOmniboxPopup", "WebUIOmniboxAimPopup"]


def _playwright_disabled_features() -> list[str]:
    """The features Playwright's driver disables in Chromium, read from the driver's own
    source (empty when it cannot be read)."""
    try:
        import playwright

        lib = Path(playwright.__file__).parent / "driver" / "package" / "lib"
        source = (lib / "coreBundle.js").read_text(encoding="utf-8", errors="replace")
    except (ImportError, OSError):
        return []
    found = re.search(r"\bdisabledFeatures\s*=\s*(?:\([^)]*\)\s*=>\s*)?\[(.*?)\]", source, re.S)
    return re.findall(r'"(\w+)"', found.group(1)) if found else []


# Chromium reads only the last --disable-features it is given, and Playwright passes its own
# before ours: ours repeats Playwright's list. Without that list the popup stays (slower, same).
if _DISABLED := _playwright_disabled_features():
    FLAGS.append("--disable-features=" + ",".join([*_DISABLED, *NO_OMNIBOX_POPUP]))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(
    entry: list[str],
    env: dict[str, str],
    logdir: Path,
    *extra: str,
    cwd: Path = ROOT,
    timeout: float = 60.0,
) -> tuple[subprocess.Popen, str]:
    """A Streamlit server of its own, ``python <entry> --server.port N <our flags> <extra>``
    run in ``cwd`` with ``env`` as its whole environment: (process, URL). Another process may
    take the free port this one found before Streamlit binds it; that other server would then
    answer the health check while ours exits, so a start counts only when our process's own
    log says it serves our port. A port taken in between is tried again on a new one."""
    for _ in range(5):
        port = free_port()
        # The server's output goes to a file: an unread pipe fills up and blocks the server.
        log = logdir / f"streamlit-{port}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    *entry,
                    "--server.port",
                    str(port),
                    "--server.headless",
                    "true",
                    "--server.address",
                    "127.0.0.1",
                    "--browser.gatherUsageStats",
                    "false",
                    # Others edit the checkout while tests run: a "File change" banner never
                    # settles.
                    "--server.fileWatcherType",
                    "none",
                    *extra,
                ],
                cwd=cwd,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None:
            if f"URL: {url}" in log.read_text(errors="replace") and _healthy(url):
                return proc, url
            time.sleep(0.2)
        stop(proc)
        text = log.read_text(errors="replace")
        if "already in use" not in text and "Errno 98" not in text:
            raise RuntimeError("streamlit did not become healthy: " + text[-2000:])
    raise RuntimeError("streamlit found no free port in five tries")


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def stop(proc: subprocess.Popen, wait: float = 10.0) -> None:
    """Terminate ``proc``; killed when it has not exited after ``wait`` seconds."""
    proc.terminate()
    try:
        proc.wait(wait)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def app_server(db: Path, script: Path | None = None, **env: str) -> Iterator[str]:
    """The app's URL, served with its sessions in ``db`` until the block ends; ``script``: a
    page to serve alone instead of serve.py (a test's own page)."""
    # each browser test starts on a new session, not on the one another test saved last
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "FLOWDEBUG_DB": str(db)}
    environ = {RESUME_ENV: "0", **environ, **env}
    proc, url = start(
        ["-m", "streamlit", "run", str(script or ROOT / "serve.py")], environ, db.parent
    )
    try:
        yield url
    finally:
        stop(proc)


# What wait_idle reads in the page. Streamlit marks its root with the script's state
# (data-test-script-state: initial, running, notRunning, ...); observers set on the page's
# document once count the changes of that state and time the last change of the content, and
# listeners note the last input (a press, a key, a typed value) with the count at that moment.
_WATCH = """() => {
  const w = window.__fdIdle ||= {changes: 0, mark: 0, called: performance.now(),
                                 content: performance.now(), app: null, input: -1, atInput: 0};
  const app = document.querySelector('[data-testid="stApp"]');
  if (app && w.app !== app) {
    w.app = app;
    new MutationObserver(() => { w.changes += 1; })
      .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  }
  if (!w.body && document.body) {
    w.body = true;
    new MutationObserver(() => { w.content = performance.now(); })
      .observe(document.body, {subtree: true, childList: true, characterData: true});
    const noted = () => { w.input = performance.now(); w.atInput = w.changes; };
    for (const type of ['pointerdown', 'keydown', 'input', 'change'])
      window.addEventListener(type, noted, true);
  }
  return w;
}"""
# The runs are counted from the last input when there was one since the last call (the run
# an action asked for may have begun, even ended, before this call), else from this call.
_CALLED = (
    "() => { const w = ("
    + _WATCH
    + """)();
  w.mark = w.input > w.called ? w.atInput : w.changes;
  w.called = performance.now();
}"""
)
# Idle: a run began since the action (or the call) and is over, or 500 ms went by since the
# call (time for the run an action asked for to start, when none began yet); the script not
# running; no status widget or loading skeleton; and the content unchanged for 200 ms (what a
# finished run sent is drawn).
_IDLE = (
    "() => { const w = ("
    + _WATCH
    + """)(), now = performance.now();
  const app = document.querySelector('[data-testid="stApp"]');
  return (w.changes > w.mark || now - w.called >= 500) && now - w.content >= 200
    && app?.dataset.testScriptState === 'notRunning'
    && !document.querySelector('[data-testid="stStatusWidget"]')
    && !document.querySelector('[data-testid="stSkeleton"]');
}"""
)


def wait_idle(page) -> None:
    """Until the script run the last action started is over and drawn: Streamlit says no
    script runs (once one began since the action's input or this call, or after 500 ms for it
    to begin), no element is a loading skeleton, and the page's content has not changed for
    200 ms."""
    page.evaluate(_CALLED)
    page.wait_for_function(_IDLE, polling=50, timeout=30_000)


def open_page(context, url: str, ready: str = "h1"):
    """A new tab of ``context`` on ``url``, once ``ready`` (a selector) is drawn and the first
    script run is over."""
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(url, wait_until="domcontentloaded")
    page.locator(ready).first.wait_for()
    wait_idle(page)
    return page


def session_of(page) -> str:
    """The session the page's address names (``?session=…``)."""
    found = re.search(r"[?&]session=([0-9a-f]+)", page.url)
    assert found, page.url
    return found.group(1)


def forget(page) -> None:
    """Make ``page`` a browser the app has never seen, on an empty document (the last test's
    session closed with its page): no cookie (a shared server's owner secret), nothing any
    origin it visited stored (the sidebar's sections), the pointer out of the way."""
    page.goto("about:blank")
    context = page.context
    origins = [o["origin"] for o in context.storage_state()["origins"]]
    if origins:
        cdp = context.new_cdp_session(page)
        for origin in origins:
            cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
        cdp.detach()
    context.clear_cookies()
    page.mouse.move(0, 0)


def open_sidebar(page) -> None:
    """Open the sidebar when it is collapsed (presenter mode collapses it)."""
    if page.locator("[data-testid='stSidebar'][data-collapsed='true']").count():
        page.locator("[data-testid='stExpandSidebarButton']").first.click()
        page.locator("[data-testid='stSidebar'][data-collapsed='false']").wait_for()
        wait_idle(page)


def fresh(page, scenario: str = "weather") -> None:
    """The scenario from its start: the app opens on the session saved last, which on the
    shared test server is another test's."""
    choose_scenario(page, scenario, wait=False)
    if not page.locator(".st-key-fd_controls").filter(has_text="step 0 ·").count():
        page.locator(".st-key-reset button").first.click()
    at_step(page, 0)


def at_step(page, n: int) -> None:
    page.locator(".st-key-fd_controls").filter(has_text=f"step {n} ·").wait_for()
    wait_idle(page)


def choose_scenario(page, scenario: str, wait: bool = True) -> None:
    box = page.get_by_role("combobox", name="Scenario")
    box.click()
    box.fill(scenario)
    # the option named so, not the first one the typed text matches (mcp_tasks, …)
    page.get_by_role("option", name=re.compile(rf"^{re.escape(scenario)} ")).click()
    wait_idle(page)
    if wait:
        at_step(page, 0)
