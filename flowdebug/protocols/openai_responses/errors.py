"""OpenAI Responses errors: OpenAI's error body; mid-stream an ``event: error``."""

from __future__ import annotations

from typing import Any

from flowdebug.protocols.openai_chat.errors import error_response

__all__ = ["error_response", "stream_failure"]


def stream_failure() -> tuple[str | None, Any]:
    """``(SSE event name, data)`` when a Responses stream fails midway."""
    return "error", {
        "type": "error",
        "code": "server_error",
        "message": "The server had an error while processing your request.",
        "param": None,
        "sequence_number": 1,
    }
