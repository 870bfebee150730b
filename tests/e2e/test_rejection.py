"""A rejection acted out in the browser (issue 12 item 4), at a projector's 1280x720.

The Failures page drops the first call's result; on the Debugger, Run goes to the end. In the
aligned view, Anthropic's lanes then end with the request coming back as a red 400 carrying
Anthropic's own message, nothing drawn below it but the halt, while MCP (which has no such
rule) goes on to the answer on the rows below.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.app_server import ROOT, wait_idle

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1280, 720  # the conftest page fixture's viewport


SHOTS = ROOT / "artifacts" / "screenshots"
ANTHROPIC = "400 · tool_use ids were found without tool_result blocks immediately after"
WHOLE = "`tool_use` ids were found without `tool_result` blocks immediately after: call_1."
LANE_NAMES = {"User", "Runtime", "Model API", "Tool", "MCP server"}

# Every text of one vendor's lanes with its vertical position on the page, top to bottom.
TEXTS = """g => [...g.querySelectorAll('text')].map(t => {
    const r = t.getBoundingClientRect();
    return [t.textContent, r.top + window.scrollY, r.height];
}).sort((a, b) => a[1] - b[1])"""


def lanes_of(page, protocol: str):
    """One vendor's part of the aligned view."""
    return page.locator(f"svg.fd-aligned g.fd-vendor[data-protocol='{protocol}']").first


def test_a_dropped_result_is_refused_in_the_anthropic_lane_which_halts(page, server):
    page.goto(f"{server}/failures", wait_until="domcontentloaded")
    page.locator(".st-key-fault_apply button").wait_for()
    wait_idle(page)
    page.locator(".st-key-fault_kind input").click()
    page.keyboard.type("drop_result")  # the list is long: filter it, as a person would
    page.get_by_role("option", name=re.compile(r"^drop_result")).click()
    wait_idle(page)
    page.locator(".st-key-fault_target").get_by_text("the nth call of the session").click()
    wait_idle(page)
    page.locator(".st-key-fault_apply button").click()
    wait_idle(page)
    page.get_by_text("drop_result@#1").first.wait_for()

    page.get_by_role("link", name="Debugger").click()
    page.locator(".st-key-run button").first.wait_for()
    wait_idle(page)
    page.locator(".st-key-run button").first.click()
    page.locator("[data-testid='stAlert']").filter(has_text="the cycle is done").wait_for()
    wait_idle(page)

    anthropic = lanes_of(page, "anthropic")
    anthropic.locator("text", has_text="400 · tool_use ids were").wait_for()
    texts = anthropic.evaluate(TEXTS)
    labels = [(" ".join(t.split()), top) for t, top, _ in texts if t.strip() not in LANE_NAMES]
    drawn = " ".join(t for t, _ in labels)
    assert ANTHROPIC in drawn, drawn
    # The 400 is the last label of the lane, with the halt under it: its cycle stops there.
    start = next(i for i, (t, _) in enumerate(labels) if t.startswith("400 ·"))
    assert [t for t, _ in labels[start:]] == [
        ANTHROPIC,
        "■ cycle halted: the vendor refused the request",
    ]
    assert "stop_reason: end_turn" not in drawn
    red = anthropic.locator("text[fill='#d11f1f']").filter(has_text="400 ·")
    assert red.count() == 1
    # Its whole message is one hover away, and written out beneath the view.
    assert WHOLE in anthropic.inner_html()
    caption = page.locator("[data-testid='stAlert']").filter(has_text="refuses this request")
    assert caption.filter(has_text="Anthropic Messages").count() == 1
    assert WHOLE in " ".join(caption.filter(has_text="Anthropic Messages").inner_text().split())

    red.scroll_into_view_if_needed()
    box = red.bounding_box()
    assert box and box["y"] >= 0 and box["y"] + box["height"] <= 720, box
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "debugger-rejection.png"))

    mcp = lanes_of(page, "mcp")
    mcp_texts = mcp.evaluate(TEXTS)
    mcp_text = " ".join(" ".join(t for t, _, _ in mcp_texts).split())
    assert "400 ·" not in mcp_text
    # MCP went on: the runtime answered the user after the results went back, on rows below
    # Anthropic's refusal.
    assert mcp_text.count("tools/call get_weather") == 2
    refusal_top = next(top for t, top in labels if t.startswith("400 ·"))
    below = [t for t, top, _h in mcp_texts if top > refusal_top and t.strip() not in LANE_NAMES]
    assert len(below) >= 2, below  # the model's final answer, and the runtime's to the user
