"""OpenAI's error bodies (Chat Completions and Responses alike):
``{"error": {"message", "type", "param", "code"}}``; mid-stream Chat sends an error chunk."""

from __future__ import annotations

from typing import Any

TEXTS = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: (
        "invalid_request_error",
        "invalid_api_key",
        "Incorrect API key provided. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
    ),
    403: (
        "invalid_request_error",
        "unsupported_country_region_territory",
        "Country, region, or territory not supported",
    ),
    404: (
        "invalid_request_error",
        "model_not_found",
        "The model `{model}` does not exist or you do not have access to it.",
    ),
    429: (
        "requests",
        "rate_limit_exceeded",
        "Rate limit reached for {model} on requests per min (RPM): Limit 3, Used 3, "
        "Requested 1. Please try again in 20s.",
    ),
    500: (
        "server_error",
        None,
        "The server had an error while processing your request. Sorry about that!",
    ),
    503: ("server_error", None, "The engine is currently overloaded, please try again later"),
}


def error_response(status: int, model: str, version: str = "v1") -> tuple[int, Any, dict[str, str]]:
    """``(status, body, headers)`` of OpenAI's answer for an HTTP error ``status``."""
    headers = {"retry-after": "1"} if status == 429 else {}
    kind, code, text = TEXTS.get(status, ("server_error", None, f"HTTP {status}"))
    message = text.format(model=model, version=version)
    return (
        status,
        {"error": {"message": message, "type": kind, "param": None, "code": code}},
        headers,
    )


def stream_failure() -> tuple[str | None, Any]:
    """``(SSE event name, data)`` when a Chat stream fails midway."""
    return None, error_response(500, "")[1]
