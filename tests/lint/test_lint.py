"""The linter: each vendor rule as a named test on the weather scenario, then the tool rules and
the public API (payload detection, CLI lines, exit status)."""

from __future__ import annotations

import json

import pytest

from flowdebug import protocols
from flowdebug.cli.main import main
from flowdebug.engine.execution.faults import (
    apply_protocol_faults,
    apply_request_faults,
    parse_fault,
)
from flowdebug.errors import CodecError, UsageError
from flowdebug.lint.linter import (
    Finding,
    format_finding,
    has_errors,
    lint_conversation,
    lint_payload,
    lint_tools,
)
from flowdebug.model import Conversation, Message, Text, Tool, ToolResult, dump
from flowdebug.protocols.base import safe_call_id
from tests import cases as C
from tests.paths import WIRE as REFERENCE

PARIS, TOKYO = C.PARIS.id, C.TOKYO.id
PROTOCOLS = tuple(protocols.PROTOCOLS)  # the registry's names, in its order
WEATHER = C.WEATHER_TOOL

# The vendors' own texts, written out here so a change in the linter's wording shows up.
ANTHROPIC_MISSING = (
    "`tool_use` ids were found without `tool_result` blocks immediately after: {}. Each "
    "`tool_use` block must have a corresponding `tool_result` block in the next message."
)
CHAT_MISSING = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: {}"
)
GEMINI_COUNT = (
    "Please ensure that the number of function response parts is equal to the number of "
    "function call parts of the function call turn."
)
GEMINI_RESPONSE_TURN = (
    "Please ensure that function response turn comes immediately after a function call turn."
)
GEMINI_CALL_TURN = (
    "Please ensure that function call turn comes immediately after a user turn or after a "
    "function response turn."
)
CHAT_UNEXPECTED = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'."
)
# Bedrock Converse ValidationException texts (pydantic/pydantic-ai#2327,
# strands-agents/harness-sdk#1435, Just-Curieous/Curie#16); n is the wire index in `messages`,
# which holds no system prompt.
BEDROCK_MISSING = "Expected toolResult blocks at messages.{n}.content for the following Ids: {ids}"
BEDROCK_UNEXPECTED = (
    "The number of toolResult blocks at messages.{n}.content exceeds the number of toolUse "
    "blocks of previous turn."
)
# Bedrock's default model is a Claude model, whose own rule Bedrock passes on
# (langchain-ai/langchain-aws#451, Amazon-Q-Developer/language-servers#1235).
BEDROCK_CLAUDE_TEXT_FIRST = (
    "The model returned the following errors: messages.{n}: Did not find {k} `tool_result` "
    "block(s) at the beginning of this message. Messages following `tool_use` blocks must begin "
    "with a matching number of `tool_result` blocks."
)
BEDROCK_ALTERNATE = (
    "A conversation must alternate between user and assistant roles. Make sure the "
    "conversation alternates between user and assistant roles and try again."
)


def history(*tail: Message, first: Message = C.WEATHER_USER, **update: object) -> Conversation:
    """The weather conversation: the user's question, the two parallel calls, then ``tail``."""
    return C.WEATHER_INITIAL.model_copy(
        update={"messages": [first, C.WEATHER_CALLS, *tail], **update}
    )


def tool_message(*results: ToolResult) -> Message:
    return Message(role="tool", parts=list(results))


def facts(findings: list[Finding], code: str | None = None) -> set[tuple]:
    """(level, code, path, protocol, vendor text) of each finding, optionally of one code."""
    return {
        (f.level, f.code, f.path, f.protocol, f.vendor_message)
        for f in findings
        if code is None or f.code == code
    }


def test_the_weather_scenario_is_clean_for_every_vendor():
    for case in ("weather_initial", "weather_continuation", "weather_complete"):
        assert lint_conversation(C.CONVERSATIONS[case]) == []


def test_calls_ending_the_conversation_await_results_instead_of_missing_them():
    findings = lint_conversation(history())
    assert findings == [
        Finding(
            "info",
            "results_pending",
            "messages[1]",
            "the conversation ends with 2 tool call(s) awaiting results: the next request "
            "must carry them",
        )
    ]


def test_a_dropped_result_is_rejected_by_every_model_api():
    conv = history(tool_message(C.PARIS_RESULT), C.WEATHER_FINAL)
    tokyo = "messages[1].parts[1]"
    assert facts(lint_conversation(conv)) == {
        ("error", "missing_result", tokyo, "anthropic", ANTHROPIC_MISSING.format(TOKYO)),
        ("error", "missing_result", tokyo, "openai-chat", CHAT_MISSING.format(TOKYO)),
        (
            "error",
            "missing_result",
            tokyo,
            "openai-responses",
            f"No tool output found for function call {TOKYO}.",
        ),
        ("error", "missing_result", tokyo, "gemini", GEMINI_COUNT),
        ("warning", "missing_result", tokyo, "mcp", None),
        ("error", "missing_result", tokyo, "bedrock", BEDROCK_MISSING.format(n=2, ids=TOKYO)),
    }


