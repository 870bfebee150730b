"""AppTest: presenter mode opens the Debugger on the teaching picture (issue 29), a custom
component fed the row table as data; the status line, the phase pill and the sidebar agree
with what the picture shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from flowdebug import protocols
from flowdebug.engine.execution.faults import parse_fault
from flowdebug.engine.session.debugger import Session
from flowdebug.views.debugger import refusals

ALL = list(protocols.PROTOCOLS)

PAGES = Path(__file__).resolve().parents[2] / "pages"


@pytest.fixture
def at() -> AppTest:
    app = AppTest.from_file(str(PAGES / "debugger.py"), default_timeout=60)
    app.session_state["presenter"] = True
    app.run()
    assert not app.exception
    return app


def table(app: AppTest) -> dict[str, Any]:
    """The row table the page hands the picture component."""
    [picture] = [e for e in app.get("bidi_component")]
    assert picture.proto.component_name == "flowdebug.teaching_picture"
    # JSON bytes: a dict Streamlit searches for dataframes, a string makes it import pandas.
    assert picture.proto.WhichOneof("data") == "bytes"
    return json.loads(picture.proto.bytes)


def cell_text(cell: dict[str, Any] | None) -> str:
    return " / ".join("".join(t for t, _ in line) for line in cell["lines"]) if cell else ""


def pill(app: AppTest) -> str:
    """Where the cycle stands: the label of the story's popover in the control bar."""
    return " ".join(b.proto.popover.label for b in app.get("popover"))


def test_presenter_mode_draws_the_teaching_picture_not_the_aligned_svg(at):
    at.button(key="step").click().run()
    data = table(at)
    assert [short for _, short in data["vendors"]] == [
        "Anthropic", "OpenAI Chat", "OpenAI Responses", "Gemini", "MCP", "Bedrock",
    ]  # fmt: skip
    assert [name for _, name in data["lanes"]] == ["User", "Runtime", "Model API",
                                                   "Tool / MCP server"]  # fmt: skip
    assert not any('class="fd-aligned-scroll"' in m.value for m in at.markdown)


def test_each_step_lights_its_rows_and_the_continuation_names_the_linking_fields(at):
    for _ in range(4):
        at.button(key="step").click().run()
    assert not at.exception
    data = table(at)
    lit = [r for r in data["rows"] if r["seq"] in data["lit"]]
    assert [r["kind"] for r in lit] == ["continuation"]
    pairs = zip(data["vendors"], lit[0]["cells"], strict=True)
    cells = {short: cell_text(c) for (_, short), c in pairs}
    assert 'tool_use_id: "call_2" · is_error: true' in cells["Anthropic"]
    assert 'tool_call_id: "call_2" · no error flag' in cells["OpenAI Chat"]
    assert 'toolUseId: "call_2" · status: "error"' in cells["Bedrock"]
    assert cells["MCP"] == ""  # MCP's results are on the execution rows
    # The lit event's wire, per vendor, under the picture.
    assert {v for v, _ in data["wire"]} >= {"Anthropic", "OpenAI Chat", "Gemini"}


def test_the_answer_step_is_named_for_the_answer_and_the_status_says_done(at):
    for _ in range(5):
        at.button(key="step").click().run()
    data = table(at)
    assert data["rows"][-1]["band"] == "answer"
    assert "**2 · Final answer** · step 5" in pill(at)
    assert at.info[0].proto.icon == "✅"


def test_choosing_fewer_vendors_sends_fewer_columns(at):
    at.session_state["protocols"] = ["gemini", "mcp"]
    at.button(key="step").click().run()
    assert [p for p, _ in table(at)["vendors"]] == ["gemini", "mcp"]


def test_after_a_refused_request_the_status_line_says_whose_cycle_halted():
    """A result dropped from the history: the vendors that refuse the next request halt
    there in the picture, and the line under the bar says so instead of "the cycle is done"."""
    s = Session.from_scenario("weather")
    s.set_faults([parse_fault("drop_result@#1")])
    s.run()
    app = AppTest.from_file(str(PAGES / "debugger.py"), default_timeout=60)
    app.session_state["presenter"] = True
    app.session_state["fd_session"] = s
    app.run()
    assert not app.exception
    refused = refusals(s.conversation, s.state.events, ALL)
    assert refused  # the weather cycle without one result: some vendor refuses it
    line = app.info[0].value
    assert app.info[0].proto.icon == "🛑" and "cycle halted" in line, line
    for name in refused:
        assert protocols.facts(name).short in line
    halted = [c for r in table(app)["rows"] for c in r["cells"] if c and c["error"]]
    assert halted


def test_the_export_panel_offers_the_picture_as_svg_and_png(at):
    at.button(key="step").click().run()
    at.expander(key="teaching_export_open")  # closed: no buttons sent with a Step
    assert not [b for b in at.get("download_button") if "teaching_" in b.proto.id]
    at.session_state["teaching_export_open"] = True
    at.run()
    ids = [b.proto.id for b in at.get("download_button")]
    assert any(i.endswith("teaching_svg_teaching") for i in ids), ids
    assert any(i.endswith("teaching_png_teaching") for i in ids), ids


def test_the_slides_are_made_from_the_session_as_it_stands_when_clicked():
    """The export panel is outside the Step's fragment: its files follow the Steps made since
    it was drawn."""
    from ui.picture import slide_data

    s = Session.from_scenario("weather")
    s.step()
    before = slide_data(s, ALL, None, None)
    s.step()
    after = slide_data(s, ALL, None, None)
    assert len(after["rows"]) > len(before["rows"])
    assert after["lit"] != before["lit"]


def test_in_presenter_mode_the_sidebar_line_leaves_out_the_step_the_bar_shows():
    """Its sidebar collapsed, a Step sends the sidebar's line only when the status changes."""
    app = AppTest.from_file(str(PAGES / "debugger.py"), default_timeout=60)
    app.session_state["presenter"] = True
    app.session_state["fd_session"] = Session.from_scenario("weather")
    app.run()
    first = app.session_state["fd_status_text"]
    app.button(key="step").click().run()
    assert not app.exception
    assert app.session_state["fd_session"].state.step == 1
    assert app.session_state["fd_status_text"] == first
    assert first.endswith("· ready") and "step" not in first, first
    app.session_state["presenter"] = False
    app.run()
    assert "· step 1 · ready" in app.session_state["fd_status_text"]
