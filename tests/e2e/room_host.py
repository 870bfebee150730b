"""The instructor's side of a room on the Debugger, for the browser tests that open one.

Opening and closing a room are idempotent (a session's open room is returned again; a room
closed shows the Open button again), so their presses are made again when nothing came of
them: a press made while a run redrew the page was lost under CI's load, and a clean clone's
run waited 30 s for the room's code after one press, in each of the two room tests."""

from __future__ import annotations

import re

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.app_server import wait_idle

CODE = re.compile(r"Room code: [A-Z2-7]{10}")
TRIES = 3


def _press_until(page, button, done, what: str) -> None:
    """Press ``button`` until ``done`` is visible (a press again only while the button is
    still there); the failure says what the page showed."""
    for _ in range(TRIES):
        if button.is_visible():
            button.click()
            wait_idle(page)
        try:
            done.wait_for(timeout=10_000)
            return
        except PlaywrightTimeout:
            continue
    said = page.locator("[data-testid='stAlert'], [data-testid='stException']")
    raise AssertionError(f"{what} after {TRIES} presses; the page says: {said.all_inner_texts()!r}")


def open_room(teacher) -> str:
    """Open a room on ``teacher``'s Debugger (its panel unfolded first) and return its code."""
    # The view follows a Step's lit arrows for up to 3 s: wait it out, it scrolls the page.
    teacher.wait_for_function("() => !window.__fdFollowing", timeout=10_000)
    code = teacher.get_by_text(CODE).first
    button = teacher.locator(".st-key-fd_room_open button").first
    if not code.is_visible() and not button.is_visible():  # the panel is folded
        teacher.get_by_text("Room: attendees follow this session").first.click()
        button.wait_for()
    _press_until(teacher, button, code, "no room code")
    return re.search(r"[A-Z2-7]{10}", code.inner_text()).group(0)


def close_room(teacher) -> None:
    """Close the room open on ``teacher``'s Debugger."""
    teacher.wait_for_function("() => !window.__fdFollowing", timeout=10_000)
    close = teacher.locator(".st-key-fd_room_close button").first
    again = teacher.locator(".st-key-fd_room_open button").first
    _press_until(teacher, close, again, "the room still open")