def test_the_missing_result_message_names_the_call_and_quotes_the_vendor():
    conv = history(tool_message(C.PARIS_RESULT), C.WEATHER_FINAL)
    [finding] = lint_conversation(conv, "anthropic")
    assert finding.message == (
        f"anthropic: call {TOKYO} has no tool_result in the next user turn — "
        f'"{ANTHROPIC_MISSING.format(TOKYO)}"'
    )


def test_the_vendor_text_lists_every_unanswered_call_of_the_turn():
    conv = history(C.WEATHER_FINAL)
    both = f"{PARIS}, {TOKYO}"
    findings = lint_conversation(conv, ["anthropic", "openai-chat"])
    assert facts(findings, "missing_result") == {
        ("error", "missing_result", f"messages[1].parts[{k}]", name, text.format(both))
        for k in (0, 1)
        for name, text in (("anthropic", ANTHROPIC_MISSING), ("openai-chat", CHAT_MISSING))
    }


def test_reordered_results_are_accepted_by_vendors_that_pair_by_id():
    conv = history(tool_message(C.TOKYO_RESULT, C.PARIS_RESULT))
    findings = lint_conversation(conv)
    assert not has_errors(findings)
    assert {(f.level, f.protocol) for f in findings} == {
        ("info", "anthropic"),
        ("info", "openai-chat"),
        ("info", "openai-responses"),
        ("info", "gemini"),
    }  # MCP: each result is its own JSON-RPC response, order means nothing
    assert facts(findings, "results_reordered") == {
        ("info", "results_reordered", "messages[2]", p, None) for p in PROTOCOLS[:4]
    }


def test_reordered_results_mispair_on_gemini_when_the_calls_had_no_wire_id():
    # Gemini <= 2.5 sends calls without ids; the decoder marks the ids it had to invent, the
    # encoder sends them back without one, and Gemini pairs by name and order.
    synthetic = {"gemini": {"syntheticId": True}}
    calls = Message(
        role="assistant",
        parts=[c.model_copy(update={"provider_details": synthetic}) for c in (C.PARIS, C.TOKYO)],
    )
    conv = C.WEATHER_INITIAL.model_copy(
        update={"messages": [C.WEATHER_USER, calls, tool_message(C.TOKYO_RESULT, C.PARIS_RESULT)]}
    )
    [finding] = [f for f in lint_conversation(conv, "gemini")]
    assert (finding.level, finding.code, finding.path) == (
        "warning",
        "results_reordered",
        "messages[2]",
    )
    assert "get_weather calls carry no wire id" in finding.message


def test_a_result_with_a_wrong_id_answers_no_call():
    wrong = C.TOKYO_RESULT.model_copy(update={"call_id": "wrong_id"})
    conv = history(tool_message(C.PARIS_RESULT, wrong))
    result = "messages[2].parts[1]"
    assert facts(lint_conversation(conv), "result_without_call") == {
        (
            "error",
            "result_without_call",
            result,
            "anthropic",
            "unexpected `tool_use_id` found in `tool_result` blocks: wrong_id. Each "
            "`tool_result` block must have a corresponding `tool_use` block in the previous "
            "message.",
        ),
        ("error", "result_without_call", result, "openai-chat", CHAT_UNEXPECTED),
        (
            "error",
            "result_without_call",
            result,
            "openai-responses",
            "No tool call found for function call output with call_id wrong_id.",
        ),
        (
            "error",
            "result_without_call",
            result,
            "gemini",
            "functionResponse.id does not match functionCall.id",
        ),
        ("warning", "result_without_call", result, "mcp", None),
        ("error", "result_without_call", result, "bedrock", BEDROCK_UNEXPECTED.format(n=2)),
    }


def test_a_wrong_id_also_leaves_its_call_unanswered_except_for_gemini_which_counts_first():
    wrong = C.TOKYO_RESULT.model_copy(update={"call_id": "wrong_id"})
    findings = lint_conversation(history(tool_message(C.PARIS_RESULT, wrong)))
    # Gemini sees as many responses as calls and reports the id mismatch, not a count.
    assert {f.protocol for f in findings if f.code == "missing_result"} == {
        "anthropic",
        "openai-chat",
        "openai-responses",
        "mcp",
        "bedrock",
    }


def test_text_before_the_results_is_refused_by_anthropic():
    hurry = Message(role="user", parts=[Text(text="Here are the results.")])
    conv = history(hurry, C.WEATHER_RESULTS)
    findings = lint_conversation(conv, "anthropic")
    assert facts(findings) == {
        (
            "error",
            "text_before_results",
            "messages[2].parts[0]",
            "anthropic",
            "Did not find 2 `tool_result` block(s) at the beginning of this message. Messages "
            "following `tool_use` blocks must begin with a matching number of `tool_result` "
            "blocks.",
        )
    }


