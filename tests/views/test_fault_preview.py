"""Fault previews: a scenario replayed with faults, seen in every encoding and by every linter."""

from __future__ import annotations

import json

import pytest

from flowdebug.engine.execution.faults import CATALOG, Fault, parse_fault
from flowdebug.engine.session.debugger import Session
from flowdebug.errors import UsageError
from flowdebug.views.failures import build_fault, call_choices, catalog_rows, preview

GEMINI_NOT_ADJACENT = (
    "Please ensure that function response turn comes immediately after a function call turn"
)
# Bedrock's default model is a Claude model, whose own rule Bedrock passes on
# (langchain-ai/langchain-aws#451, Amazon-Q-Developer/language-servers#1235).
BEDROCK_CLAUDE_TEXT_FIRST = (
    "The model returned the following errors: messages.2: Did not find 2 `tool_result` block(s) "
    "at the beginning of this message."
)
# (vendor, level, code, the start of the vendor's own message or None) per protocol fault on
# the weather scenario's first call: what each vendor would reject, and with which message.
PROTOCOL_FAULTS = {
    "drop_result@#1": [
        (
            "anthropic",
            "error",
            "missing_result",
            "`tool_use` ids were found without `tool_result` blocks immediately after: call_1.",
        ),
        (
            "openai-chat",
            "error",
            "missing_result",
            "An assistant message with 'tool_calls' must be followed by tool messages responding "
            "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
            "call_1",
        ),
        (
            "openai-responses",
            "error",
            "missing_result",
            "No tool output found for function call call_1.",
        ),
        (
            "gemini",
            "error",
            "missing_result",
            "Please ensure that the number of function response parts is equal to the number of "
            "function call parts",
        ),
        ("mcp", "warning", "missing_result", None),
        (
            "bedrock",
            "error",
            "missing_result",
            "Expected toolResult blocks at messages.2.content for the following Ids: call_1",
        ),
    ],
    "reorder_results": [
        ("anthropic", "info", "results_reordered", None),
        ("openai-chat", "info", "results_reordered", None),
        ("openai-responses", "info", "results_reordered", None),
        ("gemini", "info", "results_reordered", None),
    ],
    "wrong_result_id@#1": [
        ("anthropic", "error", "missing_result", "`tool_use` ids were found without"),
        (
            "anthropic",
            "error",
            "result_without_call",
            "unexpected `tool_use_id` found in `tool_result` blocks: wrong_call_1.",
        ),
        ("openai-chat", "error", "missing_result", "An assistant message with 'tool_calls'"),
        (
            "openai-chat",
            "error",
            "result_without_call",
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
            "message with 'tool_calls'.",
        ),
        (
            "openai-responses",
            "error",
            "missing_result",
            "No tool output found for function call call_1.",
        ),
        (
            "openai-responses",
            "error",
            "result_without_call",
            "No tool call found for function call output with call_id wrong_call_1.",
        ),
        (
            "gemini",
            "error",
            "result_without_call",
            "functionResponse.id does not match functionCall.id",
        ),
        ("mcp", "warning", "missing_result", None),
        ("mcp", "warning", "result_without_call", None),
        (
            "bedrock",
            "error",
            "missing_result",
            "Expected toolResult blocks at messages.2.content for the following Ids: call_1",
        ),
        ("bedrock", "error", "result_without_call", "The number of toolResult blocks at"),
    ],
    "text_before_results": [
        (
            "anthropic",
            "error",
            "text_before_results",
            "Did not find 2 `tool_result` block(s) at the beginning of this message.",
        ),
        ("openai-chat", "error", "results_not_adjacent", "An assistant message with 'tool_calls'"),
        ("openai-chat", "error", "results_not_adjacent", "An assistant message with 'tool_calls'"),
        (
            "openai-responses",
            "warning",
            "results_not_adjacent",
            "No tool output found for function call call_1.",
        ),
        (
            "openai-responses",
            "warning",
            "results_not_adjacent",
            "No tool output found for function call call_2.",
        ),
        (
            "gemini",
            "error",
            "results_not_adjacent",
            GEMINI_NOT_ADJACENT,
        ),
        (
            "gemini",
            "error",
            "results_not_adjacent",
            GEMINI_NOT_ADJACENT,
        ),
        # Converse joins the text and the results in one user turn, text first.
        ("bedrock", "warning", "text_before_results", BEDROCK_CLAUDE_TEXT_FIRST),
    ],
}
VERDICTS = {
    "drop_result@#1": ("rejected", "rejected", "rejected", "rejected", "warnings", "rejected"),
    "reorder_results": ("accepted",) * 6,
    "wrong_result_id@#1": ("rejected", "rejected", "rejected", "rejected", "warnings", "rejected"),
    "text_before_results": (
        "rejected",
        "rejected",
        "warnings",
        "rejected",
        "accepted",
        "warnings",
    ),
}


