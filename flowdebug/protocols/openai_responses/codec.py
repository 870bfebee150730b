"""OpenAI Responses API (``POST /v1/responses``): ``function_call`` / ``function_call_output``
items paired by ``call_id``.

The request carries the system prompt as ``instructions`` and the history as ``input`` items
(see :mod:`.parts.encode`); the response is a ``Response`` object whose ``output``
holds reasoning, message and function_call items. There is no finish reason: a turn wants
tools when its output holds function calls. There is no error flag on results either: error
results travel as ``{"error": "<text>"}``.

Request and response fields the canonical model has no place for (``previous_response_id``,
``store``, ``reasoning``, a response's echoed ``tools``, ``created_at`` ...) are kept in
``provider_details["openai-responses"]`` so a decoded payload re-encodes to itself.
"""

from __future__ import annotations

from typing import Any

from flowdebug.model import Conversation, ModelResponse
from flowdebug.protocols.base import Converted, Kind, Warnings
from flowdebug.protocols.openai_responses import stream
from flowdebug.protocols.openai_responses.facts import FACTS
from flowdebug.protocols.openai_responses.fragment import fragment
from flowdebug.protocols.openai_responses.parts import PROTOCOL
from flowdebug.protocols.openai_responses.request import decode_request, encode_request
from flowdebug.protocols.openai_responses.response import decode_response_object, encode_response


class OpenAIResponsesCodec:
    """The Responses API: requests, Response objects and their event streams."""

    name = PROTOCOL
    title = FACTS.title
    facts = FACTS

    def encode_request(self, conv: Conversation) -> Converted[dict[str, Any]]:
        return encode_request(conv)

    def decode_request(self, payload: Any) -> Converted[Conversation]:
        return decode_request(payload)

    def encode_response(self, resp: ModelResponse) -> Converted[dict[str, Any]]:
        return encode_response(resp)

    def decode_response(self, payload: Any) -> Converted[ModelResponse]:
        w = Warnings(PROTOCOL)
        return w.wrap(decode_response_object(payload, w))

    def encode_stream(self, resp: ModelResponse) -> Converted[list[Any]]:
        encoded = encode_response(resp)
        return Converted(stream.response_to_events(encoded.value), encoded.warnings)

    def decode_stream(self, events: list[Any]) -> Converted[ModelResponse]:
        w = Warnings(PROTOCOL)
        response, item_paths = stream.events_to_response(events, w)
        return w.wrap(decode_response_object(response, w, "$", item_paths))

    def detect(self, payload: Any) -> Kind | None:
        return detect(payload)

    def fragment(self, payload: Any) -> tuple[Any, str] | None:
        return fragment(payload) if detect(payload) is None else None


CODEC = OpenAIResponsesCodec()


def detect(payload: Any) -> Kind | None:
    """request: ``input`` (string or item list) or ``instructions`` with a model, and none of
    the keys other protocols use; response: ``object == "response"``; stream: events whose
    ``type`` is ``response.*`` (plus ``error``)."""
    if isinstance(payload, list):
        types = [e.get("type") if isinstance(e, dict) else None for e in payload]
        if (
            payload
            and all(
                isinstance(t, str) and (t.startswith("response.") or t == "error") for t in types
            )
            and any(t != "error" for t in types)
        ):
            return "stream"
        return None
    if not isinstance(payload, dict):
        return None
    if payload.get("object") == "response":
        return "response"
    if any(k in payload for k in ("object", "messages", "contents", "jsonrpc")):
        return None
    if isinstance(payload.get("input"), str | list):
        return "request"
    if isinstance(payload.get("instructions"), str) and (
        "model" in payload or "previous_response_id" in payload
    ):
        return "request"
    return None


# -- requests -------------------------------------------------------------------------------


# -- responses ------------------------------------------------------------------------------
