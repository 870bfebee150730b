"""What every browser test shares: Chromium (Debian's, never a download), one app server per
module, and the rule that CI runs these tests rather than skipping them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.app_server import CHROMIUM, FLAGS, app_server

if not Path(CHROMIUM).exists() and os.environ.get("CI"):
    raise RuntimeError(f"{CHROMIUM} is missing: CI must install Debian's chromium")
HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Without Chromium (outside CI) the browser tests are skipped, saying why."""
    if Path(CHROMIUM).exists():
        return
    skip = pytest.mark.skip(reason="Chromium is not installed")
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app's URL, with a fresh sessions database for the module."""
    with app_server(tmp_path_factory.mktemp("store") / "sessions.db") as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium for the module."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield b
        b.close()
