"""The Debugger on a projector: Chromium at 1280x720 with the sidebar collapsed.

The controls stay on screen however far the graphs scroll, the view follows the lit step,
presenter mode shows vendors side by side, and a clicker's keys step and undo. Screenshots go
to artifacts/screenshots/ (kept by CI).
"""

from __future__ import annotations

import pytest

from flowdebug.render.dot import HIGHLIGHT
from tests.e2e.app_server import ROOT, at_step, choose_scenario, wait_idle

SHOTS = ROOT / "artifacts" / "screenshots"
WIDTH, HEIGHT = 1280, 720
OPENS_DEBUGGER = True  # the conftest page fixture opens the weather scenario at step 0

pytestmark = pytest.mark.browser


# The current step's labels in the aligned view's first vendor, as boxes on screen.
LIT = f"""() => [...(document.querySelector("svg.fd-aligned g.fd-vendor")
    ?.querySelectorAll(".ev.current rect.bg[fill='{HIGHLIGHT}']") ?? [])]
    .map(p => {{ const r = p.getBoundingClientRect(); return [r.top, r.bottom]; }})"""

# The type of every text of the first two vendors, in CSS pixels as drawn on screen.
TYPE = """() => [...document.querySelectorAll("svg.fd-aligned g.fd-vendor")]
    .slice(0, 2).flatMap(g => [...g.querySelectorAll("text")])
    .map(t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a)"""

# The boxes of the first two vendors' lanes on screen.
VENDORS = """() => [...document.querySelectorAll("svg.fd-aligned g.fd-vendor")].slice(0, 2)
    .map(g => { const r = g.getBoundingClientRect();
                return {x: r.left, y: r.top, width: r.width, height: r.height}; })"""


def _inside(top: float, bottom: float) -> bool:
    return top >= 0 and bottom <= HEIGHT


def _follows_lit_step(page) -> None:
    """Until the current step's labels are on screen: the view follows them as graphs redraw."""
    page.wait_for_function(
        f"() => {{ const l = ({LIT})(); return l.length > 0 && l[0][0] >= 0"
        f" && l[l.length - 1][1] <= {HEIGHT}; }}",
        timeout=5_000,
    )


def _collapse_sidebar(page) -> None:
    page.locator("[data-testid='stSidebar']").hover()
    page.locator("[data-testid='stSidebarCollapseButton'] button").click()
    wait_idle(page)


def _presenter(page) -> None:
    """Presenter mode on: the app collapses the sidebar itself."""
    collapsed = page.locator("[data-testid='stSidebar'][data-collapsed='true']")
    if not page.locator(".st-key-presenter input").is_checked():
        page.get_by_text("Presenter mode (large type)").click()
        collapsed.wait_for(state="attached")
    elif not collapsed.count():  # already on (the session resumed): collapse it by hand
        _collapse_sidebar(page)
    wait_idle(page)


def choose_layout(page, label: str) -> None:
    """Pick the Debugger's graph layout (presenter mode opens on the teaching picture)."""
    option = page.get_by_text(label).first
    if not option.is_visible():  # the expander is closed (a click on an open one closes it)
        page.get_by_text("Graph layout").first.click()
    option.click()
    wait_idle(page)


def test_after_ten_steps_step_button_and_lit_step_are_on_screen(page):
    choose_scenario(page, "tasks")  # while the sidebar is open
    _collapse_sidebar(page)
    step = page.locator(".st-key-step button").first
    for n in range(1, 11):
        step.click()
        at_step(page, n)
    _follows_lit_step(page)
    box = step.bounding_box()
    assert box and _inside(box["y"], box["y"] + box["height"]), box
    assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, box
    lit = page.evaluate(LIT)
    assert lit and _inside(lit[0][0], lit[-1][1]), lit
    # Every control fits: none is cut to an ellipsis.
    for key in ("step", "step_turn", "run", "undo", "reset"):
        label = page.locator(f".st-key-{key} button p").first
        assert label.evaluate("e => e.scrollWidth <= e.clientWidth"), key
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "projector-step-10.png"))


def test_presenter_mode_puts_two_vendors_side_by_side(page):
    _presenter(page)
    choose_layout(page, "Aligned lanes per vendor")
    step = page.locator(".st-key-step button").first
    for n in range(1, 4):
        step.click()
        at_step(page, n)
    first, second = page.evaluate(VENDORS)
    assert abs(first["y"] - second["y"]) < 4, (first, second)  # one row
    assert first["x"] >= 0, first
    assert first["x"] + first["width"] <= second["x"], (first, second)
    assert second["x"] + second["width"] <= WIDTH, second
    _follows_lit_step(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "projector-presenter.png"))


def test_presenter_type_side_by_side_is_at_least_20px(page):
    _presenter(page)
    choose_layout(page, "Aligned lanes per vendor")
    page.locator(".st-key-step button").first.click()
    at_step(page, 1)
    sizes = page.evaluate(TYPE)
    assert sizes and min(sizes) >= 20, sorted(sizes)[:3]


def test_clicker_keys_step_and_undo(page):
    _collapse_sidebar(page)
    page.locator("h1").first.click()  # the focus on the page, not on a field
    page.keyboard.press("PageDown")
    at_step(page, 1)
    page.keyboard.press("ArrowRight")
    at_step(page, 2)
    page.keyboard.press("PageUp")
    at_step(page, 1)
    page.keyboard.press("ArrowLeft")
    at_step(page, 0)


# Where the Debugger's scrolling main area stands: (top, the most it can scroll).
SCROLLED = """() => { const m = document.querySelector("[data-testid='stMain']");
    return [m.scrollTop, m.scrollHeight - m.clientHeight]; }"""


def test_a_key_that_scrolls_ends_the_follow(page):
    """The view follows the lit step for 3 s after a Step, but never against a person: the
    keys that scroll (End, the arrows up and down, Home, Space) end it, as a wheel or a click
    does. Before, the follow scrolled the page back to the arrows under the reader's End."""
    _collapse_sidebar(page)
    page.locator("h1").first.click()  # the focus on the page, not on a field
    for n in range(1, 4):
        page.keyboard.press("PageDown")
        at_step(page, n)
    page.wait_for_function("() => !window.__fdFollowing", timeout=10_000)
    # As a Step's own call does it: the page learns of a step it had not drawn.
    assert page.evaluate(
        "() => { window.__fdStep = -1; window.__fdFollowStep(window.__fdStepNow);"
        " return window.__fdFollowing; }"
    )
    _follows_lit_step(page)
    page.keyboard.press("End")
    page.wait_for_function(f"() => {{ const [t, most] = ({SCROLLED})(); return t >= most - 2; }}")
    assert not page.evaluate("() => window.__fdFollowing")
    page.wait_for_timeout(600)  # four of the follow's beats
    top, most = page.evaluate(SCROLLED)
    assert most > 100 and top >= most - 2, (top, most)  # still where End put it
