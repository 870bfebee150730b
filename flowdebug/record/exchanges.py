"""One recorded exchange as the session keeps it (a dict in ``SessionState.exchanges``).

A model exchange keeps the keys a live player's exchange has (``protocol``, ``request``,
``response``, ``stream_events``, ``status``, ``url``, headers, ``raw_request`` and
``raw_response``: the bodies exactly as they went, so a recording can be checked byte for byte)
plus ``recorded: true``, the path the agent called and the time the upstream took. A body that
is no UTF-8 text (Bedrock's event stream) is kept in base64 under ``raw_response_base64``.
Credential headers and URL credentials are already redacted by the capture; the store redacts
secret values again when it saves.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from pydantic import JsonValue

from flowdebug import protocols
from flowdebug.engine.session.exchange_bodies import raw_text
from flowdebug.players.live.wire import Capture


def _text_or_base64(name: str, data: bytes) -> dict[str, JsonValue]:
    try:
        return {name: data.decode("utf-8")}
    except UnicodeDecodeError:
        return {name + "_base64": base64.b64encode(data).decode("ascii")}


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def raw_body(exchange: dict[str, Any], name: str) -> bytes | None:
    """The exact bytes of an exchange's ``raw_request`` or ``raw_response`` (a session keeps a
    text that is the compact JSON of its parsed body as a reference to it: see
    :mod:`flowdebug.engine.session.exchange_bodies`)."""
    if (text := raw_text(exchange, name)) is not None:
        return text.encode("utf-8")
    if isinstance(coded := exchange.get(name + "_base64"), str):
        return base64.b64decode(coded)
    return None


def stream_events(protocol: str, capture: Capture) -> list[Any] | None:
    """The stream's events: the SSE ``data:`` values the capture read as they came, or the
    frames of a stream the vendor frames otherwise (its facts' ``stream_unframe``)."""
    facts = protocols.facts(protocol)
    content_type = capture.response_headers.get("content-type", "")
    if facts.stream_unframe is not None and facts.stream_content_type in content_type:
        return facts.stream_unframe(bytes(capture.response_body))
    return capture.events


def model_exchange(
    protocol: str, path: str, capture: Capture, elapsed_ms: float
) -> dict[str, JsonValue]:
    """The session's record of one model call through the proxy."""
    events = stream_events(protocol, capture)
    body = bytes(capture.response_body)
    return {
        "protocol": protocol,
        "recorded": True,
        "method": capture.method,
        "path": path,
        "url": capture.url,
        "request": _json(capture.request_body),
        "request_headers": dict(capture.request_headers),
        "status": capture.status,
        "response_headers": dict(capture.response_headers),
        "response": None if events is not None else _json(body),
        "stream_events": events,
        "complete": capture.complete,
        "elapsed_ms": round(elapsed_ms, 2),
        **_text_or_base64("raw_request", capture.request_body),
        **_text_or_base64("raw_response", body),
    }


def mcp_exchange(
    direction: str, transport: str, raw: bytes, messages: list[Any]
) -> dict[str, JsonValue]:
    """The session's record of JSON-RPC messages seen together (a line of stdio, a POST's
    body, an SSE event): ``direction`` is ``client`` (to the server) or ``server``."""
    return {
        "protocol": "mcp",
        "recorded": True,
        "transport": transport,
        "direction": direction,
        "messages": messages,
        **_text_or_base64("raw", raw),
    }
