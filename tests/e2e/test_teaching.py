"""The teaching picture on a projector (issue 29 "Done when"): Chromium at 1280x720, presenter
mode, the sidebar collapsed, the weather scenario stepped to its end, nothing scrolled by hand.
Each frame is read from the text inside the viewport (not under the sticky header, not off
screen). Screenshots go to artifacts/screenshots/."""

from __future__ import annotations

import pytest

from tests.e2e.app_server import ROOT, at_step, wait_idle
from tests.e2e.test_projector import _presenter, choose_layout

SHOTS = ROOT / "artifacts" / "screenshots"
WIDTH, HEIGHT = 1280, 720
OPENS_DEBUGGER = True  # the conftest page fixture opens the weather scenario at step 0
VENDORS = ["Anthropic", "OpenAI Chat", "OpenAI Responses", "Gemini", "MCP", "Bedrock"]

pytestmark = pytest.mark.browser

# Every text of the picture a reader sees: inside the viewport and not covered by another
# element (the sticky header covers the rows that scrolled under it); with its type size.
SEEN = """() => {
  const out = [];
  const parts = [".fdp-vendor", ".fdp-lane-name", ".fdp-band-name", ".fdp-label", ".fdp-words",
    ".fdp-json > div"].join(", ");
  for (const el of document.querySelectorAll(parts)) {
    const r = el.getBoundingClientRect();
    const off = r.bottom <= 0 || r.top >= innerHeight || r.right <= 0 || r.left >= innerWidth;
    if (r.width === 0 || off) continue;
    const x = Math.min(Math.max(r.left + 3, 0), innerWidth - 1);
    const y = Math.min(Math.max(r.top + Math.min(r.height / 2, 10), 0), innerHeight - 1);
    const hit = document.elementFromPoint(x, y);
    if (!hit || !(el.contains(hit) || hit.contains(el))) continue;
    out.push({text: el.textContent, size: parseFloat(getComputedStyle(el).fontSize), top: r.top});
  }
  return out;
}"""

# The smallest type of any text node inside the picture, as rendered.
SMALLEST = """() => {
  let least = Infinity;
  const walk = document.createTreeWalker(document.querySelector(".fdp"), NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (!n.textContent.trim()) continue;
    least = Math.min(least, parseFloat(getComputedStyle(n.parentElement).fontSize));
  }
  return least;
}"""

# The tops of the final answer's first line in the lanes and in every vendor's cell.
FINAL_TOPS = """() => {
  const row = document.querySelector(".fdp-row[data-kind='final_answer']");
  return [...row.querySelectorAll(".fdp-label, .fdp-cell > .fdp-words:first-child")]
    .map(e => e.getBoundingClientRect().top);
}"""

# Text wider than the cell that holds it (a wire name running into the next vendor's column).
OVERFLOW = """() => [...document.querySelectorAll(".fdp-cell")].flatMap(cell => {
  const box = cell.getBoundingClientRect();
  return [...cell.querySelectorAll("span")].filter(s => {
    const r = s.getBoundingClientRect();
    return r.width && (r.right > box.right + 1 || r.left < box.left - 1);
  }).map(s => s.textContent);
})"""

# The control bar's buttons and texts: their tops (one row) and their type sizes.
BAR = """() => {
  const bar = document.querySelector(".st-key-fd_controls");
  const tops = [...bar.querySelectorAll("button")].filter(b => b.offsetParent)
    .map(b => b.getBoundingClientRect().top);
  const sizes = [];
  const walk = document.createTreeWalker(bar, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (!n.textContent.trim() || !n.parentElement.offsetParent) continue;
    if (n.parentElement.closest("[data-testid='stIconMaterial']")) continue;  // an icon's name
    sizes.push([n.textContent.trim(), parseFloat(getComputedStyle(n.parentElement).fontSize)]);
  }
  // What scrolls under the sticky bar must not show through it: an opaque background.
  const wrapper = bar.closest("[data-testid='stLayoutWrapper']");
  return {tops, sizes, background: getComputedStyle(wrapper).backgroundColor};
}"""

# The lit rows inside what the sticky header leaves of the viewport (taller than that, their
# foot in it): the picture has followed the step.
LIT_IN_VIEW = """() => {
  const rows = [...document.querySelectorAll(".fdp-row.fdp-lit")];
  const head = document.querySelector(".fdp-head-row");
  if (!rows.length || !head) return false;
  const top = head.getBoundingClientRect().bottom, bottom = innerHeight;
  const first = rows[0].getBoundingClientRect();
  const last = rows[rows.length - 1].getBoundingClientRect();
  return last.bottom <= bottom && (first.top >= top || last.bottom - first.top > bottom - top);
}"""

SIDEWAYS = """() => [document.scrollingElement, document.querySelector("[data-testid='stMain']")]
  .filter(Boolean).some(e => e.scrollWidth > e.clientWidth + 1)"""


def _frame(page) -> str:
    """The text a reader sees in the picture now (every part checked at 18 px or more)."""
    seen = page.evaluate(SEEN)
    small = [s for s in seen if s["size"] < 18]
    assert not small, small[:5]
    return "\n".join(s["text"] for s in seen)


