"""The emulator's ASGI app (Starlette): routes, answers, stream framing and faults.

Each request is matched against the routes the vendors declare (their facts), decoded with the
protocol's codec, answered by the emulator's player and encoded back; ``"stream": true`` (and
Gemini's and Bedrock's stream routes) answers with server-sent events, or with the frames
a vendor's facts declare (``Facts.stream_frames``: Bedrock's AWS event-stream). A body beyond
the emulator's cap gets the vendor's 413 without being read further.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any, Protocol

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from flowdebug import protocols
from flowdebug.emulator.faults import Fault, error_response, parse_fault, stream_failure
from flowdebug.emulator.guard import drop_connection
from flowdebug.errors import CodecError, FlowdebugError
from flowdebug.model import dump
from flowdebug.players.base import Player
from flowdebug.protocols.facts import StreamFramer
from flowdebug.protocols.token_estimate import estimate_tokens

log = logging.getLogger("flowdebug.emulator.server")
FAULT_HEADER = "x-flowdebug-fault"
# Every route a vendor declares (its facts), and what the readiness probe lists.
ROUTE_HELP = [h for c in protocols.PROTOCOLS.values() for h in c.facts.route_help] + [
    c.facts.token_count.endpoint for c in protocols.PROTOCOLS.values() if c.facts.token_count
]


class Host(Protocol):
    """What the app serves (an :class:`~flowdebug.emulator.server.Emulator`), read afresh
    on every request so its player and fault can change while it runs."""

    player: Player
    fault: Fault | None
    delay: float
    max_body: int
    lock: threading.Lock

    def mounted(self, token: str) -> Player | None: ...
    def record(self, entry: dict[str, Any], size: int) -> None: ...
    def serving(self, loop: asyncio.AbstractEventLoop, stopping: asyncio.Event) -> None: ...


class TooLarge(Exception):
    """A request body over the server's limit (:func:`read_body`)."""


def _json(status: int, body: Any, headers: dict[str, str] | None = None) -> Response:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return Response(data, status, headers, media_type="application/json")


def vendor_error(
    protocol: str, status: int, model: str, message: str | None = None, version: str = "v1"
) -> Response:
    """The vendor's own error answer for ``status`` (its facts' error shapes), saying
    ``message`` when given."""
    status, body, headers = error_response(protocol, status, model, version)
    if message is not None:
        # Most vendors nest the message in an "error" object; Bedrock keeps it at the top.
        body.get("error", body)["message"] = message
    return _json(status, body, headers)


def _sse(event: tuple[str | None, Any]) -> bytes:
    """One server-sent event: an ``event:`` line when the vendor names its events."""
    name, data = event
    text = data if isinstance(data, str) else json.dumps(data)
    return ((f"event: {name}\n" if name else "") + f"data: {text}\n\n").encode()


def _wrong_shape(protocol: str) -> dict[str, Any]:
    # JSON, but not the protocol's response: its main field has the wrong type.
    return {protocols.facts(protocol).main_field: 7}


def request_target(request: Request) -> str:
    """The request's path and query as sent (Gemini's ``:`` in a model path stays as is)."""
    raw = request.scope.get("raw_path") or request.url.path.encode()
    query = request.scope.get("query_string") or b""
    return raw.decode("latin-1") + ("?" + query.decode("latin-1") if query else "")


# A player mounted on the emulator answers under its token (Emulator.mount).
_MOUNT = re.compile(r"^/play/(?P<token>[0-9a-f]{16})(?P<rest>/.*)$")


def vendor_route(path: str) -> tuple[str, str | None, bool, str] | None:
    """The vendor route ``path`` is (its facts' ``route``): the protocol, the model and the
    stream flag when the path names them, and the API version; None for no vendor's."""
    for codec in protocols.PROTOCOLS.values():
        route = codec.facts.route
        if route is not None and (m := route.match(path)):
            # A vendor that names the model or streaming in the path says so by group.
            found = m.groupdict()
            version = found.get("version") or "v1"
            return codec.name, found.get("model"), bool(found.get("stream")), version
    return None


