"""The developer's loop in a browser (issue 30, "Done when"): a new session with a tool of your
own, where the offline model calls that tool with arguments taken from the prompt; then a
description edit re-run on the same turn, with both requests shown and the one JSON path that
differs. At a 1280 by 720 screen, as a laptop shows it."""

from __future__ import annotations

import json

import pytest

from tests.e2e.app_server import at_step, choose_scenario, wait_idle

WIDTH, HEIGHT = 1280, 720
PROMPT = "Find flights from Paris to Tokyo on 2026-12-01"
VAGUE = "Searches stuff"
PRECISE = "Search flights between two cities on a date; returns flights with prices."
SCHEMA = {
    "type": "object",
    "properties": {p: {"type": "string"} for p in ("origin", "destination", "date")},
    "required": ["origin", "destination", "date"],
}
SCHEMA_TEXT = json.dumps(SCHEMA, indent=2)

pytestmark = pytest.mark.browser


def go(page, title: str, ready: str) -> None:
    """Open a page from the sidebar, as a person does, and wait for its control ``ready``."""
    page.get_by_role("link", name=title).click()
    page.locator(ready).first.wait_for()
    wait_idle(page)


def typed(page, key: str, text: str) -> None:
    box = page.locator(f".st-key-{key} textarea, .st-key-{key} input").first
    box.fill(text)
    box.press("Tab")  # the widget sends its value when it loses focus


def new_session(page, server: str, **fields: str) -> None:
    """Open the app, then a new session made on the Sessions page: the prompt, a tool named
    search_flights and the form's other ``fields`` (by widget key)."""
    page.goto(server, wait_until="domcontentloaded")
    page.locator(".st-key-step button").first.wait_for()
    wait_idle(page)
    go(page, "Sessions", ".st-key-sess_pick")
    page.get_by_text("New session: your own prompt and tools").click()
    wait_idle(page)
    for key, text in {"new_user": PROMPT, "new_tool_name_0": "search_flights", **fields}.items():
        typed(page, key, text)
    wait_idle(page)
    page.locator(".st-key-new_create button").click()
    page.get_by_text(f"Created “{PROMPT}” and opened it").wait_for()
    wait_idle(page)  # the rest of the page is drawn after the message


def test_a_tool_of_your_own_is_called_from_the_prompt_and_a_description_edit_re_runs_the_turn(
    page, server
):
    new_session(page, server, **{"new_tool_desc_0": VAGUE, "new_tool_schema_0": SCHEMA_TEXT})
    chooser = page.get_by_role("combobox", name="Session")
    assert chooser.input_value().startswith(PROMPT)  # the chooser shows the session just made

    # Two Steps: the declaration, then the offline model's turn.
    go(page, "Debugger", ".st-key-step button")
    assert page.get_by_role("combobox", name="Scenario").input_value().startswith("(no scenario")
    for n in (1, 2):
        page.locator(".st-key-step button").first.click()
        at_step(page, n)

    go(page, "History", ".st-key-history_undo")
    call = page.locator(".st-key-part_1_0 textarea").input_value()
    assert json.loads(call)["name"] == "search_flights"
    assert json.loads(call)["arguments"] == {
        "origin": "Paris",
        "destination": "Tokyo",
        "date": "2026-12-01",
    }

    # A better description, then the same turn again.
    go(page, "Tools", ".st-key-tools_undo")
    assert page.locator(".st-key-tool_description textarea").input_value() == VAGUE
    typed(page, "tool_description", PRECISE)
    wait_idle(page)
    page.locator(".st-key-tool_save button").click()
    page.get_by_text("Saved 'search_flights'.").wait_for()

    go(page, "History", ".st-key-history_undo")
    page.locator(".st-key-rerun_0 button").first.click()
    page.get_by_text("Re-ran the turn after message 0").wait_for()
    wait_idle(page)
    view = page.locator("[data-testid='stExpander']").filter(has_text="Re-run of the turn")
    assert "The requests differ at 1 JSON path(s)" in view.inner_text()
    diff = view.locator("[data-testid='stTable']").first.inner_text()
    assert "$.tools[0].description" in diff
    assert f'"{VAGUE}"' in diff and f'"{PRECISE}"' in diff
    assert "\\" not in diff  # text, not Markdown escapes
    codes = [json.loads(c) for c in view.locator("code").all_inner_texts() if '"messages"' in c]
    assert [c["tools"][0]["description"] for c in codes] == [VAGUE, PRECISE]
    assert codes[0]["messages"] == codes[1]["messages"]
    assert "The two model turns are the same" in view.inner_text()


def test_a_scenarios_tool_edited_after_a_tool_of_your_own_keeps_its_handler_after_a_step(
    page, server
):
    """From a session of your own (a fixed reply) to a scenario (a Python function): after a
    description edit and a Step, the Tools page still shows the function, and a second edit
    saves (the field came back empty and the save was refused)."""
    new_session(page, server)
    go(page, "Tools", ".st-key-tools_undo")
    assert page.get_by_role("combobox", name="Kind").input_value() == "fixed"

    go(page, "Debugger", ".st-key-step button")
    choose_scenario(page, "weather")
    function = "sample_tools.weather:get_weather"
    for edit in ("Weather, edited.", "Weather, edited twice."):
        go(page, "Tools", ".st-key-tools_undo")
        assert page.locator(".st-key-tool_function input").input_value() == function
        typed(page, "tool_description", edit)
        wait_idle(page)
        page.locator(".st-key-tool_save button").click()
        page.get_by_text("Saved 'get_weather'.").wait_for()
        go(page, "Debugger", ".st-key-step button")
        page.locator(".st-key-step button").first.click()
        wait_idle(page)