def test_weather_to_its_end_every_frame_names_all_six_and_links_each_result(page):
    _presenter(page)
    step = page.locator(".st-key-step button").first
    frames = {}
    for n in range(1, 6):
        step.click()
        at_step(page, n)
        page.wait_for_function(LIT_IN_VIEW, polling=50)  # the picture followed the step
        frames[n] = _frame(page)
        assert not page.evaluate(SIDEWAYS), f"sideways scroll at step {n}"
        assert page.evaluate(OVERFLOW) == [], n
        assert not page.locator("[data-testid='stException']").count(), n
        bar = page.evaluate(BAR)
        assert max(bar["tops"]) - min(bar["tops"]) <= 4, bar["tops"]  # the controls: one row
        assert [t for t, size in bar["sizes"] if size < 18] == [], bar["sizes"]
        assert bar["background"] not in ("transparent", "rgba(0, 0, 0, 0)"), bar["background"]
        assert page.evaluate(SMALLEST) >= 18
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"teaching-1280-step-{n}.png"))
        for vendor in VENDORS:
            assert vendor in frames[n], (n, vendor)
    continuation = frames[4]
    for term in ("tool_use_id", "is_error", "tool_call_id", "call_id", "functionResponse",
                 "toolUseId", "isError"):  # fmt: skip
        assert term in continuation, term
    assert "get_weather(Tokyo) → timeout" in continuation
    tops = page.evaluate(FINAL_TOPS)
    assert len(tops) == 1 + 5  # the lanes and the five model APIs (MCP has no final turn)
    assert max(tops) - min(tops) <= 4, tops
    assert "ANSWER" in frames[5].upper()


def test_a_click_on_an_event_lights_it_in_every_column_and_tells_the_server(page):
    _presenter(page)
    step = page.locator(".st-key-step button").first
    for n in range(1, 4):
        step.click()
        at_step(page, n)
    row = page.locator(".fdp-row[data-kind='tool_call']").last
    row.click()
    wait_idle(page)
    lit = page.locator(".fdp-row.fdp-lit")
    assert lit.count() == 1
    assert lit.first.get_attribute("data-kind") == "tool_call"
    # The server heard it: the lit event's wire is the call's, in each vendor's terms.
    wire = page.locator(".fdp-wire").inner_text()
    assert '"toolUseId": "call_2"' in wire and '"call_id": "call_2"' in wire


def _told(page) -> int:
    """The number of the event Play tells now ("event N of M")."""
    text = page.locator(".st-key-fd_play_count").inner_text()
    return int(text.split("event ", 1)[1].split(" ", 1)[0])


def test_play_tells_the_cycle_over_the_picture_and_paused_arrows_move_one_event(page):
    _presenter(page)
    page.locator(".st-key-play button").first.click()  # runs the cycle, then tells it
    page.wait_for_function(
        "() => /event [3-9] of/.test(document.querySelector('.st-key-fd_play_count')"
        "?.innerText || '')",
        timeout=60_000,
    )
    page.locator(".st-key-play button").first.click()  # pause
    page.locator(".st-key-play_next button").first.wait_for()
    wait_idle(page)
    told = _told(page)
    rows = page.locator(".fdp-row").count()
    step = page.locator(".st-key-fd_controls").inner_text()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        f"() => document.querySelector('.st-key-fd_play_count').innerText.includes("
        f"'event {told + 1} of')"
    )
    wait_idle(page)
    assert page.locator(".fdp-row").count() == rows + 1  # the picture shows one event more
    lit = page.locator(".fdp-row.fdp-lit")
    assert lit.count() == 1 and lit.first.get_attribute("data-seq") == str(told)
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(
        f"() => document.querySelector('.st-key-fd_play_count').innerText.includes("
        f"'event {told} of')"
    )
    wait_idle(page)
    assert page.locator(".fdp-row").count() == rows
    # The arrows moved the playback, not the session: no step undone.
    assert "step 5" in step and "step 5" in page.locator(".st-key-fd_controls").inner_text()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "teaching-1280-play-paused.png"))


# The lane header's top and the bar's bottom, as drawn (the header sticks under the bar).
UNDER_BAR = """() => {
  const bar = document.querySelector(".st-key-fd_controls")
    .closest("[data-testid='stLayoutWrapper']").getBoundingClientRect();
  const head = document.querySelector(".fdp-head-row").getBoundingClientRect();
  return {bar: bar.bottom, head: head.top};
}"""


def test_outside_presenter_mode_the_controls_keep_one_row_above_the_lane_header(page):
    """At 1280x720 beside the open sidebar the bar wrapped to two rows once a phase's name
    was long, and the picture's sticky lane header then sat over it; and names ran out of
    their narrow cells."""
    choose_layout(page, "Teaching picture (one cycle")
    page.get_by_text("Graph layout").first.click()  # closed again: the bar as a reader sees it
    # Closing reruns the page, which then draws the panel without its choices. A Turn pressed
    # before that run came would be abandoned by it (a run started by another widget stops the
    # one under way), as it was once in CI when the run took over wait_idle's 500 ms to begin.
    page.get_by_text("Teaching picture (one cycle").first.wait_for(state="detached")
    wait_idle(page)
    turn = page.locator(".st-key-step_turn button").first
    SHOTS.mkdir(parents=True, exist_ok=True)
    for n in (4, 5):  # a Turn ends on the continuation (its long name), then on the answer
        turn.click()
        at_step(page, n)
        page.wait_for_timeout(300)  # the picture sticks its header under the bar it measured
        tops = page.evaluate(BAR)["tops"]
        assert max(tops) - min(tops) <= 4, (n, tops)
        where = page.evaluate(UNDER_BAR)
        assert where["head"] >= where["bar"] - 1, (n, where)
        # Six columns of about 90 px: a wire name breaks inside its cell ("stop_reason:" ran
        # into OpenAI Chat's column), in smaller type than the projector's.
        assert page.evaluate(OVERFLOW) == [], n
        page.screenshot(path=str(SHOTS / f"teaching-1280-sidebar-step-{n}.png"))
