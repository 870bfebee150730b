"""Gemini's error bodies: ``{"error": {"code", "message", "status", "details"?}}``. A bad key
is a 400 ``INVALID_ARGUMENT`` with reason ``API_KEY_INVALID``, as the real API answers."""

from __future__ import annotations

from typing import Any

TEXTS = {
    400: ("INVALID_ARGUMENT", "Request contains an invalid argument."),
    401: ("INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."),
    403: (
        "PERMISSION_DENIED",
        "Method doesn't allow unregistered callers (callers without "
        "established identity). Please use API Key or other form of API consumer identity "
        "to call this API.",
    ),
    404: (
        "NOT_FOUND",
        "models/{model} is not found for API version {version}, or is not supported for "
        "generateContent. Call ListModels to see the list of available models and their "
        "supported methods.",
    ),
    429: (
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota, please check your plan and billing details.",
    ),
    500: (
        "INTERNAL",
        "An internal error has occurred. Please retry or report in "
        "https://developers.generativeai.google/guide/troubleshooting",
    ),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
}


def error_response(status: int, model: str, version: str = "v1") -> tuple[int, Any, dict[str, str]]:
    """``(status, body, headers)`` of Gemini's answer for an HTTP error ``status``."""
    headers = {"retry-after": "1"} if status == 429 else {}
    kind, text = TEXTS.get(status, ("UNKNOWN", f"HTTP {status}"))
    error: dict[str, Any] = {
        "code": status,
        "message": text.format(model=model, version=version),
        "status": kind,
    }
    if status == 401:
        status = error["code"] = 400
        error["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
            }
        ]
    return status, {"error": error}, headers


def stream_failure() -> tuple[str | None, Any]:
    """``(SSE event name, data)`` when a stream fails midway: an error object as a chunk."""
    return None, error_response(503, "")[1]
