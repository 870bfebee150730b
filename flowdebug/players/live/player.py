"""Live players: a real model through its vendor's official SDK.

The request body is the codec's ``encode_request`` output, handed to the SDK unchanged, so
every live call tests the codec against the wire: the SDK's HTTP traffic is captured
(:mod:`flowdebug.players.live.wire`), compared with the codec's body
(:mod:`flowdebug.players.live.differences`), and the captured response (or stream) is decoded by
the codec, never taken from the SDK's own objects. Failures become
:class:`~flowdebug.errors.ProviderError`; the conversation passed in is never modified, so
the step can simply be retried.

An API key given explicitly (typed in the sidebar) is held as a :class:`Secret`: it never
appears in a repr, a log, a trace, an export or the captured exchange.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from flowdebug import hosting, protocols
from flowdebug.errors import CodecError, ProviderError
from flowdebug.model import Conversation
from flowdebug.players.assembly import ArgumentAssembler, ArgumentSnapshot, assemble
from flowdebug.players.base import PlayerTurn, WireExchange
from flowdebug.players.live import senders
from flowdebug.players.live.differences import wire_differences
from flowdebug.players.live.errors import classify
from flowdebug.players.live.settings import NO_KEY, LiveSettings
from flowdebug.players.live.wire import Capture, Recording
from flowdebug.protocols import facts
from flowdebug.protocols.base import ConversionWarning
from flowdebug.redact import scrub, url_secrets

log = logging.getLogger(__name__)
E = TypeVar("E", bound=BaseException)


def _send(
    settings: LiveSettings, body: Any, key: str, recording: Recording, model: str
) -> list[str]:
    """Make the SDK call through the sender of the vendor's SDK (its facts name it); returns
    the body keys the SDK had no parameter for."""
    return senders.sender_for(settings.protocol)(body, settings, key, recording, model)


def _untyped(protocol: str, keys: list[str]) -> list[ConversionWarning]:
    return [
        ConversionWarning(
            protocol,
            "sdk_parameter_missing",
            f"$.{k}",
            f"this SDK version has no {k!r} parameter; it was sent through extra_body "
            "(the vendor may reject it)",
        )
        for k in keys
    ]


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _exchange(
    settings: LiveSettings, body: Any, warnings: list[Any], capture: Capture | None
) -> WireExchange:
    ex = WireExchange(settings.protocol, codec_request=body, codec_warnings=list(warnings))
    if capture is None:
        return ex
    ex.url = capture.url
    ex.request_headers = capture.request_headers
    ex.raw_request = capture.request_text
    request = _parse(capture.request_text)
    ex.request = request if isinstance(request, dict) else None
    ex.differences = wire_differences(body, request, settings.protocol)
    ex.status = capture.status
    ex.response_headers = capture.response_headers
    if capture.status is not None:
        ex.raw_response = capture.response_text
        ex.stream_events = capture.events
        ex.response = capture.events if capture.events is not None else _parse(ex.raw_response)
        if capture.events is not None:
            ex.argument_snapshots = [*assemble(settings.protocol, capture.events)]
    return ex


# The exchange's fields that hold what came back, or the URL: a server may echo the request's
# query there. The rest (what was sent, the person's own data) only loses the secrets' values.
_ANSWER_FIELDS = ("url", "raw_response", "response", "stream_events", "response_headers")


def _scrubbed(exchange: WireExchange, secrets: list[str]) -> WireExchange:
    """``exchange`` with the call's secrets (its key, the base URL's credentials) and every
    credential query parameter of what came back removed, before anything keeps it."""
    for name, value in vars(exchange).items():
        if isinstance(value, str | dict | list):
            setattr(exchange, name, scrub(value, secrets, queries=name in _ANSWER_FIELDS))
    return exchange


def _cause(exc: BaseException | None, kind: type[E]) -> E | None:
    """The first exception of type ``kind`` in ``exc``'s chain (SDKs wrap what the transport
    raised in their own connection errors)."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, kind):
            return exc
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def _refused(protocol: str, refused: hosting.Refused, exchange: WireExchange) -> ProviderError:
    return ProviderError(
        protocol,
        None,
        str(refused),
        "ask the host to add the URL to its allowlist, or use the vendor's own endpoint",
        exchange,
    )


def _redirected(protocol: str, status: int, exchange: WireExchange) -> ProviderError:
    """A redirect is not followed: the SDK's credential headers would go along to wherever it
    points (httpx drops only ``Authorization`` when the host changes)."""
    where = (exchange.response_headers or {}).get("location") or "another address"
    return ProviderError(
        protocol,
        status,
        f"the server redirects to {where}; a live call follows no redirect, so its key goes "
        "nowhere else",
        "set the base URL to the address the redirect names (on a shared server, one the "
        "host allows)",
        exchange,
    )