def test_text_before_the_results_breaks_adjacency_for_the_other_vendors():
    hurry = Message(role="user", parts=[Text(text="Here are the results.")])
    findings = lint_conversation(history(hurry, C.WEATHER_RESULTS))
    both = f"{PARIS}, {TOKYO}"
    late = facts(findings, "results_not_adjacent")
    assert late == {
        ("error", "results_not_adjacent", f"messages[3].parts[{k}]", name, text)
        for k in (0, 1)
        for name, text in (
            ("openai-chat", CHAT_MISSING.format(both)),
            ("gemini", GEMINI_RESPONSE_TURN),
        )
    } | {
        (
            "warning",
            "results_not_adjacent",
            f"messages[3].parts[{k}]",
            "openai-responses",
            f"No tool output found for function call {call}.",
        )
        for k, call in ((0, PARIS), (1, TOKYO))
    }
    assert not [f for f in findings if f.protocol == "mcp"]


def test_text_first_in_the_tool_message_is_refused_by_anthropic_and_claude_on_bedrock():
    results = Message(role="tool", parts=[Text(text="Results:"), C.PARIS_RESULT, C.TOKYO_RESULT])
    findings = lint_conversation(history(results))
    assert facts(findings) == {
        (
            "error",
            "text_before_results",
            "messages[2].parts[0]",
            "anthropic",
            "Did not find 2 `tool_result` block(s) at the beginning of this message. Messages "
            "following `tool_use` blocks must begin with a matching number of `tool_result` "
            "blocks.",
        ),
        # A warning: Bedrock passes the rule of Claude models on; other models may take it.
        (
            "warning",
            "text_before_results",
            "messages[2].parts[0]",
            "bedrock",
            BEDROCK_CLAUDE_TEXT_FIRST.format(n=2, k=2),
        ),
    }


def test_text_before_the_results_joins_their_bedrock_turn_where_claude_refuses_it():
    hurry = Message(role="user", parts=[Text(text="Here are the results.")])
    findings = lint_conversation(history(hurry, C.WEATHER_RESULTS), "bedrock")
    assert facts(findings) == {
        (
            "warning",
            "text_before_results",
            "messages[2].parts[0]",
            "bedrock",
            BEDROCK_CLAUDE_TEXT_FIRST.format(n=2, k=2),
        )
    }


def test_results_after_a_later_turn_do_not_follow_their_call_turn():
    conv = history(
        Message(role="user", parts=[Text(text="Still there?")]),
        Message(role="assistant", parts=[Text(text="Waiting for the weather service.")]),
        C.WEATHER_RESULTS,
    )
    findings = lint_conversation(conv, ["anthropic", "openai-chat", "gemini"])
    both = f"{PARIS}, {TOKYO}"
    assert facts(findings, "results_not_adjacent") == {
        ("error", "results_not_adjacent", f"messages[4].parts[{k}]", name, text)
        for k in (0, 1)
        for name, text in (
            ("anthropic", ANTHROPIC_MISSING.format(both)),
            ("openai-chat", CHAT_MISSING.format(both)),
            ("gemini", GEMINI_RESPONSE_TURN),
        )
    }


def test_results_split_over_two_tool_messages_trouble_gemini_and_bedrock():
    conv = history(tool_message(C.PARIS_RESULT), tool_message(C.TOKYO_RESULT))
    # Anthropic merges the two user turns; OpenAI takes consecutive tool messages; Gemini wants
    # every response in the one content right after the calls; Bedrock wants the roles to
    # alternate and gets two user turns in a row.
    assert facts(lint_conversation(conv)) == {
        ("error", "results_not_adjacent", "messages[3].parts[0]", "gemini", GEMINI_RESPONSE_TURN),
        ("info", "consecutive_same_role", "messages[3]", "anthropic", None),
        ("error", "consecutive_same_role", "messages[3]", "bedrock", BEDROCK_ALTERNATE),
    }


def test_a_system_message_between_calls_and_results_only_breaks_openai_adjacency():
    note = Message(role="system", parts=[Text(text="Be brief.")])
    findings = lint_conversation(history(note, C.WEATHER_RESULTS))
    # Anthropic lifts it into `system`, Gemini into systemInstruction; Chat keeps it in place.
    assert {(f.protocol, f.code) for f in findings} == {
        ("openai-chat", "results_not_adjacent"),
        ("openai-responses", "results_not_adjacent"),
    }


def test_a_tool_message_after_no_call_turn_answers_nothing():
    conv = Conversation(
        tools=[WEATHER],
        messages=[C.WEATHER_USER, C.WEATHER_RESULTS],
    )
    findings = lint_conversation(conv)
    first = "messages[1].parts[0]"
    assert ("error", "result_without_call", first, "gemini", GEMINI_RESPONSE_TURN) in facts(
        findings
    )
    assert ("error", "result_without_call", first, "openai-chat", CHAT_UNEXPECTED) in facts(
        findings
    )
    assert {f.code for f in findings} == {"result_without_call"}


