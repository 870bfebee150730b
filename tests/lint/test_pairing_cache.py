"""The calls and results of each message are found once and shared by every vendor's pairing
and every lint of a growing history (flowdebug.lint.base.pairing._parts)."""

from __future__ import annotations

from flowdebug.lint.base import pairing
from flowdebug.lint.protocol import check_conversation
from flowdebug.model import Conversation, Message, Text, ToolCall, ToolResult


def _call(i: int) -> Message:
    return Message(role="assistant", parts=[ToolCall(id=f"c{i}", name="t", arguments={})])


def _result(i: int, text: str = "ok") -> Message:
    return Message(role="tool", parts=[ToolResult(call_id=f"c{i}", content=[Text(text=text)])])


def test_a_message_at_its_index_is_read_once():
    m = _call(1)
    calls, results = pairing.parts_of([_call(0), _call(2), _call(3), m])[3]
    assert [(s.path, c.id) for s, c in calls] == [("messages[3].parts[0]", "c1")]
    assert results == []
    again = pairing.parts_of([m, m, m, m])
    assert again[3][0] is calls  # the same message at the same index: the same lists
    assert again[0][0][0][0].index == 0  # the same message elsewhere: its own sites


def test_an_edited_history_is_judged_on_its_new_messages():
    """Messages are frozen: an edit is a new message object, never the cached one changed."""
    user = Message(role="user", parts=[Text(text="go")])
    good = Conversation(messages=[user, _call(1), _result(1)])
    assert not [f for f in check_conversation(good, ["openai-chat"]) if f.level == "error"]
    edited = Conversation(messages=[user, _call(1), _result(2)])  # the result answers no call
    assert [f.code for f in check_conversation(edited, ["openai-chat"]) if f.level == "error"]


def test_the_table_is_bounded(monkeypatch):
    monkeypatch.setattr(pairing, "_PARTS_MAX", 10)
    pairing._PARTS.clear()
    kept = [_call(i) for i in range(25)]
    for i, m in enumerate(kept):
        assert pairing.parts_of([m] * (i + 1))[i][0][0][1].id == f"c{i}"
    assert len(pairing._PARTS) <= 10
