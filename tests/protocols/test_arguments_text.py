"""One reading of a call's arguments sent as JSON text: OpenAI Chat and Responses read the same
text the same way (protocols/wire_helpers.arguments_from_text)."""

from __future__ import annotations

import pytest

from flowdebug.protocols import get
from flowdebug.protocols.wire_helpers import arguments_from_text

TEXTS = [
    ("", {}, None),
    ("{}", {}, None),
    ('{"city": "Paris"}', {"city": "Paris"}, None),
    (' {"city": "Paris"} ', {"city": "Paris"}, None),
    ("[1, 2]", {}, "[1, 2]"),
    ('"Paris"', {}, '"Paris"'),
    ("not json", {}, "not json"),
    ('{"a": NaN}', {}, '{"a": NaN}'),
    ('{"a": 1', {}, '{"a": 1'),
]


@pytest.mark.parametrize(("text", "arguments", "raw"), TEXTS)
def test_arguments_text_is_read_once_for_every_vendor_that_sends_it(text, arguments, raw):
    assert arguments_from_text(text) == (arguments, raw)
    chat = get("openai-chat").decode_response(
        {
            "id": "c",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "get_weather", "arguments": text},
                            }
                        ],
                    },
                }
            ],
        }
    )
    responses = get("openai-responses").decode_response(
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 0,
            "model": "gpt-4o",
            "status": "completed",
            "output": [
                {
                    "type": "function_call",
                    "id": "fc_1",
                    "call_id": "call_1",
                    "name": "get_weather",
                    "arguments": text,
                    "status": "completed",
                }
            ],
        }
    )
    for got in (chat, responses):
        call = got.value.message.tool_calls[0]
        assert (call.arguments, call.raw_arguments) == (arguments, raw)
