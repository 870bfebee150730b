"""A canonical tool result -> the OpenAI Chat message that carries it.

OpenAI Chat has no result part: each result is a whole ``{"role": "tool", "tool_call_id",
"content"}`` message. Its content takes text only (images are dropped as
image_in_result_dropped), and it has no error flag and no structured content: an error
travels as ``{"error": "<text>"}`` (result_content_flattened when its parts are joined),
structured content is dropped (structured_content_dropped). Two other shapes come back
as they came: a legacy ``{"role": "function", "name"}`` message and Ollama's name-only tool
message (``paired_by`` in ``provider_details["openai-chat"]``).
"""

from __future__ import annotations

from typing import Any, Protocol, assert_never

from flowdebug.model import Image, Text, ToolResult
from flowdebug.protocols.base import Warnings
from flowdebug.protocols.error_results import error_output, warn_if_read_as_error
from flowdebug.protocols.openai_chat.parts import PROTOCOL
from flowdebug.protocols.wire_helpers import result_items_shifted


class Names(Protocol):
    """What a tool message needs of the encode it belongs to (:class:`.encode.Encoder`)."""

    w: Warnings
    legacy: bool

    def name(self, name: str, path: str) -> str: ...

    def call_id(self, call_id: str, path: str) -> str: ...


def tool_message(enc: Names, result: ToolResult, path: str) -> dict[str, Any]:
    """The wire message for ``result``; names and ids go through ``enc``'s renames."""
    if result.structured is not None:
        enc.w.add(
            "structured_content_dropped",
            path,
            "OpenAI Chat tool messages carry only content; structured content dropped",
        )
    texts: list[str] | None = None
    if not isinstance(result.content, str):
        texts = []
        for k, item in enumerate(result.content):
            match item:
                case Text():
                    texts.append(item.text)
                case Image():
                    # The tool message's content accepts only text parts.
                    enc.w.add(
                        "image_in_result_dropped",
                        f"{path}.content[{k}]",
                        "OpenAI Chat tool messages accept only text; image dropped",
                    )
                case _:
                    assert_never(item)
        result_items_shifted(result, path, enc.w, 0)
    content: str | list[dict[str, Any]]
    if result.name is not None:
        enc.name(result.name, path)  # the decoder names a result after its call
    if result.is_error:
        # No error flag in OpenAI Chat: the error travels as {"error": "<text>"}.
        text = result.content if isinstance(result.content, str) else "\n".join(texts or [])
        content = error_output(text)
        if texts is not None:
            enc.w.add(
                "result_content_flattened",
                f"{path}.content",
                'an error result travels as one {"error": text} string; its parts joined',
            )
    elif isinstance(result.content, str):
        content = result.content
        warn_if_read_as_error(enc.w, content, path, "OpenAI Chat")
    else:
        content = [{"type": "text", "text": t} for t in texts or []] or ""
        if not content:
            enc.w.add(
                "result_content_flattened", f"{path}.content", "no content is sent as the text ''"
            )
    own = (result.provider_details or {}).get(PROTOCOL)
    paired_by = own.get("paired_by") if isinstance(own, dict) else None
    if enc.legacy and result.name is not None and isinstance(content, str):
        return {"role": "function", "name": enc.name(result.name, path), "content": content}
    if paired_by in ("name", "tool_name") and result.name is not None:
        # Ollama's name-only tool message, as it came.
        return {"role": "tool", paired_by: result.name, "content": content}
    return {
        "role": "tool",
        "tool_call_id": enc.call_id(result.call_id, path),
        "content": content,
    }
