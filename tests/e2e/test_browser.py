"""The app in a real browser: Playwright drives Debian's Chromium against `streamlit run`.

Steps the weather scenario to the end, checks every protocol graph's rendered SVG for the
two parallel calls, the red timeout and the final answer, and saves a screenshot of each
page to artifacts/screenshots/ (kept by CI). Skipped only outside CI when Chromium is
missing; under CI=true a missing browser is a failure.
"""

from __future__ import annotations

import re
import time

import pytest

from tests.e2e.app_server import ROOT, open_sidebar, wait_idle

SHOTS = ROOT / "artifacts" / "screenshots"

pytestmark = pytest.mark.browser


CALLS = {
    "Anthropic Messages": ("tool_use call_1 get_weather", "tool_use call_2 get_weather"),
    "OpenAI Chat Completions": ("tool_calls[0] call_1", "tool_calls[1] call_2"),
    "OpenAI Responses": ("function_call call_id=call_1", "function_call call_id=call_2"),
    "Google Gemini": ("functionCall get_weather id=call_1", "functionCall get_weather id=call_2"),
    "MCP (JSON-RPC)": ("tools/call get_weather id=call_1", "tools/call get_weather id=call_2"),
}
FINAL = {
    "Anthropic Messages": "stop_reason: end_turn",
    "OpenAI Chat Completions": "finish_reason: stop",
    "OpenAI Responses": "output_text",
    "Google Gemini": "finishReason: STOP",
    "MCP (JSON-RPC)": "Paris is 18 degrees",
}


def _graphs(page) -> dict[str, str]:
    """Each vendor's title → the text and colours of its part of the aligned view (or of its
    separate graph's SVG)."""
    out = {}
    drawn = page.locator("svg.fd-aligned g.fd-vendor").all()
    for svg in drawn or page.locator("[data-testid='stGraphVizChart'] svg").all():
        html = svg.inner_html()
        texts = " ".join(re.findall(r">([^<]*)</(?:text|tspan)>", html))
        texts = texts.replace("&#45;", "-").replace("&gt;", ">").replace("&amp;", "&")
        texts = " ".join(texts.split())  # a label's lines are one phrase
        title = next((t for t in CALLS if t in texts), None)
        if title:
            out[title] = html + "\n" + texts
    return out


def _drawn(page, seconds: float = 30) -> dict[str, str]:
    """:func:`_graphs` once every vendor's drawing has its final answer (the graphs are drawn
    after the run's last rerun), or as they are at ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        graphs = _graphs(page)
        done = set(graphs) == set(CALLS) and all(FINAL[t] in c for t, c in graphs.items())
        if done or time.monotonic() > deadline:
            return graphs
        page.wait_for_timeout(100)


def test_weather_run_draws_every_protocols_cycle(page, server):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.goto(server, wait_until="domcontentloaded")
    step = page.locator(".st-key-step button").first
    step.wait_for()
    wait_idle(page)
    page.screenshot(path=str(SHOTS / "debugger-start.png"), full_page=True)
    status = page.locator("[data-testid='stAlert']").first
    expected = [
        "the model is asked",
        "the model asked for 2 calls",
        "2 results, 1 failed",
        "results sent",
        "the cycle is done",
    ]
    for text in expected:
        step.click()
        status.filter(has_text=text).wait_for()
        wait_idle(page)
    page.get_by_text("the cycle is done").wait_for()
    graphs = _drawn(page)
    assert set(graphs) == set(CALLS), sorted(graphs)
    for title, content in graphs.items():
        first, second = CALLS[title]
        assert first in content and second in content, title
        assert "timeout" in content, title
        red = re.findall(r'<(?:path|line)[^>]*stroke="#d11f1f"[^>]*>', content)
        assert red, f"{title}: no red arrow"
        assert FINAL[title] in content, title
    page.screenshot(path=str(SHOTS / "debugger-done.png"), full_page=True)


@pytest.mark.parametrize(
    "slug", ["tools", "history", "protocols", "failures", "compare", "sessions", "encodings"]
)
def test_every_page_renders(page, server, slug):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.goto(f"{server}/{slug}", wait_until="domcontentloaded")
    page.locator("h1").first.wait_for()
    wait_idle(page)
    assert not page.locator("[data-testid='stException']").count()
    page.screenshot(path=str(SHOTS / f"{slug}.png"), full_page=True)


def test_sidebar_settings_survive_page_switches(page, server):
    page.goto(server, wait_until="domcontentloaded")
    page.locator(".st-key-step button").first.wait_for()
    wait_idle(page)
    presenter = page.locator(".st-key-presenter input").first
    page.get_by_text("Presenter mode (large type)").click()
    wait_idle(page)
    assert presenter.is_checked()
    open_sidebar(page)  # presenter mode collapsed it
    # History then Protocols lost the setting once: each page switch is checked
    for name in ("History", "Protocols", "History", "Tools", "Debugger"):
        page.get_by_role("link", name=name).click()
        wait_idle(page)
        assert presenter.is_checked(), f"presenter mode lost on {name}"
    page.get_by_text("Presenter mode (large type)").click()  # and a change made here holds
    wait_idle(page)
    page.get_by_role("link", name="Protocols").click()
    wait_idle(page)
    assert not presenter.is_checked()
