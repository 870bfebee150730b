"""The instructor's side of a room on the Debugger, for the browser tests that open one."""

from __future__ import annotations

import re

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.app_server import wait_idle

CODE = re.compile(r"Room code: [A-Z2-7]{10}")


def open_room(teacher, tries: int = 3) -> str:
    """Open a room on ``teacher``'s Debugger (its panel unfolded first) and return its code.

    Opening is idempotent (a session's open room is returned again), so the press is made
    again when no code came of it: a press made while the page moved under the pointer (the
    view following a Step, waited out first, or a run redrawing it) can be lost. A clean
    clone's CI run waited 30 s for the code after one press, in each of the two room tests.
    What the page says is in the failure when no press opened it."""
    code = teacher.get_by_text(CODE).first
    panel = teacher.get_by_text("Room: attendees follow this session").first
    button = teacher.locator(".st-key-fd_room_open button").first
    # The view follows a Step's lit arrows for up to 3 s, scrolling under the pointer.
    teacher.wait_for_function("() => !window.__fdFollowing", timeout=10_000)
    for _ in range(tries):
        if not code.is_visible():
            if not button.is_visible():  # the panel is folded (or a press on it was lost)
                panel.click()
                wait_idle(teacher)
            button.click()
            wait_idle(teacher)
        try:
            code.wait_for(timeout=10_000)
        except PlaywrightTimeout:
            continue
        return re.search(r"[A-Z2-7]{10}", code.inner_text()).group(0)
    said = teacher.locator("[data-testid='stAlert'], [data-testid='stException']")
    raise AssertionError(
        f"no room code after {tries} presses of Open a room; the page says: "
        f"{said.all_inner_texts()!r}"
    )
