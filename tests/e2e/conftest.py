"""What every browser test shares: Chromium (Debian's, never a download), one app server per
test process, and the rule that CI runs these tests rather than skipping them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.app_server import CHROMIUM, FLAGS, app_server, fresh, wait_idle

if not Path(CHROMIUM).exists() and os.environ.get("CI"):
    raise RuntimeError(f"{CHROMIUM} is missing: CI must install Debian's chromium")
HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A browser module's tests run on one worker (``--dist loadgroup``: its module-scoped
    server and browser start once); without Chromium (outside CI) they are skipped, saying
    why."""
    skip = None if Path(CHROMIUM).exists() else pytest.mark.skip(reason="Chromium is not installed")
    for item in items:
        path = Path(item.path).resolve()
        if HERE in path.parents:
            item.add_marker(pytest.mark.xdist_group(f"e2e-{path.stem}"))
            if skip:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """The app's URL, with a fresh sessions database, shared by the modules one worker runs:
    each test opens its own browser context, so its own session (sessions belong to the
    browser that made them), and none changes the server's settings. A module that needs a
    server of its own (another page, other settings) starts it itself."""
    with app_server(tmp_path_factory.mktemp("store") / "sessions.db") as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium for every browser module one worker runs (one sync Playwright per
    thread: a module needing another kind of page makes its own context from this one);
    each test or module works in a browser context of its own."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield b
        b.close()


def _at_start_of(page, scenario: str) -> bool:
    """Whether the Debugger shows ``scenario`` at step 0 already (a new browser's session on
    a server that does not resume the session saved last): nothing to choose or reset."""
    chosen = page.get_by_role("combobox", name="Scenario").input_value()
    at_zero = page.locator(".st-key-fd_controls").filter(has_text="step 0 ·").count()
    return chosen.startswith(f"{scenario} ") and bool(at_zero)


@pytest.fixture
def page(browser, server, request):
    """A new browser context (so a session of its own) at the module's ``WIDTH`` by ``HEIGHT``
    (1700 by 1300 if it names none); a module with ``OPENS_DEBUGGER = True`` gets the page
    already on the Debugger with the weather scenario at step 0."""
    module = request.module
    size = {"width": getattr(module, "WIDTH", 1700), "height": getattr(module, "HEIGHT", 1300)}
    ctx = browser.new_context(viewport=size)
    pg = ctx.new_page()
    pg.set_default_timeout(30_000)
    if getattr(module, "OPENS_DEBUGGER", False):
        pg.goto(server, wait_until="domcontentloaded")
        pg.locator(".st-key-step button").first.wait_for()
        wait_idle(pg)
        if not _at_start_of(pg, "weather"):
            fresh(pg)
    yield pg
    ctx.close()
