"""A rejection acted out in the browser (issue 12 item 4), at a projector's 1280x720.

The Failures page drops the first call's result; on the Debugger, Run goes to the end. The
Anthropic graph then ends with the request coming back as a red 400 carrying Anthropic's own
message, nothing drawn below it, while MCP (which has no such rule) goes on to the answer.
"""

from __future__ import annotations

import re

import pytest

from tests.e2e.app_server import ROOT, wait_idle

pytestmark = pytest.mark.browser


SHOTS = ROOT / "artifacts" / "screenshots"
ANTHROPIC = "400 · tool_use ids were found without tool_result blocks immediately after"
WHOLE = "`tool_use` ids were found without `tool_result` blocks immediately after: call_1."
LANE_NAMES = {"User", "Runtime", "Model API", "Tool", "MCP server"}

# Every text of one graph's SVG with its vertical position on the page, top to bottom.
TEXTS = """svg => [...svg.querySelectorAll('text')].map(t => {
    const r = t.getBoundingClientRect();
    return [t.textContent, r.top + window.scrollY, r.height];
}).sort((a, b) => a[1] - b[1])"""


@pytest.fixture
def page(browser, server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    pg = ctx.new_page()
    pg.set_default_timeout(30_000)
    yield pg
    ctx.close()


def graph(page, title: str):
    """The rendered SVG of the graph whose title is ``title``."""
    return page.locator("[data-testid='stGraphVizChart'] svg").filter(has_text=title).first


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

    anthropic = graph(page, "Anthropic Messages")
    anthropic.get_by_text("400 · tool_use ids were").wait_for()
    page.wait_for_timeout(1000)  # the graphs finish their transitions
    texts = anthropic.evaluate(TEXTS)
    labels = [(t.strip(), top) for t, top, _ in texts if t.strip() not in LANE_NAMES]
    drawn = " ".join(t for t, _ in labels)
    assert ANTHROPIC in " ".join(drawn.split()), drawn
    # The 400 is the lowest label of the lane: its cycle halts there.
    start = next(i for i, (t, _) in enumerate(labels) if t.startswith("400 ·"))
    assert " ".join(t for t, _ in labels[start:]) == ANTHROPIC
    assert "stop_reason: end_turn" not in drawn
    red = anthropic.locator("text[fill='#d11f1f']").filter(has_text="400 ·")
    assert red.count() == 1
    # Its whole message is one hover away, and written out beneath the graph.
    assert WHOLE in anthropic.inner_html()
    caption = page.locator("[data-testid='stAlert']").filter(has_text="refuses this request")
    assert caption.filter(has_text="Anthropic Messages").count() == 1
    assert WHOLE in " ".join(caption.filter(has_text="Anthropic Messages").inner_text().split())

    red.scroll_into_view_if_needed()
    box = red.bounding_box()
    assert box and box["y"] >= 0 and box["y"] + box["height"] <= 720, box
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "debugger-rejection.png"))

    mcp = graph(page, "MCP (JSON-RPC)")
    mcp_text = " ".join(t for t, _, _ in mcp.evaluate(TEXTS))
    assert "400 ·" not in mcp_text
    # MCP went on: the runtime answered the user after the results went back.
    assert mcp_text.count("tools/call get_weather") == 2
    edges = re.findall(r"r(\d+)_user-&gt;r\d+_runtime", mcp.inner_html())
    assert len(edges) == 2, edges  # the question, and the answer