def test_duplicate_call_ids_are_refused_where_results_pair_by_id():
    twin = C.TOKYO.model_copy(update={"id": PARIS})
    calls = Message(role="assistant", parts=[C.PARIS, twin])
    conv = C.WEATHER_INITIAL.model_copy(update={"messages": [C.WEATHER_USER, calls]})
    second = "messages[1].parts[1]"
    assert facts(lint_conversation(conv), "duplicate_call_id") == {
        ("error", "duplicate_call_id", second, "anthropic", "`tool_use` ids must be unique"),
        ("error", "duplicate_call_id", second, "openai-chat", None),
        ("warning", "duplicate_call_id", second, "openai-responses", None),
        ("warning", "duplicate_call_id", second, "gemini", None),
        ("error", "duplicate_call_id", second, "mcp", None),
        ("error", "duplicate_call_id", second, "bedrock", None),
    }


def test_two_results_for_one_call_name_both_wire_positions_on_openai_chat():
    twin = C.TOKYO_RESULT.model_copy(update={"call_id": PARIS})
    conv = history(tool_message(C.PARIS_RESULT, twin))
    second = "messages[2].parts[1]"
    # On the Chat wire: system prompt, user, assistant, then one tool message per result.
    assert facts(lint_conversation(conv), "duplicate_result") == {
        (
            "error",
            "duplicate_result",
            second,
            "anthropic",
            f"each tool_use must have a single result. Found multiple `tool_result` blocks "
            f"with id: {PARIS}",
        ),
        (
            "error",
            "duplicate_result",
            second,
            "openai-chat",
            f"Invalid parameter: Duplicate value for 'tool_call_id' of '{PARIS}', in "
            "messages[3] and messages[4].",
        ),
        ("warning", "duplicate_result", second, "openai-responses", None),
        (
            "error",
            "duplicate_result",
            second,
            "gemini",
            "functionResponse.id does not match functionCall.id",
        ),
        ("error", "duplicate_result", second, "bedrock", BEDROCK_UNEXPECTED.format(n=2)),
    }


def test_a_call_without_id_gets_an_invented_one_from_every_encoder():
    blank = C.PARIS.model_copy(update={"id": ""})
    calls = Message(role="assistant", parts=[blank])
    conv = C.WEATHER_INITIAL.model_copy(update={"messages": [C.WEATHER_USER, calls]})
    call = "messages[1].parts[0]"
    assert facts(lint_conversation(conv), "call_id_missing") == {
        (
            "warning",
            "call_id_missing",
            call,
            "anthropic",
            "String should match pattern '^[a-zA-Z0-9_-]+$'",
        ),
        ("warning", "call_id_missing", call, "openai-chat", None),
        ("warning", "call_id_missing", call, "openai-responses", None),
        ("info", "call_id_missing", call, "gemini", None),
    }
    [anthropic] = [f for f in lint_conversation(conv, "anthropic") if f.code == "call_id_missing"]
    assert (
        f"flowdebug's encoder sends {safe_call_id('anthropic', '')!r} instead" in anthropic.message
    )


def test_a_call_to_an_undeclared_tool_is_a_warning_with_a_suggestion():
    typo = C.PARIS.model_copy(update={"name": "get_wether"})
    calls = Message(role="assistant", parts=[typo])
    conv = C.WEATHER_INITIAL.model_copy(update={"messages": [C.WEATHER_USER, calls]})
    findings = [f for f in lint_conversation(conv) if f.code == "unknown_tool"]
    assert findings == [
        Finding(
            "warning",
            "unknown_tool",
            "messages[1].parts[0]",
            "call names tool 'get_wether', which is not declared (did you mean 'get_weather'?)",
        ),
        Finding(
            "error",
            "unknown_tool",
            "messages[1].parts[0]",
            "mcp: the server answers tools/call 'get_wether' with JSON-RPC error -32602 — "
            '"Unknown tool: get_wether"',
            "mcp",
            "Unknown tool: get_wether",
        ),
    ]


def test_a_conversation_must_start_with_the_user_on_anthropic_gemini_and_bedrock():
    conv = C.WEATHER_INITIAL.model_copy(update={"messages": [C.WEATHER_CALLS, C.WEATHER_RESULTS]})
    assert facts(lint_conversation(conv), "first_message_not_user") == {
        (
            "error",
            "first_message_not_user",
            "messages[0]",
            "anthropic",
            'messages: first message must use the "user" role',
        ),
        ("error", "first_message_not_user", "messages[0]", "gemini", GEMINI_CALL_TURN),
        (
            "error",
            "first_message_not_user",
            "messages[0]",
            "bedrock",
            "A conversation must start with a user message. Try again with a conversation that "
            "starts with a user message.",
        ),
    }