@pytest.mark.parametrize("spec", list(PROTOCOL_FAULTS))
def test_protocol_fault_findings_per_vendor(spec):
    p = preview("weather", [parse_fault(spec)])
    assert p.status == "finished" and p.sent and p.turn == 2
    got = [
        (e.protocol, f.level, f.code, f.vendor_message)
        for e in p.effects.values()
        for f in e.findings
    ]
    want = PROTOCOL_FAULTS[spec]
    assert [g[:3] for g in got] == [w[:3] for w in want]
    for (_, _, _, message), (_, _, _, start) in zip(got, want, strict=True):
        if start is None:
            assert message is None
        else:
            assert message.startswith(start), message
    assert tuple(e.verdict for e in p.effects.values()) == VERDICTS[spec]


def test_protocol_fault_rejections_carry_the_faulted_history():
    p = preview("weather", [parse_fault("drop_result@#1")])
    assert p.changed_message == 2
    results = p.effects["anthropic"].payload["messages"][2]["content"]
    assert [r["tool_use_id"] for r in results] == ["call_2"]
    assert [f.code for f in p.effects["anthropic"].rejections] == ["missing_result"]
    assert '-          "tool_use_id": "call_1",' in p.effects["anthropic"].diff


def test_timeout_on_the_first_call_is_encoded_as_an_error_by_every_protocol():
    p = preview("weather", [parse_fault("timeout@#1")])
    assert p.status == "finished" and p.error_types == ("timeout",)
    assert [(e.call_id, e.fault) for e in p.errors] == [("call_1", "timeout@#1"), ("call_2", None)]
    assert p.changed_message == 2 and p.turn == 2 and p.sent
    text = p.errors[0].text
    e = {n: x.payload for n, x in p.effects.items()}

    first = e["anthropic"]["messages"][2]["content"][0]
    assert first["tool_use_id"] == "call_1" and first["is_error"] is True
    assert first["content"] == text

    tool = next(m for m in e["openai-chat"]["messages"] if m.get("tool_call_id") == "call_1")
    assert json.loads(tool["content"]) == {"error": text}

    out = next(
        i
        for i in e["openai-responses"]["input"]
        if i.get("type") == "function_call_output" and i["call_id"] == "call_1"
    )
    assert json.loads(out["output"]) == {"error": text}

    response = e["gemini"]["contents"][2]["parts"][0]["functionResponse"]
    assert response["id"] == "call_1" and response["response"] == {"error": text}

    result = next(
        x["msg"]["result"]
        for x in e["mcp"]
        if x["dir"] == "server->client" and x["msg"]["id"] == "call_1"
    )
    assert result["isError"] is True and result["content"][0]["text"] == text

    for name, effect in p.effects.items():
        assert effect.verdict == "accepted", name
        assert effect.diff.startswith("--- request 2 without faults\n+++ request 2 with faults")


def test_exception_on_a_tool_changes_both_results():
    p = preview("weather", [build_fault("exception", "tool", "get_weather")], ["anthropic"])
    assert list(p.effects) == ["anthropic"]
    results = p.effects["anthropic"].payload["messages"][2]["content"]
    assert [r["is_error"] for r in results] == [True, True]
    assert results[0]["content"] == "RuntimeError: injected failure"
    assert p.error_types == ("exception",)


