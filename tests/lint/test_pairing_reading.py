"""A lint reads a history once for all six vendors (flowdebug.lint.base.pairing.reading): its
shortcuts (where the history ends, the merged turns and adjacent exchanges built once, one
pairing for two vendors that see the same exchanges) must give what each vendor's rules give
on their own, outside a reading, for any history; and the whole lint must find what it found
before it was made fast (a corpus recorded then, tests/fixtures/lint)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import astuple

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowdebug.lint import protocol
from flowdebug.lint.base import pairing
from flowdebug.lint.turn_rules import check_declared_turns
from flowdebug.model import Conversation, Message, Text, Tool, ToolCall, ToolResult
from flowdebug.protocols import facts
from tests.hypothesis_profiles import examples
from tests.paths import FIXTURES

RECORDED = FIXTURES / "lint" / "recorded_findings.jsonl"

VENDORS = ("anthropic", "openai-chat", "openai-responses", "gemini", "mcp", "bedrock")
IDS = st.sampled_from(["a", "b", "c", ""])
NAMES = st.sampled_from(["get_weather", "list_tasks", "get_wether"])


@st.composite
def parts(draw: st.DrawFn, role: str) -> list:
    out: list = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["text", "call", "result"]))
        if kind == "call" and role == "assistant":
            details = {"gemini": {"syntheticId": True}} if draw(st.booleans()) else None
            out.append(
                ToolCall(id=draw(IDS), name=draw(NAMES), arguments={}, provider_details=details)
            )
        elif kind == "result" and role != "assistant":
            out.append(ToolResult(call_id=draw(IDS), name=draw(NAMES), content="r"))
        else:
            out.append(Text(text="t"))
    return out


@st.composite
def conversations(draw: st.DrawFn) -> Conversation:
    messages = []
    for _ in range(draw(st.integers(0, 12))):
        role = draw(st.sampled_from(["system", "user", "assistant", "assistant", "tool", "tool"]))
        messages.append(Message(role=role, parts=draw(parts(role))))
    if messages and draw(st.booleans()):  # the same message object at two places
        messages.insert(draw(st.integers(0, len(messages))), messages[0])
    tools = [Tool(name=n, description="d") for n in draw(st.sets(NAMES, max_size=2))]
    details = {"openai-responses": {"previous_response_id": "r1"}} if draw(st.booleans()) else None
    return Conversation(messages=messages, tools=tools, provider_details=details)


def _alone(conv: Conversation, name: str) -> list:
    """One vendor's findings as its rules give them, with no reading in force."""
    vendor = facts(name)
    if vendor.lint.history is not None:
        return vendor.lint.history(conv)
    assert vendor.turn_rules is not None
    return check_declared_turns(conv, name, vendor.turn_rules)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), st.permutations(VENDORS))
def test_a_lint_read_once_finds_what_each_vendor_finds_alone(conv, order):
    expected = protocol._neutral(conv) + protocol._call_ids(conv.messages, order)
    for name in order:
        expected += _alone(conv, name)
    assert protocol.check_conversation(conv, order) == expected
    assert pairing._read(conv.messages) is None  # the reading ended with the lint


def test_a_reading_serves_only_its_own_list_and_ends_with_its_block():
    call = Message(role="assistant", parts=[ToolCall(id="a", name="t", arguments={})])
    answer = Message(role="tool", parts=[ToolResult(call_id="a", content="ok")])
    history = [Message(role="user", parts=[Text(text="go")]), call, answer]
    with pairing.reading(history):
        assert pairing.ends_history(history, 2)
        assert not pairing.ends_history(history, 1)
        grown = [*history, call]  # another list, even one made of the same messages
        assert pairing.ends_history(grown, 3) and not pairing.ends_history(grown, 2)
        with pairing.reading(grown):
            assert pairing._read(grown) is not None and pairing._read(history) is None
        assert pairing._read(history) is not None
    assert pairing._read(history) is None


def test_two_vendors_on_the_same_exchanges_each_get_their_own_pairing():
    call = Message(role="assistant", parts=[ToolCall(id="a", name="t", arguments={})])
    stray = Message(role="tool", parts=[ToolResult(call_id="zz", content="?")])
    history = [Message(role="user", parts=[Text(text="go")]), call, stray]
    with pairing.reading(history):
        exchanges = pairing.adjacent_exchanges(history)
        assert pairing.adjacent_exchanges(history) is exchanges  # built once
        first, second = pairing.pair(exchanges, history), pairing.pair(exchanges, history)
        assert first is not second and first.unexpected == second.unexpected
        first.unexpected = []  # what OpenAI Responses does to its strays
        assert [r.call_id for _, r in second.unexpected] == ["zz"]


def test_the_lint_finds_what_it_found_before_it_was_made_fast():
    """200 histories, each linted for the six vendors by the code of 11f9740 (before the
    reading): same findings, same order, same words."""
    lines = RECORDED.read_text("utf-8").splitlines()
    assert len(lines) == 200
    for k, line in enumerate(lines):
        case = json.loads(line)
        conv = Conversation.model_validate(case["conversation"])
        found = protocol.check_conversation(conv, VENDORS)
        where = [[f.protocol, f.code, f.path] for f in found]
        assert where == case["findings"], f"history {k}"
        digest = hashlib.sha256(json.dumps([list(astuple(f)) for f in found]).encode())
        assert digest.hexdigest() == case["sha256"], f"history {k}: a finding's words changed"
