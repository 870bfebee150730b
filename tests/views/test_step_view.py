"""The Protocols page's content: payloads of the current step, changes, warnings, verdicts."""

from __future__ import annotations

import json
import random
import re

import pytest

from flowdebug import protocols
from flowdebug.engine.session.debugger import Session
from flowdebug.model import Conversation, Message, Text, ToolCall, ToolResult
from flowdebug.render import text as payload_text
from flowdebug.render.text import changed_paths, elide, pretty, sse_text, text_diff
from flowdebug.views import protocols as step_view
from flowdebug.views.debugger import previous_state
from flowdebug.views.protocols import step_views, verdict

NAMES = list(protocols.PROTOCOLS)
view = step_view.step_view


def weather(steps: int) -> Session:
    s = Session.from_scenario("weather")
    for _ in range(steps):
        s.step()
    return s


@pytest.fixture(scope="module")
def finished() -> Session:
    return weather(5)


def test_step_zero_shows_only_the_pending_request_with_nothing_to_compare():
    v = view(Session.from_scenario("weather"), "anthropic", None)
    assert v.pending and v.turn == 1
    assert list(v.payloads) == ["request"]
    assert v.payloads["request"].value["messages"] == [
        {"role": "user", "content": "Weather in Paris and Tokyo?"}
    ]
    assert v.diffs == {"request": step_view.Change("first")}
    assert v.wire is None


def test_model_turn_has_request_response_and_stream_new_in_this_step():
    s = weather(2)
    v = view(s, "openai-chat", previous_state(s))
    assert not v.pending and v.turn == 1
    assert list(v.payloads) == ["request", "response", "stream"]
    calls = v.payloads["response"].value["choices"][0]["message"]["tool_calls"]
    assert [c["id"] for c in calls] == ["call_1", "call_2"]
    assert v.diffs["request"].status == "unchanged"
    assert v.diffs["response"].status == "new" and v.diffs["stream"].status == "new"
    events = v.payloads["stream"].text.split("\n\n")
    assert len(events) == len(v.payloads["stream"].value)
    assert all(e.startswith("data: {") for e in events)


def test_after_execution_the_request_diff_shows_the_call_and_result_messages_added():
    s = weather(3)
    v = view(s, "anthropic", previous_state(s))
    assert v.pending and v.turn == 2
    change = v.diffs["request"]
    assert change.status == "changed" and change.before == "request 1"
    assert change.paths == ("$.messages[1] added", "$.messages[2] added")
    assert change.diff.startswith("--- request 1 (previous step)\n+++ request 2 (this step)")
    added = [line for line in change.diff.splitlines() if line.startswith("+ ")]
    assert any('"type": "tool_result"' in line for line in added)
    assert any('"is_error": true' in line for line in added)
    # the model's last turn stays in view while request 2 waits: its calls were just run
    assert v.payloads["response"].label == "response 1"
    assert v.diffs["response"] == step_view.Change("unchanged", before="response 1")


def test_continuation_changes_no_payload():
    s = weather(4)
    v = view(s, "gemini", previous_state(s))
    assert {k: c.status for k, c in v.diffs.items()} == dict.fromkeys(
        ("request", "response", "stream"), "unchanged"
    )
    assert v.diffs["request"].before == "request 2"


@pytest.mark.parametrize("steps", [1, 2, 3, 4, 5])
def test_a_reopened_session_compares_with_what_its_last_step_changed(steps):
    # reloaded from the store, a session has no undo stack: the trace says what changed
    s = weather(steps)
    reopened = Session(s.state.model_copy(), s.player)
    assert not reopened.undo_stack
    expected = step_views(s, NAMES)
    got = step_views(reopened, NAMES)
    assert {n: got[n].diffs for n in NAMES} == {n: expected[n].diffs for n in NAMES}


def test_an_edit_leaves_nothing_to_compare_once_its_undo_stack_is_gone():
    s = weather(2)
    s.edit_part(0, 0, {"kind": "text", "text": "Weather in Oslo?"})
    assert step_view.previous_conversation(s.state) is None
    s.undo()
    assert step_view.previous_conversation(s.state) is not None


