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
from flowdebug.protocols.base import Converted, Kind, Warnings, expect, require
from flowdebug.protocols.bedrock import detect, stream
from flowdebug.protocols.bedrock.decode import (
    decode_choice,
    decode_messages,
    decode_system,
    decode_tool,
)
from flowdebug.protocols.bedrock.encode import encode_request, encode_response
from flowdebug.protocols.bedrock.facts import FACTS, PROTOCOL, TITLE
from flowdebug.protocols.bedrock.response import decode_response_body
from flowdebug.protocols.bedrock.wire import optional

REQUEST_FIELDS = ("modelId", "system", "messages", "toolConfig", "inferenceConfig")


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
        body = expect(PROTOCOL, payload, "$", dict)
        messages = require(PROTOCOL, body, "messages", "$", list)
        extra = {k: v for k, v in body.items() if k not in REQUEST_FIELDS}
        if "modelId" in body:
            extra["modelId"] = True  # boto3 parameters rather than an HTTP body
        system = decode_system(body.get("system"), extra)
        config = optional(body, "toolConfig", "$", dict) or {}
        raw_tools = (
            require(PROTOCOL, config, "tools", "$.toolConfig", list) if "toolConfig" in body else []
        )
        tools = [decode_tool(t, f"$.toolConfig.tools[{i}]") for i, t in enumerate(raw_tools)]
        rest = {k: v for k, v in config.items() if k not in ("tools", "toolChoice")}
        if any(t is None for t in tools):
            rest["tools"] = raw_tools  # cachePoint / systemTool entries keep their places
        if rest:
            extra["toolConfig"] = rest
        choice = config.get("toolChoice")
        inference = optional(body, "inferenceConfig", "$", dict)
        settings = {}
        if inference is not None:
            settings = {
                "max_tokens": optional(inference, "maxTokens", "$.inferenceConfig", int),
                "temperature": optional(
                    inference, "temperature", "$.inferenceConfig", (int, float)
                ),
            }
            # The rest (topP, stopSequences) rides along, and so does an empty {}.
            kept = {k: v for k, v in inference.items() if k not in ("maxTokens", "temperature")}
            if kept or not inference:
                extra["inferenceConfig"] = kept
        return w.wrap(
            Conversation(
                system=system,
                tools=[t for t in tools if t is not None],
                tool_choice=None
                if choice is None
                else decode_choice(choice, "$.toolConfig.toolChoice"),
                messages=decode_messages(messages, w),
                model=optional(body, "modelId", "$", str),
                provider_details={PROTOCOL: extra} if extra else None,
                **settings,
            )
        )

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
        if detect.is_response(payload):
            return "response"
        return "request" if detect.is_request(payload) else None

    def fragment(self, payload: Any) -> tuple[Any, str] | None:
        if self.detect(payload) is not None:
            return None  # a whole payload, not a fragment
        return detect.fragment(payload)


CODEC = BedrockCodec()
