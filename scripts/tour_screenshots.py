"""The README's tour screenshots, taken from the running app (`python scripts/tour_screenshots.py`).

Starts the app the way `make run` does (the Makefile's own `run` recipe, on a free port, with a
sessions database of its own), waits for ``/_stcore/health``, drives Debian's Chromium through
Playwright (never a downloaded browser) through each tour of the README, and writes the PNGs
under docs/tour/. Every wait is on something the page shows (a widget's key, a label, the
step in the bar, Streamlit's idle state), never a fixed sleep, so the script holds while the
Debugger's picture changes. It stops with an error when a page shows an exception.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.app_server import (  # noqa: E402
    CHROMIUM,
    FLAGS,
    _healthy,
    free_port,
    stop,
    wait_idle,
)

OUT = ROOT / "docs" / "tour"
WIDE = {"width": 1600, "height": 1000}
PROJECTOR = {"width": 1280, "height": 720}

# The developer's tool, as an OpenAI Chat tools list: a description that says nothing and
# parameters without descriptions, what the linter is there to catch.
PASTED = [
    {
        "type": "function",
        "function": {
            "name": "search_docs",
            "description": "Search docs.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["query"],
            },
        },
    }
]

# The main area's scroll position, unchanged for 400 ms (the Debugger's view follows the lit
# step with a smooth scroll after a Step).
_SCROLL_STILL = """() => {
  const m = document.querySelector('[data-testid="stMain"]') || document.scrollingElement;
  const w = window.__tourScroll ||= {at: null, since: performance.now()};
  const at = `${m.scrollTop},${m.scrollLeft}`;
  if (at !== w.at) { w.at = at; w.since = performance.now(); }
  return performance.now() - w.since >= 400;
}"""


def run_command(port: int) -> tuple[dict[str, str], list[str]]:
    """The Makefile's `run` recipe as make prints it for ``port``: (variables it sets, argv)."""
    printed = subprocess.run(
        ["make", "--no-print-directory", "-n", "run", f"PORT={port}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.replace("\\\n", " ")
    line = next(x for x in printed.splitlines() if "streamlit run" in x)
    words = shlex.split(line)
    env = {}
    while "=" in words[0] and words[0].split("=", 1)[0].isidentifier():
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    words[0] = str(ROOT / words[0]) if not Path(words[0]).is_absolute() else words[0]
    return env, words


@contextmanager
def app(store: Path, timeout: float = 90.0) -> Iterator[str]:
    """The app's URL, served by `make run`'s command on a free port until the block ends."""
    port = free_port()
    env, argv = run_command(port)
    environ = {
        **os.environ,
        **env,
        "FLOWDEBUG_DB": str(store / "sessions.db"),
        "STREAMLIT_SERVER_ADDRESS": "127.0.0.1",
    }
    with (store / "streamlit.log").open("wb") as log:
        proc = subprocess.Popen(argv, cwd=ROOT, env=environ, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while not _healthy(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = (store / "streamlit.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"the app did not become healthy on {url}:\n{tail}")
            time.sleep(0.2)
        yield url
    finally:
        stop(proc)


def settle(page) -> None:
    """Until the last action's run is drawn and the view has stopped scrolling; an exception
    on the page, or a navigation without the app's pages (app.py failed), stops the script."""
    wait_idle(page)
    page.wait_for_function(_SCROLL_STILL, polling=100, timeout=15_000)
    if page.locator("[data-testid='stException']").count():
        raise RuntimeError(page.locator("[data-testid='stException']").first.inner_text())
    nav = page.locator("[data-testid='stSidebarNav']")
    if nav.count() and not nav.get_by_text("Debugger", exact=True).count():
        raise RuntimeError("the sidebar lists files, not the app's pages: app.py failed")


def open_page(browser, url: str, viewport: dict[str, int], link: str = ""):
    """A fresh browser session on the app, then on the page whose sidebar link is ``link``
    (as a person gets there: a first visit at a page's own address can find the sidebar
    listing pages/'s files instead)."""
    page = browser.new_context(viewport=viewport).new_page()
    page.set_default_timeout(30_000)
    page.goto(url, wait_until="domcontentloaded")
    page.locator("h1").first.wait_for()
    settle(page)
    if link:
        page.locator("[data-testid='stSidebarNav']").get_by_role("link", name=link).click()
        page.wait_for_url(f"**/{link.lower()}*")
        page.locator("h1").first.wait_for()
        settle(page)
    return page


def shot(page, name: str) -> Path:
    """The viewport as docs/tour/<name>.png, in 256 colours (text and flat fills keep)."""
    page.mouse.move(page.viewport_size["width"] - 5, page.viewport_size["height"] - 5)
    settle(page)
    image = Image.open(io.BytesIO(page.screenshot())).convert("RGB")
    path = OUT / f"{name}.png"
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    return path


def at_step(page, n: int) -> None:
    page.locator(".st-key-fd_controls").get_by_text(f"step {n}", exact=False).first.wait_for()
    settle(page)


def to_top(locator) -> None:
    locator.evaluate("e => e.scrollIntoView({block: 'start'})")


# -- the tours ------------------------------------------------------------------------------------
def instructor(browser, url: str) -> list[Path]:
    """Presenter mode, the sidebar collapsed, the weather cycle stepped with the N key to the
    continuation, at a projector's 1280x720."""
    page = open_page(browser, url, PROJECTOR)
    page.get_by_text("Presenter mode (large type)").click()
    settle(page)  # presenter mode collapses the sidebar itself
    page.locator("[data-testid='stSidebar'][data-collapsed='true']").wait_for(state="attached")
    page.locator("h1").first.click()  # the keys go to the page, not to a field
    for n in range(1, 5):
        page.keyboard.press("n")
        at_step(page, n)
    return [shot(page, "instructor-presenter-1280x720")]


def developer(browser, url: str) -> list[Path]:
    """A tool pasted in OpenAI Chat's format and its lint findings; then the Compare page's A/B
    test of the weather tool's description against a vague one, on the offline emulator."""
    page = open_page(browser, url, WIDE, "Tools")
    paste = page.locator(".st-key-paste_text textarea")
    paste.fill(json.dumps(PASTED, indent=2))
    paste.press("Control+Enter")
    page.locator(".st-key-paste_import button").wait_for()
    settle(page)
    to_top(page.get_by_role("heading", name="Paste tools"))
    paste.evaluate("e => { e.scrollTop = 0; }")
    settle(page)
    shots = [shot(page, "developer-paste")]
    page.locator(".st-key-paste_import button").click()
    tool = page.get_by_role("heading", name="search_docs")
    tool.wait_for()
    settle(page)
    to_top(tool)
    shots.append(shot(page, "developer-lint"))

    page.get_by_role("link", name="Compare").click()
    page.locator(".st-key-ab_run button").wait_for()
    settle(page)
    page.locator(".st-key-ab_run button").click()
    table = page.locator("[data-testid='stDataFrame']").last  # the runs, in a closed expander
    table.wait_for(state="attached")
    settle(page)
    to_top(page.get_by_role("heading", name="A/B test a tool description"))
    settle(page)
    shots.append(shot(page, "developer-ab-test"))
    return shots


def encodings(browser, url: str) -> list[Path]:
    """The weather cycle's first response in every encoding, then the Protocols page stepped
    to the continuation: the phase, each vendor's verdict and the request it sends."""
    page = open_page(browser, url, WIDE, "Encodings")
    page.get_by_role("tab", name="response 1").click()
    settle(page)
    shots = [shot(page, "encodings-response")]
    page.get_by_role("link", name="Protocols").click()
    page.get_by_role("heading", name="Protocols").wait_for()
    settle(page)
    step = page.locator(".st-key-proto_step button").first
    for n in range(1, 5):
        step.click()
        page.get_by_text(f"step {n} ·").first.wait_for()
        settle(page)
    shots.append(shot(page, "encodings-protocols"))
    return shots


TOURS: list[Callable[..., list[Path]]] = [instructor, developer, encodings]
ONLY = {t.__name__: t for t in TOURS}


def main() -> int:
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as store, app(Path(store)) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            for tour in [ONLY[a] for a in sys.argv[1:]] or TOURS:
                for path in tour(browser, url):
                    print(f"{path.relative_to(ROOT)}  {path.stat().st_size // 1024} KiB")
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