def test_request_fault_is_carried_by_the_continuation_of_its_turn():
    p = preview("weather", [parse_fault("malformed_json@#1")], ["openai-chat"])
    assert p.changed_message == 1 and p.turn == 2
    call = p.effects["openai-chat"].payload["messages"][2]["tool_calls"][0]
    assert call["function"]["arguments"] == '{"location": "Paris", "unit": "c"'
    assert "malformed_arguments" in p.error_types


def test_a_fault_that_targets_nothing_changes_nothing():
    p = preview("weather", [build_fault("exception", "nth", 9)])
    assert not p.changed and p.turn is None and p.effects == {}
    assert p.status == "finished"


def test_replay_stops_at_approval_without_deciding():
    p = preview("destructive", [build_fault("exception", "tool", "create_task")], ["anthropic"])
    assert p.status == "awaiting_approval"
    assert "delete_task" in p.status_text
    assert p.changed_message == 2 and p.turn == 2 and p.sent
    assert p.effects["anthropic"].payload["messages"][2]["content"][0]["is_error"] is True


def test_a_session_state_previews_its_scenario_and_one_without_cannot():
    s = Session.from_scenario("weather")
    p = preview(s.state, [parse_fault("timeout@#1")], ["gemini"])
    assert p.scenario == "weather" and list(p.effects) == ["gemini"]
    s.state.scenario = None
    with pytest.raises(UsageError, match="no scenario to replay"):
        preview(s.state, [parse_fault("timeout@#1")])


def test_unknown_protocol_is_refused():
    with pytest.raises(UsageError, match="unknown protocol"):
        preview("weather", [], ["smoke-signals"])


# -- building faults from the page's fields -----------------------------------------------------


def test_build_fault_for_each_target():
    assert build_fault("exception", "tool", "get_weather") == Fault(
        kind="exception", tool="get_weather"
    )
    assert build_fault("timeout", "call", " call_2 ") == Fault(kind="timeout", call_id="call_2")
    assert build_fault("drop_result", "nth", 2) == Fault(kind="drop_result", nth=2)
    assert build_fault("reorder_results", "all", "ignored") == Fault(kind="reorder_results")


def test_build_fault_converts_params_and_leaves_blank_ones_to_their_default():
    f = build_fault("rate_limited", "all", params={"retry_after": " 5 "})
    assert f.params == {"retry_after": 5.0} and f.param("retry_after") == 5.0
    f = build_fault("exception", "all", params={"message": "  "})
    assert f.params == {} and f.param("message") == "injected failure"
    assert build_fault("oversized_result", "nth", "1", {"chars": "10"}).spec == (
        "oversized_result@#1:chars=10"
    )


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (
            ("rate_limited", "all", None, {"retry_after": "soon"}),
            "rate_limited: retry_after must be a float, not 'soon'",
        ),
        (("exception", "tool", ""), "exception: pick a tool to target"),
        (("exception", "call", None), "exception: pick a call id to target"),
        (("timeout", "nth", 0), "timeout: the nth call counts from 1 (got 0)"),
        (("timeout", "nth", "x"), "timeout: the nth call counts from 1 (got 'x')"),
        (("explode", "all"), "unknown fault kind 'explode'"),
        (("timeout", "everywhere"), "unknown target 'everywhere'"),
    ],
)
def test_build_fault_refuses_bad_fields_with_the_reason(args, reason):
    with pytest.raises(UsageError) as e:
        build_fault(*args)
    assert str(e.value).startswith(reason)


def test_catalog_rows_cover_every_kind_with_its_params():
    rows = catalog_rows()
    assert [r["kind"] for r in rows] == list(CATALOG)
    rate = next(r for r in rows if r["kind"] == "rate_limited")
    assert rate["phase"] == "execution"
    assert rate["params"] == "retry_after (default 30.0): seconds the error tells the model to wait"
    assert next(r for r in rows if r["kind"] == "timeout")["params"] == "—"


def test_call_choices_label_the_history_calls():
    s = Session.from_scenario("weather")
    assert call_choices(s.conversation) == {}
    s.step()
    s.step()
    assert call_choices(s.conversation) == {
        "call_1": "call_1 · get_weather(location=Paris, unit=c)",
        "call_2": "call_2 · get_weather(location=Tokyo, unit=c)",
    }
