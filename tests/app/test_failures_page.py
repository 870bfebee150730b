"""AppTest: the Failures page — the catalog, applying and removing faults by key, the preview."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from flowdebug.engine.execution.faults import CATALOG, Fault
from tests.app.markdown import cells, shown

PAGE = Path(__file__).resolve().parents[2] / "pages" / "failures.py"


@pytest.fixture
def at() -> AppTest:
    app = AppTest.from_file(str(PAGE), default_timeout=60)
    app.run()
    assert not app.exception
    return app


def session(app: AppTest):
    return app.session_state.fd_session


def apply(app: AppTest, kind: str, target: str, value=None, **params: str) -> None:
    app.selectbox(key="fault_kind").select(kind).run()
    app.radio(key="fault_target").set_value(target).run()
    if target == "tool":
        app.selectbox(key="fault_tool").select(value).run()
    elif target == "call":
        app.selectbox(key="fault_call").select(value).run()
    elif target == "nth":
        app.number_input(key="fault_nth").set_value(value).run()
    for name, text in params.items():
        app.text_input(key=f"fault_param_{kind}_{name}").input(text).run()
    app.button(key="fault_apply").click().run()
    assert not app.exception


def codes(app: AppTest, language: str) -> list[str]:
    return [c.value for c in app.code if c.language == language]


def test_default_scenario_shows_the_catalog_and_no_preview(at):
    table = at.table[0].value
    assert list(table["kind"]) == list(CATALOG)
    assert list(table.columns) == ["kind", "phase", "description", "params"]
    assert session(at).state.faults == []
    assert "Apply a fault" in at.info[0].value
    assert not at.code


def test_exception_on_get_weather_shows_the_error_in_every_encoding_and_removing_restores(at):
    apply(at, "exception", "tool", "get_weather")
    assert session(at).state.faults == [Fault(kind="exception", tool="get_weather")]
    assert at.markdown[0].value == "`exception@get_weather`"
    anthropic, chat, responses, gemini, mcp, bedrock = codes(at, "diff")
    assert '+          "is_error": true' in anthropic
    assert '{\\"error\\": \\"RuntimeError: injected failure\\"}' in chat
    assert '{\\"error\\": \\"RuntimeError: injected failure\\"}' in responses
    assert '+              "error": "RuntimeError: injected failure"' in gemini
    assert '+        "isError": true' in mcp
    assert '+                "text": "RuntimeError: injected failure"' in bedrock
    assert '+            "status": "error"' in bedrock
    assert any("`exception` on get_weather `call_1`" in shown(m.value) for m in at.markdown)

    at.button(key="fault_remove_0").click().run()
    assert session(at).state.faults == []
    assert not at.code and "Apply a fault" in at.info[0].value
    at.button(key="fault_undo").click().run()  # set_faults is undoable
    assert session(at).state.faults == [Fault(kind="exception", tool="get_weather")]


def test_a_protocol_fault_lists_what_each_vendor_rejects(at):
    apply(at, "drop_result", "nth", 1)
    assert session(at).state.faults == [Fault(kind="drop_result", nth=1)]
    rows = cells(next(t.value for t in at.table if "code" in t.value.columns))
    assert list(rows["code"]) == ["missing_result"] * 6
    messages = list(rows["vendor's message"])
    assert messages[2] == "No tool output found for function call call_1."
    assert messages[0].startswith("`tool_use` ids were found without `tool_result` blocks")
    assert messages[5] == (
        "Expected toolResult blocks at messages.2.content for the following Ids: call_1"
    )
    verdicts = [m.value for m in at.markdown if "**request 2**" in m.value]
    rejected = ":red[⛔ **rejected**] · **request 2**"
    assert verdicts[:4] == [rejected] * 4 and verdicts[5] == rejected  # MCP only warns


def test_a_bad_param_shows_the_reason_and_changes_nothing(at):
    apply(at, "rate_limited", "all", retry_after="soon")
    assert "retry_after must be a float, not 'soon'" in shown(at.error[0].value)
    assert session(at).state.faults == []


def test_targeting_a_call_picked_from_the_history(at):
    session(at).run()
    at.run()
    apply(
        at,
        "timeout",
        "call",
        "call_1",
    )
    assert session(at).state.faults == [Fault(kind="timeout", call_id="call_1")]
    assert any(
        '+      "content": "{\\"error\\": \\"timeout after 1s\\"}"' in d for d in codes(at, "diff")
    )


def test_restart_applies_the_faults_from_the_start_of_the_scenario(at):
    session(at).step()
    session(at).step()
    apply(at, "exception", "tool", "get_weather", message="boom")
    at.button(key="fault_restart").click().run()
    s = session(at)
    assert s.state.step == 0 and s.state.scenario == "weather"
    assert s.state.faults == [
        Fault(kind="exception", tool="get_weather", params={"message": "boom"})
    ]
    assert "Restarted weather" in at.success[0].value
    s.run()
    assert [r.text for r in s.conversation.messages[2].tool_results] == ["RuntimeError: boom"] * 2


def test_page_runs_after_the_weather_scenario_ran_to_the_end(at):
    session(at).run()
    at.run()
    assert not at.exception
    apply(at, "timeout", "nth", 1)
    assert len(codes(at, "diff")) == 6
    assert "Replayed **weather** from the start" in at.markdown[3].value