def count_route(path: str) -> tuple[str, str | None] | None:
    """The count-tokens route ``path`` is (its vendor's ``Facts.token_count``): the protocol
    and the model when the path names it; None for none."""
    for codec in protocols.PROTOCOLS.values():
        counting = codec.facts.token_count
        if counting is not None and (m := counting.route.match(path)):
            return codec.name, m.groupdict().get("model")
    return None


def count_answer(protocol: str, body: Any) -> dict[str, Any]:
    """The emulator's answer to a count-tokens request: the vendor's shape, holding the
    documented offline estimate of the body it was sent (deterministic: chars / 4 of the
    compact JSON, :mod:`flowdebug.protocols.token_estimate`)."""
    counting = protocols.facts(protocol).token_count
    assert counting is not None
    return counting.answer(estimate_tokens(body))


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused beyond ``limit`` bytes before more of it is read."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise TooLarge
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > limit:
            raise TooLarge
    return bytes(data)


def create_app(emulator: Host) -> Starlette:
    """The ASGI app serving ``emulator``'s player, faults, limits and request log."""
    stopping: asyncio.Event | None = None

    async def pause(seconds: float) -> None:
        # Waits end early when the emulator stops, so shutdown never waits for a slow fault.
        if stopping is None or seconds <= 0:
            return
        with suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), seconds)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        nonlocal stopping
        stopping = asyncio.Event()
        emulator.serving(asyncio.get_running_loop(), stopping)
        yield

    async def health(request: Request) -> Response:
        # A readiness probe for whoever started the emulator (the app, browser tests).
        return _json(200, {"emulator": "flowdebug", "routes": ROUTE_HELP})

    async def not_found(request: Request) -> Response:
        return _json(404, {"error": {"message": f"no such route: {request_target(request)}"}})

    async def post(request: Request) -> Response:
        target = request_target(request)
        path = target.split("?", 1)[0]
        player: Player | None = emulator.player
        if mount := _MOUNT.match(path):
            path = mount.group("rest")
            player = emulator.mounted(mount.group("token"))
        if (counting := count_route(path)) is not None:
            return await count(request, target, *counting)
        route = vendor_route(path)
        if route is None:
            return _json(404, {"error": {"message": f"no such route: {target}"}})
        protocol, model, stream, version = route
        if player is None:
            message = "no player is mounted there any more: ask the app again"
            return vendor_error(protocol, 404, model or "", message, version)
        try:
            raw = await read_body(request, emulator.max_body)
        except TooLarge:
            log.info("emulator: %s refused, body over %d bytes", target, emulator.max_body)
            return vendor_error(
                protocol,
                413,
                model or "",
                f"the request body exceeds the emulator's limit of {emulator.max_body} bytes",
                version,
            )
        except ClientDisconnect:
            return Response(status_code=499)  # nobody is left to read it
        try:
            body = json.loads(raw or b"null")
        except (ValueError, RecursionError):
            return vendor_error(protocol, 400, model or "", "the request body is not valid JSON")
        if isinstance(body, dict):
            model = model or str(body.get("model") or "")
            stream = stream or body.get("stream") is True
        model = model or ""
        fault = (
            parse_fault(request.headers.get(FAULT_HEADER)) or parse_fault(model) or emulator.fault
        )
        emulator.record(
            {
                "protocol": protocol,
                "path": target,
                "model": model,
                "stream": stream,
                "fault": fault.name if fault else None,
                "body": body,
            },
            len(raw),
        )
        log.info("emulator: POST %s (%s, model %r, fault %s)", target, protocol, model, fault)
        if fault is not None:
            answer = await apply_fault(request, fault, protocol, model, stream, version)
            if answer is not None:
                return answer
        return answer_turn(player, protocol, body, model, stream, version, fault)

    async def count(request: Request, target: str, protocol: str, model: str | None) -> Response:
        """A count-tokens request: the vendor's answer shape with the offline estimate of the
        body; a fault with a status answers that status."""
        try:
            raw = await read_body(request, emulator.max_body)
            body = json.loads(raw or b"null")
        except TooLarge:
            return vendor_error(protocol, 413, model or "", "the request body is too large")
        except ClientDisconnect:
            return Response(status_code=499)
        except (ValueError, RecursionError):
            return vendor_error(protocol, 400, model or "", "the request body is not valid JSON")
        if isinstance(body, dict):
            model = model or str(body.get("model") or "")
        model = model or ""
        fault = parse_fault(request.headers.get(FAULT_HEADER)) or parse_fault(model)
        entry = {"protocol": protocol, "path": target, "model": model, "stream": False}
        emulator.record({**entry, "fault": fault.name if fault else None, "body": body}, len(raw))
        if fault is not None and fault.status is not None:
            return vendor_error(protocol, fault.status, model)
        return _json(200, count_answer(protocol, body))

    async def apply_fault(
        request: Request, fault: Fault, protocol: str, model: str, stream: bool, version: str
    ) -> Response | None:
        """The whole answer ``fault`` makes, or None when the turn is still answered."""
        if fault.status is not None:
            return vendor_error(protocol, fault.status, model, version=version)
        if fault.name == "slow":
            await pause(fault.seconds)
            return None
        if fault.name == "drop":
            if drop_connection(request.scope):
                await request.receive()  # the disconnect: nothing is sent after it
                return Response(status_code=499)
            return vendor_error(protocol, 500, model, "drop: the server cannot close", version)
        if fault.name == "stream-error" and not stream:
            return vendor_error(protocol, 500, model, version=version)
        if fault.name == "malformed" and not stream:
            return _json(200, b'{"id": "msg_1", "content": [')
        if fault.name == "wrong-shape" and not stream:
            return _json(200, _wrong_shape(protocol))
        return None

    def answer_turn(
        player: Player,
        protocol: str,
        body: Any,
        model: str,
        stream: bool,
        version: str,
        fault: Fault | None,
    ) -> Response:
        codec = protocols.get(protocol)
        try:
            conv = codec.decode_request(body).value
            # Players are offline and quick; the lock keeps one conversation turn at a time.
            with emulator.lock:
                turn = player.respond(conv)
        except CodecError as e:
            return vendor_error(protocol, 400, model, f"{e.path}: {e.reason}", version)
        except FlowdebugError as e:
            return vendor_error(protocol, 400, model, str(e), version)
        except RecursionError:
            return vendor_error(protocol, 400, model, "the request is nested too deeply", version)
        response = turn.response.model_copy(update={"model": model or turn.response.model})
        if response.usage is None:
            # A player that counts nothing (the scripted and offline models) reports the
            # offline estimate of the conversation and of its turn (the same whether the
            # request streams or not), so a client sees a usage to read.
            usage = {
                "input_tokens": estimate_tokens(
                    {k: v for k, v in dump(conv).items() if k in ("system", "tools", "messages")}
                ),
                "output_tokens": estimate_tokens(dump(response.message)),
            }
            response = response.model_copy(update={"usage": usage})
        if not stream:
            return _json(200, codec.encode_response(response).value)
        events: list[tuple[str | None, Any]] = [
            # Clients that dispatch on the SSE event name get it (it repeats the data's type).
            (e.get("type") if protocols.facts(protocol).named_events else None, e)
            for e in codec.encode_stream(response).value
        ]
        if fault is not None and fault.name == "malformed":
            events.insert(1, (None, "{not json"))
        if fault is not None and fault.name == "wrong-shape":
            name, first = events[0]
            events = [(name, {"type": first["type"]} if name else _wrong_shape(protocol))]
        if fault is not None and fault.name == "stream-error":
            events = [*events[:1], stream_failure(protocol)]
        elif (end := protocols.facts(protocol).stream_end) is not None:
            events.append((None, end))
        facts = protocols.facts(protocol)
        return StreamingResponse(
            frames(events, facts.stream_frames),
            headers={
                "content-type": facts.stream_content_type,
                "cache-control": "no-cache",
                "connection": "close",
            },
        )

    async def frames(
        events: list[tuple[str | None, Any]], framer: StreamFramer | None
    ) -> AsyncIterator[bytes]:
        # A vendor whose stream is not SSE (Bedrock's AWS event-stream) frames it itself.
        chunks = framer(events) if framer is not None else map(_sse, events)
        for chunk in chunks:
            yield chunk
            await pause(emulator.delay)

    return Starlette(
        routes=[
            Route("/", health, methods=["GET"]),
            Route("/health", health, methods=["GET"]),
            Route("/{path:path}", post, methods=["POST"]),
            Route("/{path:path}", not_found, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