def secrets(s: LiveSettings, key: str) -> list[str]:
    """What a live call must not show anywhere: its key and the base URL's credentials."""
    return [v for v in [key, *url_secrets(s.base_url or "")] if len(v) >= 4 and v != NO_KEY]


def failed(
    s: LiveSettings,
    capture: Capture | None,
    failure: BaseException | None,
    model: str,
    key: str,
    decode_error: str | None,
    exchange: WireExchange,
) -> ProviderError | None:
    """The ProviderError of a live call that failed (None when it succeeded), without the
    call's secrets (``key``, the base URL's credentials): what a server says may repeat the
    request's URL and credentials."""
    refused = _cause(failure, hosting.Refused)
    if refused is not None:  # a connection the shared server's host did not allow
        return _refused(s.protocol, refused, exchange)
    if capture is not None and capture.status is not None and 300 <= capture.status < 400:
        return _redirected(s.protocol, capture.status, exchange)
    error = classify(
        s.protocol,
        capture,
        failure,
        model=model,
        base_url=s.shown_url,
        timeout=s.timeout,
        secret=key if key != NO_KEY else None,
        decode_error=decode_error,
        exchange=exchange,
    )
    if error is None:
        return None
    body, hint = scrub([error.body, error.hint], secrets(s, key))
    return ProviderError(error.provider, error.status, body, hint, exchange)


class LivePlayer:
    """Plays the model with a real vendor API (or any server speaking it).

    ``on_event`` is called with each raw stream event as it arrives and ``on_arguments``
    with each :class:`ArgumentSnapshot`, so a page can show a call's arguments assembling
    while the model is still talking.
    """

    def __init__(
        self,
        settings: LiveSettings,
        on_event: Callable[[Any], None] | None = None,
        on_arguments: Callable[[ArgumentSnapshot], None] | None = None,
    ):
        self.settings = settings
        self.on_event = on_event
        self.on_arguments = on_arguments

    @property
    def name(self) -> str:
        return f"{self.settings.protocol}:{self.settings.model_name}"

    def __repr__(self) -> str:
        return f"LivePlayer({self.settings!r})"

    def _listener(self) -> Callable[[Any], None] | None:
        if self.on_event is None and self.on_arguments is None:
            return None
        assembler = ArgumentAssembler(self.settings.protocol)

        def listen(event: Any) -> None:
            if self.on_event is not None:
                self.on_event(event)
            for snap in assembler.feed(event):
                if self.on_arguments is not None:
                    self.on_arguments(snap)

        return listen

    def respond(self, conv: Conversation) -> PlayerTurn:
        """Send ``conv`` and decode the model's turn; raises ProviderError on any failure."""
        s = self.settings
        codec = protocols.get(s.protocol)
        applied = s.apply(conv)
        encoded = codec.encode_request(applied)
        model = s.model or applied.model or s.model_name
        key = s.resolve_key()
        hidden = secrets(s, key)
        refused = hosting.base_url_refusal(s.base_url, facts(s.protocol).base_url, s.shown_url)
        if refused is not None:
            exchange = _exchange(s, encoded.value, list(encoded.warnings), None)
            raise _refused(s.protocol, refused, _scrubbed(exchange, hidden))
        recording = Recording(on_event=self._listener())
        started = time.perf_counter()
        failure: Exception | None = None
        untyped: list[str] = []
        try:
            untyped = _send(s, encoded.value, key, recording, model)
        except Exception as e:  # every SDK failure is classified from the wire below
            failure = e
        elapsed = (time.perf_counter() - started) * 1000
        capture = recording.last
        warnings = [*encoded.warnings, *_untyped(s.protocol, untyped)]
        exchange = _scrubbed(_exchange(s, encoded.value, warnings, capture), hidden)
        log.info("live %s %s -> %s in %.0f ms", s.protocol, model, exchange.status, elapsed)
        decoded, decode_error = None, None
        if capture is not None and capture.status is not None and capture.status < 400:
            try:
                if exchange.stream_events is not None:
                    decoded = codec.decode_stream(exchange.stream_events)
                else:
                    decoded = codec.decode_response(exchange.response)
            except CodecError as e:
                decode_error = f"{e.path}: {e.reason}"
        error = failed(s, capture, failure, model, key, decode_error, exchange)
        if error is not None:
            raise error
        assert decoded is not None  # classify returns an error for every other case
        exchange.codec_warnings += decoded.warnings
        return PlayerTurn(decoded.value, exchange, elapsed)


def live_player(protocol: str, **settings: Any) -> LivePlayer:
    """Shorthand: ``live_player("anthropic", model=..., api_key=..., stream=True)``."""
    return LivePlayer(LiveSettings(protocol, **settings))