def test_diff_hunk_line_numbers_point_into_the_whole_payload():
    s = weather(3)
    v = view(s, "openai-responses", previous_state(s))
    lines = v.payloads["request"].text.splitlines()
    hunk = next(x for x in v.diffs["request"].diff.splitlines() if x.startswith("@@"))
    start = int(re.match(r"@@ -\d+,\d+ \+(\d+)", hunk)[1])
    first_context = v.diffs["request"].diff.splitlines()[3]
    assert lines[start - 1] == first_context[1:]


def test_mcp_payload_warnings_have_code_path_and_message():
    v = view(Session.from_scenario("weather"), "mcp", None)
    assert [(w.code, w.path) for w in v.warnings] == [
        ("system_dropped", "system"),
        ("tool_choice_dropped", "tool_choice"),
        ("text_dropped", "messages[0].parts[0]"),
        ("messages_regrouped", "messages"),
    ]
    assert v.warnings[0].message == "MCP carries no system prompt"


def test_verdicts_come_from_the_linter_per_vendor():
    s = weather(3)
    dropped = s.conversation.model_copy(
        update={
            "messages": [
                *s.conversation.messages[:2],
                Message(role="tool", parts=[s.conversation.messages[2].parts[1]]),
            ]
        }
    )
    s.state.conversation = dropped
    views = step_views(s, NAMES)
    assert {n: v.verdict for n, v in views.items()} == {
        "anthropic": "rejected",
        "openai-chat": "rejected",
        "openai-responses": "rejected",
        "gemini": "rejected",
        "mcp": "warnings",
        "bedrock": "rejected",
    }
    a = views["anthropic"]
    assert a.counts == {"error": 1, "warning": 0, "info": 0}
    assert a.findings[0].code == "missing_result"
    assert a.findings[0].vendor_message.startswith(
        "`tool_use` ids were found without `tool_result` blocks immediately after: call_1."
    )
    assert views["openai-responses"].findings[0].vendor_message == (
        "No tool output found for function call call_1."
    )
    assert views["anthropic"].icon == "⛔"
    assert step_view.verdict_badge("accepted") == ":green[✅ **accepted**]"


def test_verdict_levels():
    f = step_view.Finding
    assert verdict([]) == "accepted"
    assert verdict([f("info", "x", "p", "m")]) == "accepted"
    assert verdict([f("info", "x", "p", "m"), f("warning", "y", "p", "m")]) == "warnings"
    assert verdict([f("warning", "y", "p", "m"), f("error", "z", "p", "m")]) == "rejected"


# -- the wire ----------------------------------------------------------------------------------


def fake_exchange(s: Session, protocol: str = "anthropic") -> dict:
    request = view(s, protocol, None).payloads["request"].value
    wire = {**request, "stream": False, "max_tokens": 2048}
    return {
        "step": 2,
        "protocol": protocol,
        "request": wire,
        "response": {"id": "msg_live", "type": "message", "content": []},
        "stream_events": None,
        "status": 200,
        "url": "https://api.anthropic.com/v1/messages",
        "differences": [
            "expected (the SDK sends stream=false) $.stream: the SDK added False",
            {
                "path": "$.max_tokens",
                "change": "changed",
                "codec": 1024,
                "wire": 2048,
                "expected": False,
                "reason": "",
            },
        ],
    }


def test_a_live_exchange_shows_on_the_wire_beside_the_codec_for_its_protocol_only():
    s = weather(2)
    s.state.exchanges = [fake_exchange(s)]
    v = view(s, "anthropic", previous_state(s))
    w = v.wire
    assert w is not None and w.step == 2 and w.status == 200
    assert w.url == "https://api.anthropic.com/v1/messages"
    assert w.request["stream"] is False and w.response["id"] == "msg_live"
    assert w.differences == (
        "expected (the SDK sends stream=false) $.stream: the SDK added False",
        "DIFFERENT $.max_tokens: changed codec=1024 wire=2048",
    )
    assert '-  "max_tokens": 1024,' in w.diff and '+  "max_tokens": 2048,' in w.diff
    assert w.diff.startswith("--- codec encoding\n+++ on the wire")
    assert view(s, "openai-chat", None).wire is None


