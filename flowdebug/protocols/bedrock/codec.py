"""Amazon Bedrock Converse codec: ``toolUse`` / ``toolResult`` blocks paired by ``toolUseId``.

Requests are the JSON bodies of ``POST /model/{modelId}/converse`` (the model id is in the
URL), responses are ConverseResponse bodies, streams are ConverseStream events as a JSON
array of ``{"<event-type>": {...}}`` objects. Vendor-only fields (``additionalModelRequestFields``,
``guardrailConfig``, ``cachePoint`` blocks, ``metrics`` ...) ride in
``provider_details["bedrock"]`` and come back out on encode.
"""

from __future__ import annotations

from typing import Any

from flowdebug.model import Conversation, ModelResponse
from flowdebug.protocols.base import Converted, Kind, Warnings
from flowdebug.protocols.bedrock import fragment, stream
from flowdebug.protocols.bedrock.facts import FACTS, TITLE
from flowdebug.protocols.bedrock.parts import PROTOCOL
from flowdebug.protocols.bedrock.request import decode_request, encode_request
from flowdebug.protocols.bedrock.response import decode_response_body, encode_response


class BedrockCodec:
    """Bedrock Converse: requests, ConverseResponse bodies and ConverseStream events."""

    name = PROTOCOL
    title = TITLE
    facts = FACTS

    def encode_request(self, conv: Conversation) -> Converted[Any]:
        w = Warnings(PROTOCOL)
        return w.wrap(encode_request(conv, w))

    def decode_request(self, payload: Any) -> Converted[Conversation]:
        w = Warnings(PROTOCOL)
        return w.wrap(decode_request(payload, w))

    def encode_response(self, resp: ModelResponse) -> Converted[Any]:
        w = Warnings(PROTOCOL)
        return w.wrap(encode_response(resp, w))

    def decode_response(self, payload: Any) -> Converted[ModelResponse]:
        w = Warnings(PROTOCOL)
        return w.wrap(decode_response_body(payload, "$", w))

    def encode_stream(self, resp: ModelResponse) -> Converted[list[Any]]:
        w = Warnings(PROTOCOL)
        return w.wrap(stream.events_from_response(encode_response(resp, w), w))

    def decode_stream(self, events: list[Any]) -> Converted[ModelResponse]:
        w = Warnings(PROTOCOL)
        acc = stream.assemble(events, w)
        # Paths in the assembled body name the blocks built from the events.
        return w.wrap(decode_response_body(acc.body, "$(assembled)", w, acc.raw_inputs))

    def detect(self, payload: Any) -> Kind | None:
        if stream.is_stream(payload):
            return "stream"
        if fragment.is_response(payload):
            return "response"
        return "request" if fragment.is_request(payload) else None

    def fragment(self, payload: Any) -> tuple[Any, str] | None:
        if self.detect(payload) is not None:
            return None  # a whole payload, not a fragment
        return fragment.fragment(payload)


CODEC = BedrockCodec()
