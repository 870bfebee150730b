"""The emulator's failure modes and each vendor's real error body shapes.

A fault is chosen per request by the ``x-flowdebug-fault`` header, by a model named after it
(``error-429``, ``slow-0.5``), or for the whole server. Error bodies follow what each vendor
really returns, so the live players' error handling is exercised on the genuine shapes:

- Anthropic: ``{"type": "error", "error": {"type": "rate_limit_error", "message": ...},
  "request_id": ...}``; 529 ``overloaded_error``; mid-stream ``event: error``.
- OpenAI: ``{"error": {"message", "type", "param", "code"}}``; mid-stream a chunk with
  ``error``.
- Gemini: ``{"error": {"code", "message", "status", "details"?}}``. A bad key is a 400
  ``INVALID_ARGUMENT`` with reason ``API_KEY_INVALID``, as the real API answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

FAULTS = {
    "error-400": "400 invalid request",
    "error-401": "a bad API key (Gemini answers 400 API_KEY_INVALID, like the real API)",
    "error-403": "403 permission denied",
    "error-404": "404 unknown model",
    "error-429": "429 rate limited (with retry-after: 1)",
    "error-500": "500 internal error",
    "error-503": "503 unavailable / overloaded",
    "error-529": "529 overloaded (Anthropic's own status)",
    "malformed": "200 with a body that is not JSON (a stream: a data line that is not JSON)",
    "wrong-shape": "200 with JSON that is not the protocol's response",
    "slow": "answer after 5 s (slow-N: after N seconds), to exercise client timeouts",
    "drop": "close the connection without answering",
    "stream-error": "a stream that fails after its first event (not streaming: a 500)",
}


@dataclass(frozen=True)
class Fault:
    name: str
    seconds: float = 0.0

    @property
    def status(self) -> int | None:
        m = re.fullmatch(r"error-(\d{3})", self.name)
        return int(m.group(1)) if m else None


def parse_fault(text: str | None) -> Fault | None:
    """The fault ``text`` names (``error-429``, ``slow-0.5``, ...), or None."""
    if not text:
        return None
    text = text.strip().lower()
    m = re.fullmatch(r"slow(?:-(\d+(?:\.\d+)?))?", text)
    if m:
        return Fault("slow", float(m.group(1) or 5.0))
    if text in FAULTS or re.fullmatch(r"error-\d{3}", text):
        return Fault(text)
    return None


_ANTHROPIC = {
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
_OPENAI = {
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
_GEMINI = {
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


def error_response(
    protocol: str, status: int, model: str, version: str = "v1"
) -> tuple[int, dict[str, Any], dict[str, str]]:
    """``(status, body, headers)`` of the vendor's answer for an HTTP error ``status``."""
    headers = {"retry-after": "1"} if status == 429 else {}
    fill = {"model": model, "version": version}
    if protocol == "anthropic":
        kind, text = _ANTHROPIC.get(status, ("api_error", f"HTTP {status}"))
        body = {
            "type": "error",
            "error": {"type": kind, "message": text.format(**fill)},
            "request_id": "req_emulated",
        }
        return status, body, {**headers, "request-id": "req_emulated"}
    if protocol == "gemini":
        kind, text = _GEMINI.get(status, ("UNKNOWN", f"HTTP {status}"))
        error: dict[str, Any] = {"code": status, "message": text.format(**fill), "status": kind}
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
    kind, code, text = _OPENAI.get(status, ("server_error", None, f"HTTP {status}"))
    body = {"error": {"message": text.format(**fill), "type": kind, "param": None, "code": code}}
    return status, body, headers


def stream_failure(protocol: str) -> tuple[str | None, dict[str, Any]]:
    """``(SSE event name, data)`` a vendor sends when a stream fails midway."""
    if protocol == "anthropic":
        return "error", {
            "type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"},
        }
    if protocol == "openai-responses":
        return "error", {
            "type": "error",
            "code": "server_error",
            "message": "The server had an error while processing your request.",
            "param": None,
            "sequence_number": 1,
        }
    if protocol == "gemini":
        return None, error_response("gemini", 503, "")[1]
    return None, error_response("openai-chat", 500, "")[1]
