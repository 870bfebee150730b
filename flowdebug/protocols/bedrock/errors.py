"""Bedrock runtime errors: a JSON body ``{"message": ...}`` with the exception's name in the
``x-amzn-ErrorType`` header (botocore reads the code from there); a ConverseStream that fails
midway sends an exception event (``internalServerException``, ``throttlingException``...)."""

from __future__ import annotations

from typing import Any

# HTTP status -> (botocore exception name, message). Names are the bedrock-runtime service
# model's error shapes.
TEXTS = {
    400: ("ValidationException", "The provided request is not valid"),
    403: (
        "AccessDeniedException",
        "You don't have access to the model with the specified model ID.",
    ),
    404: ("ResourceNotFoundException", "The specified model {model} was not found."),
    408: ("ModelTimeoutException", "The request took too long to process."),
    429: ("ThrottlingException", "Too many requests, please wait before trying again."),
    500: ("InternalServerException", "The server encountered an internal error."),
    503: ("ServiceUnavailableException", "The service is unavailable. Please try again later."),
}


def error_response(status: int, model: str, version: str = "v1") -> tuple[int, Any, dict[str, str]]:
    """``(status, body, headers)`` of Bedrock's answer for an HTTP error ``status``."""
    kind, text = TEXTS.get(status, ("InternalServerException", f"HTTP {status}"))
    return status, {"message": text.format(model=model)}, {"x-amzn-ErrorType": f"{kind}:"}


def stream_failure() -> tuple[str | None, Any]:
    """``(event name, data)`` when a stream fails midway."""
    return None, {"internalServerException": {"message": "The server encountered an error."}}