def test_a_call_turn_cannot_follow_another_model_turn_on_gemini_and_bedrock():
    thinking_aloud = Message(role="assistant", parts=[Text(text="Let me look that up.")])
    conv = C.WEATHER_INITIAL.model_copy(
        update={"messages": [C.WEATHER_USER, thinking_aloud, C.WEATHER_CALLS, C.WEATHER_RESULTS]}
    )
    findings = lint_conversation(conv)
    assert facts(findings, "consecutive_same_role") == {
        ("error", "consecutive_same_role", "messages[2]", "gemini", GEMINI_CALL_TURN),
        ("info", "consecutive_same_role", "messages[2]", "anthropic", None),
        ("error", "consecutive_same_role", "messages[2]", "bedrock", BEDROCK_ALTERNATE),
    }
    assert has_errors(findings)


def test_consecutive_user_messages_merge_into_one_anthropic_turn_and_break_bedrock():
    again = Message(role="user", parts=[Text(text="In Celsius please.")])
    conv = C.WEATHER_INITIAL.model_copy(update={"messages": [C.WEATHER_USER, again]})
    assert lint_conversation(conv) == [
        Finding(
            "info",
            "consecutive_same_role",
            "messages[1]",
            "anthropic: two user messages in a row: Anthropic merges them into one turn",
            "anthropic",
        ),
        # Bedrock does not merge: the encoder sends the two user turns as they are.
        Finding(
            "error",
            "consecutive_same_role",
            "messages[1]",
            f'bedrock: two user messages in a row — "{BEDROCK_ALTERNATE}"',
            "bedrock",
            BEDROCK_ALTERNATE,
        ),
    ]


def test_anthropic_and_bedrock_need_tools_declared_when_the_history_holds_tool_blocks():
    conv = history(C.WEATHER_RESULTS, tools=[])
    assert facts(lint_conversation(conv)) == {
        (
            "error",
            "tools_missing",
            "tools",
            "anthropic",
            "Requests which include `tool_use` or `tool_result` blocks must define tools.",
        ),
        (
            "error",
            "tools_missing",
            "tools",
            "bedrock",
            "The toolConfig field must be defined when using toolUse and toolResult content "
            "blocks.",
        ),
    }


def test_selected_protocols_filter_vendor_findings_but_keep_neutral_ones():
    typo = C.PARIS.model_copy(update={"name": "get_wether"})
    conv = C.WEATHER_INITIAL.model_copy(
        update={"messages": [C.WEATHER_USER, Message(role="assistant", parts=[typo])]}
    )
    findings = lint_conversation(conv, ["mcp"])
    assert [(f.protocol, f.code) for f in findings] == [
        (None, "results_pending"),
        (None, "unknown_tool"),
        ("mcp", "unknown_tool"),
    ]


def test_an_unknown_protocol_name_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown protocol 'claude'"):
        lint_conversation(C.WEATHER_COMPLETE, "claude")


@pytest.mark.parametrize(
    ("spec", "code"),
    [
        ("drop_result@#2", "missing_result"),
        ("reorder_results", "results_reordered"),
        ("wrong_result_id@#2", "result_without_call"),
        ("text_before_results", "text_before_results"),
    ],
)
def test_each_injected_protocol_fault_is_named_for_anthropic(spec, code):
    injected = apply_protocol_faults(C.WEATHER_RESULTS, [parse_fault(spec)])
    findings = lint_conversation(history(*injected), "anthropic")
    assert code in {f.code for f in findings}


@pytest.mark.parametrize(
    ("spec", "code"),
    [
        ("duplicate_call_id", "duplicate_call_id"),
        ("missing_call_id@#1", "call_id_missing"),
        ("unknown_tool@#1", "unknown_tool"),
    ],
)
def test_each_injected_request_fault_is_named(spec, code):
    calls = apply_request_faults(C.WEATHER_CALLS, [parse_fault(spec)], tools=[WEATHER])
    conv = C.WEATHER_INITIAL.model_copy(update={"messages": [C.WEATHER_USER, calls]})
    assert code in {f.code for f in lint_conversation(conv, "anthropic")}


# ---------------------------------------------------------------------------- tool rules


def weather_tool(**update: object) -> Tool:
    return WEATHER.model_copy(update=update)


def with_properties(properties: dict, **schema: object) -> dict:
    return {"type": "object", "properties": properties, **schema}


def test_a_tool_without_description_is_a_warning():
    assert lint_tools([weather_tool(description=None)]) == [
        Finding(
            "warning",
            "description_missing",
            "tools[0].description",
            "tool 'get_weather' has no description: models choose tools by their descriptions",
        )
    ]


