"""Google Gemini ``generateContent`` (REST JSON, camelCase).

Requests: ``systemInstruction``, ``contents`` (roles ``user`` / ``model``), ``tools``
(``functionDeclarations``), ``toolConfig.functionCallingConfig``, ``generationConfig``. The
model is named in the URL (``models/{model}:generateContent``), never in the body.

Pairing: a canonical ``tool`` message becomes ONE ``user`` Content with one
``functionResponse`` per result in call order (Gemini rejects a turn whose number of
function responses differs from the calls'). ``functionCall.id`` is optional (Gemini <= 2.5
often omits it): a call without one gets the canonical id ``gemini_call_<content>_<part>``
(its indexes in ``contents`` and ``parts``), marked ``syntheticId`` so it is not sent back, and
results pair by ``id`` when present, else by name and order within the preceding model turn.

``provider_details["gemini"]`` keeps what has no canonical home, so a Gemini payload survives
decode + encode unchanged: on a conversation the unknown top-level fields (``safetySettings``,
``cachedContent``...), ``tools`` (built-in tool entries such as ``googleSearch``),
``toolConfig`` and ``generationConfig`` (their extra fields; ``functionCallingConfig`` holds
what the canonical tool choice cannot say, e.g. mode ``VALIDATED``); on a tool the extra
declaration fields (``behavior``). Parts: see :mod:`flowdebug.protocols.gemini.parts`.
"""

from __future__ import annotations

from typing import Any

from flowdebug.model import Conversation, ModelResponse
from flowdebug.protocols.base import Converted, Kind
from flowdebug.protocols.gemini import fragment as gemini_fragment
from flowdebug.protocols.gemini import response as gemini_response
from flowdebug.protocols.gemini import stream as gemini_stream
from flowdebug.protocols.gemini.facts import FACTS
from flowdebug.protocols.gemini.parts import PROTOCOL
from flowdebug.protocols.gemini.request import decode_request, encode_request


class GeminiCodec:
    """The Gemini ``generateContent`` codec (CLI name ``gemini``)."""

    name = PROTOCOL
    title = FACTS.title
    facts = FACTS

    def encode_request(self, conv: Conversation) -> Converted[Any]:
        return encode_request(conv)

    def decode_request(self, payload: Any) -> Converted[Conversation]:
        return decode_request(payload)

    def encode_response(self, resp: ModelResponse) -> Converted[Any]:
        return gemini_response.encode_response(resp)

    def decode_response(self, payload: Any) -> Converted[ModelResponse]:
        return gemini_response.decode_response(payload)

    def encode_stream(self, resp: ModelResponse) -> Converted[list[Any]]:
        return gemini_stream.encode_stream(resp)

    def decode_stream(self, events: list[Any]) -> Converted[ModelResponse]:
        return gemini_stream.decode_stream(events)

    def detect(self, payload: Any) -> Kind | None:
        """``contents`` makes a request, ``candidates`` a response, a list of those a stream.

        ``contents`` may be one Content object (whose ``parts`` may be one Part) and keys may
        be snake_case (proto JSON): a request whose only tool-related field is ``toolConfig``
        is still a request.
        """
        if isinstance(payload, dict):
            contents = payload.get("contents")
            if isinstance(contents, list) or (
                isinstance(contents, dict) and isinstance(contents.get("parts"), list | dict)
            ):
                return "request"
            if isinstance(payload.get("candidates"), list):
                return "response"
            return None
        if (
            isinstance(payload, list)
            and payload
            and all(
                isinstance(c, dict)
                and (
                    isinstance(c.get("candidates"), list)
                    or "usageMetadata" in c
                    or "usage_metadata" in c
                )
                for c in payload
            )
            and any("candidates" in c for c in payload)
        ):
            return "stream"
        return None

    def fragment(self, payload: Any) -> tuple[Any, str] | None:
        return gemini_fragment.fragment(payload)


CODEC = GeminiCodec()