def test_a_live_exchange_of_an_earlier_turn_is_not_shown_for_the_pending_request():
    s = weather(2)
    s.state.exchanges = [fake_exchange(s)]
    s.step()  # execution: request 2 is pending, nothing was sent for it yet
    assert view(s, "anthropic", previous_state(s)).wire is None


def test_a_stream_exchange_keeps_its_events():
    s = weather(2)
    ex = fake_exchange(s)
    ex["stream_events"] = [{"type": "message_start"}, {"type": "message_stop"}]
    s.state.exchanges = [ex]
    assert view(s, "anthropic", None).wire.stream == ex["stream_events"]


# -- speed: only the new state is computed ------------------------------------------------------


def long_history(n: int) -> Conversation:
    messages: list[Message] = []
    i = 0
    while len(messages) < n:
        a, b = f"call_{i}a", f"call_{i}b"
        messages += [
            Message(role="user", parts=[Text(text=f"Weather in City{i}?")]),
            Message(
                role="assistant",
                parts=[
                    ToolCall(id=a, name="get_weather", arguments={"location": f"City{i}"}),
                    ToolCall(id=b, name="get_weather", arguments={"location": f"Town{i}"}),
                ],
            ),
            Message(
                role="tool",
                parts=[
                    ToolResult(call_id=a, name="get_weather", content='{"temperature": 20}'),
                    ToolResult(call_id=b, name="get_weather", content="timeout", is_error=True),
                ],
            ),
            Message(role="assistant", parts=[Text(text=f"City{i} is 20 degrees.")]),
        ]
        i += 1
    return Conversation(messages=messages[:n])


def test_a_step_on_a_long_history_encodes_only_the_new_state():
    step_view.clear_cache()
    conv = long_history(1002)
    before = Session.from_scenario("weather")
    before.state.conversation = conv.model_copy(update={"messages": conv.messages[:1000]})
    step_views(before, NAMES)
    after = before.clone()
    after.undo_stack.append(before.state.snapshot())
    after.state.conversation = conv
    misses = step_view._payloads.cache_info().misses
    views = step_views(after, NAMES)
    assert step_view._payloads.cache_info().misses == misses + len(NAMES)
    assert views["anthropic"].diffs["request"].paths == (
        "$.messages[999] added",
        "$.messages[1000] added",
    )
    again = step_views(after, NAMES)
    assert step_view._payloads.cache_info().misses == misses + len(NAMES)
    assert again["gemini"].payloads["request"] is views["gemini"].payloads["request"]


def test_equal_conversations_share_one_cache_entry():
    step_view.clear_cache()
    conv = long_history(8)
    twin = Conversation.model_validate_json(conv.model_dump_json())
    assert step_view.fingerprint(conv) == step_view.fingerprint(twin)
    s1, s2 = Session.from_scenario("weather"), Session.from_scenario("weather")
    s1.state.conversation, s2.state.conversation = conv, twin
    view(s1, "gemini")
    view(s2, "gemini")
    info = step_view._payloads.cache_info()
    assert info.misses == 1 and info.currsize == 1


# -- text helpers -------------------------------------------------------------------------------


def test_pretty_is_json_dumps_indent_2_for_every_protocols_long_request():
    conv = long_history(60)
    for name in NAMES:
        value = protocols.get(name).encode_request(conv).value
        assert pretty(value) == json.dumps(value, indent=2, ensure_ascii=False), name
    odd = {"a": [[] for _ in range(20)], "b": {"x": [1]}, "c": "é"}
    assert pretty(odd) == json.dumps(odd, indent=2, ensure_ascii=False)
    assert pretty(list(range(40))) == json.dumps(list(range(40)), indent=2)