@pytest.mark.parametrize(
    ("description", "reason"),
    [("Get weather.", "only repeats the tool name"), ("Forecasts.", "is too short")],
)
def test_a_vague_description_is_a_warning(description, reason):
    [finding] = lint_tools([weather_tool(description=description)])
    assert (finding.level, finding.code, finding.path) == (
        "warning",
        "description_vague",
        "tools[0].description",
    )
    assert reason in finding.message


def test_an_object_with_properties_but_no_required_is_a_warning():
    params = with_properties(WEATHER.parameters["properties"])
    assert facts(lint_tools([weather_tool(parameters=params)])) == {
        ("warning", "required_missing", "tools[0].parameters", None, None)
    }


def test_nested_objects_are_checked_too():
    nested = with_properties(
        {"place": with_properties({"city": {"type": "string", "description": "City name"}})},
        required=["place"],
    )
    assert facts(lint_tools([weather_tool(parameters=nested)])) == {
        ("warning", "required_missing", "tools[0].parameters.properties.place", None, None),
        (
            "info",
            "parameter_description_missing",
            "tools[0].parameters.properties.place",
            None,
            None,
        ),
    }


def test_a_parameter_without_description_is_info():
    assert lint_tools(C.TASK_TOOLS[:1]) == [
        Finding(
            "info",
            "parameter_description_missing",
            "tools[0].parameters.properties.title",
            "parameter 'title' has no description",
        )
    ]


@pytest.mark.parametrize("name", ["unit", "units", "sort_order", "sortDirection", "status"])
def test_a_free_string_named_like_a_choice_should_be_an_enum(name):
    params = with_properties(
        {name: {"type": "string", "description": "How to present it"}}, required=[name]
    )
    assert facts(lint_tools([weather_tool(parameters=params)])) == {
        ("info", "enum_suggested", f"tools[0].parameters.properties.{name}", None, None)
    }


def test_a_choice_that_already_has_an_enum_is_fine():
    assert lint_tools([WEATHER]) == []  # its unit is enum ["c", "f"]


def test_the_root_schema_must_be_an_object():
    params = {"type": "string", "description": "a city"}
    assert facts(lint_tools([weather_tool(parameters=params)])) == {
        ("error", "root_not_object", "tools[0].parameters", None, None)
    }


def test_two_tools_with_one_name_are_an_error():
    findings = lint_tools([WEATHER, weather_tool(description="Get the weather forecast.")])
    assert facts(findings) == {
        ("error", "duplicate_tool_name", "tools[1].name", None, None),
        (
            "error",
            "duplicate_tool_name",
            "tools[1].name",
            "anthropic",
            "tools: Tool names must be unique.",
        ),
    }


def test_a_dotted_name_breaks_the_anthropic_openai_and_bedrock_patterns():
    findings = lint_tools(C.IMAGE_RESULT.tools)
    assert facts(findings) == {
        (
            "warning",
            "tool_name_invalid",
            "tools[0].name",
            "anthropic",
            "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
        ),
        (
            "warning",
            "tool_name_invalid",
            "tools[0].name",
            "openai-chat",
            "Invalid 'tools[0].function.name': string does not match pattern. Expected a string "
            "that matches the pattern '^[a-zA-Z0-9_-]+$'.",
        ),
        (
            "warning",
            "tool_name_invalid",
            "tools[0].name",
            "openai-responses",
            "Invalid 'tools[0].name': string does not match pattern. Expected a string that "
            "matches the pattern '^[a-zA-Z0-9_-]+$'.",
        ),
        # AWS's validation text, with the list index counted from 1 (BerriAI/litellm#24668,
        # aws-samples/remote-swe-agents#457).
        (
            "warning",
            "tool_name_invalid",
            "tools[0].name",
            "bedrock",
            "1 validation error detected: Value 'camera.snapshot' at "
            "'toolConfig.tools.1.member.toolSpec.name' failed to satisfy constraint: Member must "
            "satisfy regular expression pattern: [a-zA-Z0-9_-]+",
        ),
    }  # Gemini and MCP allow dots
    anthropic = next(f for f in findings if f.protocol == "anthropic")
    assert "sends it as 'camera_snapshot'" in anthropic.message


def test_a_name_over_64_characters_is_too_long_for_openai():
    name = "get_" + "w" * 66
    findings = lint_tools([weather_tool(name=name)], "openai-chat")
    assert facts(findings) == {
        (
            "warning",
            "tool_name_invalid",
            "tools[0].name",
            "openai-chat",
            "Invalid 'tools[0].function.name': string too long. Expected a string with maximum "
            "length 64, but got a string with length 70 instead.",
        )
    }


def test_gemini_names_with_a_colon_pass_the_sdk_but_not_the_api_text():
    findings = lint_tools([weather_tool(name="weather:get")], "gemini")
    assert facts(findings) == {
        (
            "warning",
            "tool_name_risky",
            "tools[0].name",
            "gemini",
            "Invalid function name. Must start with a letter or an underscore. Must be "
            "alphameric (a-z, A-Z, 0-9), underscores (_), dots (.) or dashes (-), with a "
            "maximum length of 64.",
        )
    }


