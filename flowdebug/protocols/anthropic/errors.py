"""Anthropic's error bodies: ``{"type": "error", "error": {"type", "message"}, "request_id"}``;
mid-stream an ``event: error``."""

from __future__ import annotations

from typing import Any

TEXTS = {
    400: ("invalid_request_error", "messages: the request is not valid"),
    401: ("authentication_error", "invalid x-api-key"),
    403: (
        "permission_error",
        "Your API key does not have permission to use the specified resource.",
    ),
    404: ("not_found_error", "model: {model}"),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: (
        "rate_limit_error",
        "This request would exceed the rate limit for your organization of 50 requests per "
        "minute. Please reduce the prompt length or the maximum tokens requested, or try "
        "again later.",
    ),
    500: ("api_error", "Internal server error"),
    503: ("overloaded_error", "Overloaded"),
    529: ("overloaded_error", "Overloaded"),
}


def error_response(status: int, model: str, version: str = "v1") -> tuple[int, Any, dict[str, str]]:
    """``(status, body, headers)`` of Anthropic's answer for an HTTP error ``status``."""
    headers = {"retry-after": "1"} if status == 429 else {}
    kind, text = TEXTS.get(status, ("api_error", f"HTTP {status}"))
    body = {
        "type": "error",
        "error": {"type": kind, "message": text.format(model=model, version=version)},
        "request_id": "req_emulated",
    }
    return status, body, {**headers, "request-id": "req_emulated"}


def stream_failure() -> tuple[str | None, Any]:
    """``(SSE event name, data)`` when a stream fails midway."""
    return "error", {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