def test_sse_text_puts_one_event_per_data_line():
    assert sse_text([{"a": 1}, {"b": "é"}]) == 'data: {"a": 1}\n\ndata: {"b": "é"}'


HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def patch(before: str, diff: str) -> str:
    """Apply a unified diff, checking every context and removed line against ``before``."""
    a, out, i = before.splitlines(), [], 0
    lines = diff.splitlines()[2:]
    k = 0
    while k < len(lines):
        m = HUNK.match(lines[k])
        assert m, lines[k]
        count = int(m[2]) if m[2] is not None else 1
        start = int(m[1]) - 1 if count else int(m[1])
        out += a[i:start]
        i = start
        k += 1
        while k < len(lines) and not lines[k].startswith("@@"):
            tag, body = lines[k][0], lines[k][1:]
            if tag in " -":
                assert a[i] == body
                i += 1
            if tag in " +":
                out.append(body)
            k += 1
    return "\n".join(out + a[i:])


def test_text_diff_turns_before_into_after_with_hunks_at_the_right_lines():
    rng = random.Random(4)
    for _ in range(1500):
        a = [rng.choice("abcdef") for _ in range(rng.randint(0, 40))]
        b = list(a)
        for _ in range(rng.randint(1, 4)):
            op = rng.random()
            if op < 0.4 and b:
                b[rng.randrange(len(b))] = rng.choice("xyza")
            elif op < 0.7:
                b.insert(rng.randint(0, len(b)), rng.choice("xyz"))
            elif b:
                del b[rng.randrange(len(b))]
        before, after = "\n".join(a), "\n".join(b)
        diff = text_diff(before, after, "a", "b")
        if before == after:
            assert diff == ""
        else:
            assert diff.startswith("--- a\n+++ b\n")
            assert patch(before, diff) == after


def test_text_diff_of_a_long_text_shows_only_the_change():
    before = "\n".join(f"line {i}" for i in range(5000))
    after = before.replace("line 4000\n", "line 4000 changed\n")
    diff = text_diff(before, after, "a", "b")
    assert diff.splitlines()[2:] == [
        "@@ -3999,5 +3999,5 @@",
        " line 3998",
        " line 3999",
        "-line 4000",
        "+line 4000 changed",
        " line 4001",
        " line 4002",
    ]


def test_changed_paths_name_what_was_added_removed_and_changed():
    before = {"model": "a", "messages": [1, 2, {"x": 1}], "gone": True}
    after = {"model": "b", "messages": [1, 2, {"x": 2}, 4], "new": 1}
    assert changed_paths(before, after) == [
        "$.model changed",
        "$.messages[2] changed",
        "$.messages[3] added",
        "$.gone removed",
        "$.new added",
    ]
    many = changed_paths([], list(range(30)))
    assert len(many) == payload_text.MAX_PATHS + 1 and many[-1] == "… 18 more"


def test_elide_keeps_the_first_and_last_lines_of_a_long_text():
    text = "\n".join(str(i) for i in range(1000))
    shown, hidden = elide(text, head=10, tail=20)
    lines = shown.splitlines()
    assert hidden == 970
    assert lines[:10] == [str(i) for i in range(10)] and lines[-1] == "999"
    assert "970 lines hidden" in lines[10]
    assert elide("a\nb", head=10, tail=20) == ("a\nb", 0)


def test_edited_arguments_name_json_errors_and_schema_violations():
    from flowdebug.views.debugger import edited_arguments

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    assert edited_arguments('{"n": 2}', schema) == ({"n": 2}, [])
    assert edited_arguments('{"n": ', schema) == (
        None,
        ["not valid JSON: Expecting value at line 1 column 7"],
    )
    assert edited_arguments("[1]", schema) == (None, ["arguments must be a JSON object"])
    value, problems = edited_arguments('{"n": "x"}', schema)
    assert value == {"n": "x"} and problems == ["arguments.n: 'x' is not of type 'integer'"]