def test_an_mcp_name_with_a_space_gets_the_sdk_warnings():
    [finding] = lint_tools([weather_tool(name="get weather")], "mcp")
    assert (finding.level, finding.code, finding.protocol) == (
        "warning",
        "tool_name_invalid",
        "mcp",
    )
    assert finding.vendor_message == (
        "Tool name contains spaces, which may cause parsing issues; Tool name contains invalid "
        "characters: ' '; Allowed characters are: A-Z, a-z, 0-9, underscore (_), dash (-), and "
        "dot (.)"
    )


def test_gemini_parameters_reject_json_schema_keywords():
    params = with_properties(
        {
            "when": {"oneOf": [{"type": "string"}, {"type": "integer"}], "description": "Day"},
            "days": {"type": "integer", "enum": [1, 3, 7], "description": "Forecast length"},
            "note": {"type": ["string", "null"], "description": "Free text"},
        },
        required=["when", "days", "note"],
        **{"$schema": "https://json-schema.org/draft/2020-12/schema"},
    )
    findings = lint_tools([weather_tool(parameters=params)], "gemini")
    assert facts(findings) == {
        (
            "info",
            "schema_keyword_unsupported",
            "tools[0].parameters.$schema",
            "gemini",
            "parameters.$schema: Extra inputs are not permitted",
        ),
        (
            "info",
            "schema_keyword_unsupported",
            "tools[0].parameters.properties.when.oneOf",
            "gemini",
            "parameters.properties.when.oneOf: Extra inputs are not permitted",
        ),
        (
            "info",
            "schema_keyword_unsupported",
            "tools[0].parameters.properties.days.enum",
            "gemini",
            "parameters.properties.days.enum.0: Input should be a valid string",
        ),
        (
            "info",
            "schema_keyword_unsupported",
            "tools[0].parameters.properties.note.type",
            "gemini",
            "'list' object has no attribute 'upper'",
        ),
    }
    assert all("use parametersJsonSchema" in f.message for f in findings)


def test_openai_strict_mode_needs_closed_objects_and_every_property_required():
    findings = lint_tools([weather_tool(strict=True)], "openai-chat")
    head = "Invalid schema for function 'get_weather': In context=(), "
    assert facts(findings) == {
        (
            "error",
            "strict_additional_properties",
            "tools[0].parameters",
            "openai-chat",
            head + "'additionalProperties' is required to be supplied and to be false.",
        ),
        (
            "error",
            "strict_required",
            "tools[0].parameters.properties.unit",
            "openai-chat",
            head + "'required' is required to be supplied and to be an array including every "
            "key in properties. Missing 'unit'.",
        ),
    }


def test_openai_strict_mode_refuses_composition_keywords_where_they_sit():
    params = with_properties(
        {"place": {"allOf": [{"type": "string"}], "description": "City"}},
        required=["place"],
        additionalProperties=False,
    )
    findings = lint_tools([weather_tool(parameters=params, strict=True)], "openai-responses")
    assert facts(findings) == {
        (
            "error",
            "strict_keyword_unsupported",
            "tools[0].parameters.properties.place.allOf",
            "openai-responses",
            "Invalid schema for function 'get_weather': In context=('properties', 'place'), "
            "'allOf' is not permitted.",
        )
    }


def test_the_reference_strict_tool_passes_openai_strict_mode():
    tool = json.loads((REFERENCE / "openai-chat.variant.strict_tool.json").read_text())
    findings = lint_payload(tool, "openai-chat")
    assert findings == []


def test_anthropic_strict_tools_refuse_size_and_range_constraints():
    params = with_properties(
        {"days": {"type": "integer", "minimum": 1, "description": "Forecast length"}},
        required=["days"],
        additionalProperties=False,
    )
    findings = lint_tools([weather_tool(parameters=params, strict=True)], "anthropic")
    assert facts(findings) == {
        (
            "error",
            "strict_keyword_unsupported",
            "tools[0].parameters.properties.days.minimum",
            "anthropic",
            "For 'integer' type, property 'minimum' is not supported",
        )
    }


def test_openai_caps_descriptions_at_1024_characters():
    long = "Get the current weather for a location. " * 30
    findings = lint_tools([weather_tool(description=long)], "openai-chat")
    assert facts(findings) == {
        (
            "error",
            "description_too_long",
            "tools[0].description",
            "openai-chat",
            "Invalid 'tools[0].function.description': string too long. Expected a string with "
            f"maximum length 1024, but got a string with length {len(long)} instead.",
        )
    }


# ---------------------------------------------------------------------------- public API


