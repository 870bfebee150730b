"""AppTest: the Protocols page — payload columns, the diff after a Step, verdicts, the wire."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from flowdebug.model import Message, Text
from tests.app.markdown import shown

PAGE = Path(__file__).resolve().parents[2] / "pages" / "protocols.py"
TITLES = [
    "Anthropic Messages",
    "OpenAI Chat Completions",
    "OpenAI Responses",
    "Google Gemini",
    "MCP (JSON-RPC)",
    "Bedrock Converse",
]


@pytest.fixture
def at() -> AppTest:
    app = AppTest.from_file(str(PAGE), default_timeout=60)
    app.run()
    assert not app.exception
    return app


def session(app: AppTest):
    return app.session_state.fd_session


def tab(app: AppTest, label: str):
    return next(t for t in app.tabs if t.label == label)


def headers(block) -> list[str]:
    return [m.value.removeprefix("#### ") for m in block.markdown if m.value.startswith("#### ")]


def test_default_scenario_shows_the_six_request_columns(at):
    request = tab(at, "Request")
    assert headers(request) == TITLES
    codes = request.code
    assert len(codes) == 6 and all(c.language == "json" for c in codes)
    assert '"messages": [' in codes[0].value and '"contents": [' in codes[3].value
    assert '"method": "tools/list"' in codes[4].value
    assert '"toolConfig": {' in codes[5].value and '"toolSpec": {' in codes[5].value
    assert any("nothing to compare yet" in c.value for c in request.caption)
    assert "No response yet: request 1 is the next one sent." in [
        c.value for c in tab(at, "Response").caption
    ]


def test_after_the_declaration_request_1_is_out_and_waits_for_its_answer(at):
    at.button(key="proto_step").click().run()
    heading = next(m.value for m in at.markdown if m.value.startswith("### "))
    assert "step 1 · request 1 sent — waits for the model's answer" in heading
    assert "No response yet: request 1 waits for the model's answer." in [
        c.value for c in tab(at, "Response").caption
    ]


def test_verdict_row_names_every_vendor(at):
    row = [m.value for m in at.markdown if m.value.startswith("**")][:6]
    assert [r.split("**")[1] for r in row] == TITLES
    assert all(":green[✅ **accepted**]" in r for r in row)


def test_step_runs_a_phase_and_the_diff_appears(at):
    for _ in range(3):
        at.button(key="proto_step").click().run()
        assert not at.exception
    assert session(at).state.step == 3
    changed = tab(at, "What changed")
    diffs = [c for c in changed.code if c.language == "diff"]
    assert len(diffs) == 6
    assert '+          "toolResult": {' in diffs[5].value
    assert '+            "status": "error"' in diffs[5].value
    assert diffs[0].value.startswith("--- request 1 (previous step)\n+++ request 2 (this step)")
    assert '+          "type": "tool_result",' in diffs[0].value
    assert "- `$.messages[1] added`\n- `$.messages[2] added`" in [m.value for m in changed.markdown]
    captions = [c.value for c in tab(at, "Request").caption]
    assert any(c.startswith(":orange-background[**changed** since request 1:]") for c in captions)


def test_undo_goes_back_one_step(at):
    at.button(key="proto_step").click().run()
    at.button(key="proto_undo").click().run()
    assert session(at).state.step == 0
    at.button(key="proto_undo").click().run()
    assert "nothing to undo" in at.error[0].value
    assert session(at).state.step == 0


def test_page_runs_after_the_weather_scenario_ran_to_the_end(at):
    session(at).run()
    at.run()
    assert not at.exception
    assert session(at).state.status == "finished"
    response = tab(at, "Response")
    assert headers(response) == TITLES
    assert "Paris is 18 degrees C" in response.code[0].value
    stream = tab(at, "Stream events")
    assert len(stream.code) == 5
    assert all(c.value.startswith("data: {") for c in stream.code[:4])
    # ConverseStream is no SSE: AWS event-stream frames, each typed by its :event-type header.
    assert stream.code[4].value.startswith(':event-type messageStart\n{"role": "assistant"}')
    assert not stream.code[4].value.startswith("data: ")
    bedrock = shown(stream.caption[-1].value)
    assert "event-stream" in bedrock and "SSE" not in bedrock
    # The reasons are the MCP codec's warnings for this turn; the last one names the text.
    assert any(
        shown(c.value).startswith("Nothing on the wire: MCP (JSON-RPC) has no model stream (")
        and shown(c.value).endswith("MCP carries no assistant text).")
        for c in stream.caption
    )
    lint = tab(at, "Warnings & lint")
    assert any("`text_dropped`" in m.value for m in lint.markdown)


def test_a_dropped_result_turns_the_verdicts_red(at):
    s = session(at)
    s.run()
    messages = s.conversation.messages
    s.delete_message(len(messages) - 1)  # the final answer
    tool = messages[2].model_copy(update={"parts": messages[2].parts[1:]})
    s.edit_message(2, tool.model_dump(mode="json"))
    at.run()
    lint = tab(at, "Warnings & lint")
    assert lint.markdown[1].value == "#### :red[⛔ **rejected**]"
    assert any(
        "`missing_result`" in m.value and "tool_result" in shown(m.value) for m in lint.markdown
    )


def test_protocol_choice_limits_the_columns(at):
    at.multiselect(key="protocols").set_value(["anthropic", "gemini"]).run()
    assert headers(tab(at, "Request")) == ["Anthropic Messages", "Google Gemini"]
    assert len(tab(at, "Request").code) == 2


def test_a_live_exchange_shows_on_the_wire_beside_the_codec(at):
    s = session(at)
    s.step()
    s.step()
    codec = tab(at, "Request").code[0].value  # request 1, rendered at step 0
    wire = {**json.loads(codec), "stream": False}
    s.state.exchanges = [
        {
            "step": 2,
            "protocol": "anthropic",
            "request": wire,
            "response": {"id": "msg_live"},
            "status": 200,
            "url": "https://api.anthropic.com/v1/messages",
            "differences": ["expected (SDK default) $.stream: the SDK added False"],
        }
    ]
    at.run()
    assert not at.exception
    on_wire = tab(at, "On the wire")
    assert headers(on_wire) == ["Anthropic Messages"]
    assert "HTTP 200" in on_wire.caption[0].value
    assert any('+  "stream": false' in c.value for c in on_wire.code if c.language == "diff")
    assert any("the SDK added False" in m.value for m in on_wire.markdown)


def test_long_payloads_are_elided_unless_whole_is_ticked(at):
    s = session(at)
    filler = [
        Message(role="user" if i % 2 == 0 else "assistant", parts=[Text(text=f"message {i}")])
        for i in range(400)
    ]
    s.state.conversation = s.conversation.model_copy(
        update={"messages": [*filler, *s.conversation.messages]}
    )
    at.run()
    request = tab(at, "Request")
    assert any("lines hidden" in c.value for c in request.code)
    at.toggle(key="proto_whole").set_value(True).run()
    request = tab(at, "Request")
    assert not any("lines hidden" in c.value for c in request.code)
    assert '"message 199"' in request.code[0].value


def test_step_is_disabled_once_the_cycle_is_over(at):
    for _ in range(5):
        at.button(key="proto_step").click().run()
    assert at.session_state.fd_session.done
    assert at.button(key="proto_step").disabled


def test_a_step_here_shows_in_the_sidebar_at_once(at):
    at.button(key="proto_step").click().run()
    assert at.session_state.fd_session.state.step == 1
    assert any("step 1" in c.value for c in at.sidebar.caption)
