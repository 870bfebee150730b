"""Shapes the vendors' APIs and SDKs accept, read by rule (issue 31): documented fragments
with a ``fragment_assumed`` warning, streams as loggers keep them, tool types by the facts."""

from __future__ import annotations

from flowdebug.model import Text, Thinking, ToolCall
from flowdebug.protocols.convert import decode


def test_anthropic_message_as_the_docs_print_it_is_read_as_a_response() -> None:
    got = decode(
        {
            "content": [
                {"type": "thinking", "thinking": "Weather first.", "signature": "EqQB"},
                {"type": "text", "text": "Let me check."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "get_weather",
                    "input": {"city": "SF"},
                },
            ],
            "stop_reason": "tool_use",
        }
    )
    assert (got.protocol, got.kind) == ("anthropic", "response")
    assert [w.code for w in got.warnings] == ["fragment_assumed"]
    assert "without id, type, role" in got.warnings[0].message
    thinking, text, call = got.response.message.parts  # type: ignore[union-attr]
    assert isinstance(thinking, Thinking) and thinking.signature == "EqQB"
    assert isinstance(text, Text) and text.text == "Let me check."
    assert isinstance(call, ToolCall) and (call.id, call.arguments) == ("toolu_1", {"city": "SF"})
    assert got.response.stop_reason == "tool_use"  # type: ignore[union-attr]


def test_content_of_openai_shaped_text_alone_is_not_claimed_as_anthropic() -> None:
    from flowdebug.protocols.anthropic.fragment import fragment

    assert fragment({"content": [{"type": "text", "text": "hi"}]}) is None
