"""An error result where the wire has no error flag (an OpenAI Chat tool message, an OpenAI
Responses ``function_call_output``): it travels as the text ``{"error": "<message>"}``.

One writing and one reading, shared by every codec that guesses an error from a tool's text,
so no two vendors read the same output two ways: a text is an error result exactly when it is
that JSON object (one key, ``error``, whose value is a string), with the whitespace JSON allows
around and inside it (``' {"error": "boom"}'`` is the error ``boom``). A result that is not an
error but whose text reads as one would come back flagged, so the encoders warn about it
(:func:`warn_if_read_as_error`). Vendors with a flag (Anthropic's ``is_error``, Bedrock's
``status``, MCP's ``isError``, Gemini's ``response.error`` key) guess nothing from text.
"""

from __future__ import annotations

import json

from flowdebug import jsontext
from flowdebug.protocols.base import Warnings


def error_output(message: str) -> str:
    """The text an error result travels as: ``{"error": message}``."""
    return json.dumps({"error": message})


def error_message(output: str) -> str | None:
    """The message of an error result written as ``{"error": "<text>"}``, else None."""
    if not output.lstrip(" \t\n\r").startswith("{"):
        return None  # most results: no need to parse them
    try:
        value = jsontext.embedded(output)
    except ValueError:
        return None
    if isinstance(value, dict) and list(value) == ["error"] and isinstance(value["error"], str):
        return value["error"]
    return None


def warn_if_read_as_error(w: Warnings, output: str, path: str, wire: str) -> None:
    """Warn when a result that is not an error has a text that reads back as one."""
    if error_message(output) is not None:
        w.add(
            "error_flag_added",
            path,
            f'the result reads as {{"error": text}}, and {wire} has no flag to say it is not '
            "an error: it reads back as an error result",
        )