def test_format_finding_prints_the_cli_line():
    finding = Finding("error", "missing_result", "messages[1].parts[1]", "gemini: it is missing")
    assert format_finding(finding) == "ERROR messages[1].parts[1]: gemini: it is missing"
    assert format_finding(Finding("info", "x", "tools", "m")) == "INFO tools: m"


def test_has_errors_ignores_warnings_and_infos():
    assert not has_errors([Finding("warning", "x", "p", "m"), Finding("info", "y", "p", "m")])
    assert has_errors([Finding("info", "y", "p", "m"), Finding("error", "z", "p", "m")])


@pytest.mark.parametrize("name", PROTOCOLS[:4])
def test_lint_payload_reads_every_model_vendor_request(name):
    dropped = history(tool_message(C.PARIS_RESULT), C.WEATHER_FINAL)
    payload = protocols.get(name).encode_request(dropped).value
    findings = lint_payload(payload, name)
    assert ("error", "missing_result", name) in {(f.level, f.code, f.protocol) for f in findings}


@pytest.mark.parametrize(
    "path",
    [
        p
        for p in sorted(REFERENCE.glob("*.request.*.json"))
        if not p.name.startswith("bedrock") and "previous_response_id" not in p.name
    ],
    ids=lambda p: p.name,
)
def test_the_reference_requests_are_clean_for_every_vendor(path):
    assert lint_payload(json.loads(path.read_text())) == []


def test_a_previous_response_id_request_answers_calls_of_the_stored_response():
    payload = json.loads(
        (
            REFERENCE / "openai-responses.variant.request.continuation_previous_response_id.json"
        ).read_text()
    )
    assert [f.code for f in lint_payload(payload, "openai-responses")] == ["history_incomplete"]
    # Sent to another vendor, the same history lacks its calls.
    assert has_errors(lint_payload(payload, "anthropic"))


def test_lint_payload_of_a_model_response_checks_only_its_call_ids():
    payload = protocols.get("anthropic").encode_response(C.WEATHER_TOOL_USE).value
    assert lint_payload(payload) == []  # a turn ending in calls is not a dropped result


def test_lint_payload_of_an_mcp_transcript_applies_mcp_rules_only():
    payload = json.loads((REFERENCE / "mcp.transcript.2025-11-25.json").read_text())
    findings = lint_payload(payload)
    assert facts(findings) == {
        ("warning", "unknown_tool", "messages[4].parts[0]", None, None),
        ("error", "unknown_tool", "messages[4].parts[0]", "mcp", "Unknown tool: get_wether"),
    }  # no user turn in a transcript, yet no "first message must be user" from model APIs


def test_lint_payload_checks_mcp_tools_for_every_vendor():
    listing = {"tools": [{"name": "camera.snapshot", "inputSchema": {"type": "object"}}]}
    findings = lint_payload(listing)
    assert {(f.protocol, f.code) for f in findings} == {
        (None, "description_missing"),
        ("anthropic", "tool_name_invalid"),
        ("openai-chat", "tool_name_invalid"),
        ("openai-responses", "tool_name_invalid"),
        ("bedrock", "tool_name_invalid"),
    }


def test_lint_payload_reads_bare_tool_declarations_of_any_vendor():
    anthropic = {"name": "get_weather", "input_schema": {"type": "object", "properties": {}}}
    gemini = json.loads((REFERENCE / "gemini.variant.tool_parametersJsonSchema.json").read_text())
    assert [f.code for f in lint_payload([anthropic])] == ["description_missing"]
    assert lint_payload(gemini) == []


def test_lint_payload_reads_canonical_conversation_json():
    text_first = history(Message(role="user", parts=[Text(text="hurry")]), C.WEATHER_RESULTS)
    findings = lint_payload(dump(text_first), "anthropic")
    assert [f.code for f in findings] == ["text_before_results"]


def test_lint_payload_refuses_what_no_codec_recognises():
    with pytest.raises(CodecError):
        lint_payload({"hello": "world"})


def test_cli_lint_prints_one_line_per_finding_and_exits_1_on_errors(tmp_path, capsys):
    dropped = history(tool_message(C.PARIS_RESULT), C.WEATHER_FINAL)
    path = tmp_path / "dropped.json"
    path.write_text(json.dumps(protocols.get("openai-chat").encode_request(dropped).value))
    assert main(["lint", str(path), "--protocol", "openai-chat"]) == 1
    assert capsys.readouterr().out == (
        f"ERROR messages[1].parts[1]: openai-chat: call {TOKYO} has no tool message right after "
        f'its assistant message — "{CHAT_MISSING.format(TOKYO)}"\n'
    )


def test_an_object_whose_properties_all_have_defaults_needs_no_required():
    status = {"type": "string", "enum": ["open", "all"], "default": "all", "description": "Which"}
    params = with_properties({"status": status})
    assert facts(lint_tools([weather_tool(parameters=params)])) == set()
