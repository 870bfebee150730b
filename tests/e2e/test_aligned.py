"""The aligned view in Chromium at a projector's 1280x720 (issue 12 items 1 and 6).

The weather scenario run to the end: every vendor's call labels and final answer sit at the
same height; hovering or selecting an event lights it in every vendor; with streaming shown,
each vendor's arguments assemble under the call. Screenshots go to artifacts/screenshots/.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from flowdebug.render.aligned_svg import SELECTED
from tests.e2e.app_server import ROOT, wait_idle

SHOTS = ROOT / "artifacts" / "screenshots"
WIDTH, HEIGHT = 1280, 720
OPENS_DEBUGGER = True  # the conftest page fixture opens the weather scenario at step 0

pytestmark = pytest.mark.browser

# Per vendor, the top of event N's label on the page.
TOPS = """n => Object.fromEntries([...document.querySelectorAll("svg.fd-aligned g.fd-vendor")]
    .map(g => [g.dataset.protocol, g.querySelector(`.ev-${n}[data-kind='arrow'] text.label`)])
    .filter(([, t]) => t).map(([p, t]) => [p, t.getBoundingClientRect().top]))"""

# Per vendor, the fill of event N's label box as drawn (CSS rules included).
FILLS = """n => [...document.querySelectorAll(
    `svg.fd-aligned g.fd-vendor .ev-${n}[data-kind='arrow'] rect.bg`)]
    .map(r => [getComputedStyle(r).fill, getComputedStyle(r).fillOpacity])"""


def _rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def _run_to_the_end(page) -> None:
    page.locator(".st-key-run button").first.click()
    page.locator("[data-testid='stAlert']").filter(has_text="the cycle is done").wait_for()
    wait_idle(page)
    page.locator("svg.fd-aligned").wait_for()
    # The view has followed the lit step (it does for 3 s after a step).
    page.wait_for_function("() => !window.__fdFollowing", timeout=10_000)


def test_calls_and_final_answer_sit_at_the_same_height_in_every_vendor(page):
    _run_to_the_end(page)
    # The weather trace: 3 and 4 are the two calls, 10 the final answer.
    for seq in (3, 4, 10):
        tops = page.evaluate(TOPS, seq)
        assert len(tops) == 6, tops  # every vendor draws it
        assert max(tops.values()) - min(tops.values()) <= 4, (seq, tops)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "aligned-1280.png"))


def test_hovering_an_event_lights_it_in_every_vendor(page):
    _run_to_the_end(page)
    label = page.locator("svg.fd-aligned g.fd-vendor .ev-3[data-kind='arrow'] rect.bg").first
    # In the middle of the screen, clear of the sticky controls; then the mouse goes there.
    box = label.bounding_box()
    assert box
    page.mouse.move(WIDTH / 2, HEIGHT / 2)
    page.mouse.wheel(0, box["y"] - HEIGHT / 2)
    page.mouse.move(5, HEIGHT / 2)  # off the view: nothing is hovered
    page.wait_for_timeout(400)
    before = page.evaluate(FILLS, 3)
    assert all(opacity == "0" for _, opacity in before), before
    box = label.bounding_box()
    assert box
    page.mouse.move(box["x"] + 4, box["y"] + box["height"] / 2)
    page.wait_for_timeout(200)
    lit = page.evaluate(FILLS, 3)
    assert len(lit) == 6 and all(tuple(f) == (_rgb(SELECTED), "1") for f in lit), lit
    assert all(o == "0" for _, o in page.evaluate(FILLS, 4))  # only that event


def test_selecting_an_event_lights_it_in_every_vendor(page):
    _run_to_the_end(page)
    box = page.get_by_role("combobox", name="Light one event in every vendor")
    box.click()
    box.fill("4 · request")
    page.keyboard.press("Enter")
    wait_idle(page)
    chosen = page.locator("svg.fd-aligned g.fd-vendor .ev-4.selected[data-kind='arrow']")
    assert chosen.count() == 6
    assert all(tuple(f) == (_rgb(SELECTED), "1") for f in page.evaluate(FILLS, 4))


def test_streamed_arguments_assemble_under_each_call(page):
    _run_to_the_end(page)
    switch = page.locator(".st-key-show_stream label").first
    if not switch.is_visible():  # a click on the panel's title closes it when it is open
        page.get_by_text("Graph layout").first.click()
    switch.wait_for()
    wait_idle(page)
    switch.click()
    # The switch took the click (the expander may still have been opening), and the view
    # drawn since has the rows.
    expect(page.locator(".st-key-show_stream input")).to_be_checked()
    wait_idle(page)
    anthropic = page.locator("svg.fd-aligned g.fd-vendor[data-protocol='anthropic']")
    deltas = anthropic.locator(".ev-3 text.delta")
    expect(deltas.first).to_be_attached()
    assert deltas.count() >= 2
    last = " ".join(deltas.last.text_content().split())
    assert last.endswith('"unit": "c"}'), last
    gemini = page.locator("svg.fd-aligned g.fd-vendor[data-protocol='gemini'] .ev-3 text.delta")
    assert gemini.count() == 1  # Gemini sends the call whole
    page.locator("[data-testid='stCaptionContainer']").filter(has_text="Streamed").wait_for()
    deltas.first.scroll_into_view_if_needed()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "aligned-stream.png"))


def test_the_drawing_waits_for_its_box_and_an_older_drawing_never_overwrites_a_newer(browser):
    # On a page's first load Streamlit may run the view's script before it has put the box
    # in the page (one fresh load in six drew nothing here): the script waits for the box.
    from ui.graphs import BOX, fill_script

    ctx = browser.new_context()
    pg = ctx.new_page()
    try:
        pg.set_content("<body></body>")
        add = "html => document.body.insertAdjacentHTML('beforeend', html)"
        script = "html => { const s = document.createElement('script');"
        script += " s.textContent = new DOMParser().parseFromString(html, 'text/html')"
        script += ".querySelector('script').textContent; document.body.appendChild(s); }"
        pg.evaluate(script, fill_script('<svg class="old"></svg>', "window.__followed = 1;"))
        pg.evaluate(script, fill_script('<svg class="new"></svg>', "window.__followed = 2;"))
        assert pg.evaluate("window.__followed") is None  # no box yet: nothing filled
        pg.evaluate(add, BOX)
        pg.wait_for_function("document.querySelector('.fd-aligned-scroll svg') !== null")
        pg.wait_for_timeout(200)  # time for the older script's watch to act, if it did
        assert pg.evaluate("document.querySelector('.fd-aligned-scroll').innerHTML") == (
            '<svg class="new"></svg>'
        )
        assert pg.evaluate("window.__followed") == 2
        # With the box there, a drawing fills it at once.
        pg.evaluate(script, fill_script('<svg class="next"></svg>'))
        assert 'class="next"' in pg.evaluate(
            "document.querySelector('.fd-aligned-scroll').innerHTML"
        )
    finally:
        ctx.close()
