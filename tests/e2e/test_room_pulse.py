"""A follower's page in Chromium costs no script run while the room stands still (issue 33
item 4): its component polls the room's pulse route over plain HTTP, and the page runs again
only when the instructor's Step moved the pulse, within a second; closing the room stops the
polls with a clear line."""

from __future__ import annotations

import re
import time

import pytest

from tests.e2e.app_server import wait_idle
from tests.e2e.test_two_servers import open_page, step

pytestmark = pytest.mark.browser
FOLLOW_S = 1.0  # a follower sees a Step within this of the instructor's save
STEP_S = 0.5  # the instructor's own run of the Step, which the delay here counts too
IDLE_S = 3.0  # how long the follower is watched while nothing changes

# Script runs, as the page's root says them (data-test-script-state changes), and the polls.
_WATCH = """() => {
  if (!window.__fdRuns) {
    window.__fdRuns = {changes: 0};
    new MutationObserver(() => { window.__fdRuns.changes += 1; }).observe(
      document.querySelector('[data-testid="stApp"]'),
      {attributes: true, attributeFilter: ['data-test-script-state']});
  }
  return {runs: window.__fdRuns.changes, polls: window.__fdPulsePolls || 0};
}"""


def _shows_step(page, n: int, timeout: float) -> None:
    page.get_by_text(re.compile(rf"^Room [A-Z2-7]{{10}} · .* · step {n}\b")).first.wait_for(
        timeout=timeout
    )


def test_an_idle_follower_runs_no_script_sees_a_step_within_a_second_and_stops_when_closed(
    server, browser
):
    teacher_ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    follower_ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        teacher = open_page(teacher_ctx, server)
        step(teacher, "the model is asked")
        teacher.get_by_text("Room: attendees follow this session").first.click()
        teacher.locator(".st-key-fd_room_open button").first.click()
        found = teacher.get_by_text(re.compile(r"Room code: [A-Z2-7]{10}")).first
        found.wait_for()
        code = re.search(r"[A-Z2-7]{10}", found.inner_text()).group(0)

        follower = follower_ctx.new_page()
        follower.set_default_timeout(30_000)
        follower.goto(f"{server}/room?room={code}", wait_until="domcontentloaded")
        _shows_step(follower, 1, 30_000)
        wait_idle(follower)
        before = follower.evaluate(_WATCH)
        time.sleep(IDLE_S)
        idle = follower.evaluate(_WATCH)
        assert idle["runs"] == before["runs"], "a script run while nothing changed"
        assert idle["polls"] - before["polls"] >= IDLE_S / 0.5 - 2  # it kept asking

        # From the click: the instructor's run (the Step and its save), then the follower's.
        t0 = time.perf_counter()
        teacher.locator(".st-key-step button").first.click()
        _shows_step(follower, 2, 10_000)
        delay = time.perf_counter() - t0
        print(f"the instructor's click to the follower's page at the new step: {delay:.2f} s")
        assert delay < FOLLOW_S + STEP_S
        wait_idle(teacher)
        wait_idle(follower)

        teacher.locator(".st-key-fd_room_close button").first.click()
        follower.get_by_text("the instructor closed this room").first.wait_for(timeout=5_000)
        wait_idle(follower)
        closed = follower.evaluate(_WATCH)
        time.sleep(1.5)
        assert follower.evaluate(_WATCH)["polls"] == closed["polls"], "it polls a closed room"
    finally:
        teacher_ctx.close()
        follower_ctx.close()
