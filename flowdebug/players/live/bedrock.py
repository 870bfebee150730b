"""Amazon Bedrock Converse through ``botocore``, the engine of boto3's ``bedrock-runtime``.

botocore builds, validates, serialises and signs the request (SigV4, or a Bedrock API key as
a bearer token) and parses the answer; the bytes go over the wire through the recording
httpx2 client every sender uses: a ``before-send`` hook hands botocore's signed request to it
and gives botocore the response back, so the capture holds exactly what was signed and sent.
A ConverseStream's AWS event-stream frames are decoded as they arrive
(:mod:`flowdebug.protocols.bedrock.eventstream`) into the capture's events.

Credentials (:func:`credentials`): a typed key is a Bedrock API key (a bearer token) or
``ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]``; the environment's (``AWS_BEARER_TOKEN_
BEDROCK``, or ``AWS_ACCESS_KEY_ID`` with ``AWS_SECRET_ACCESS_KEY`` and ``AWS_SESSION_TOKEN``)
only where :mod:`flowdebug.players.live.keys` lets the key go; any other base URL gets dummy
SigV4 credentials. botocore never looks for credentials itself (no profile, no instance
metadata): each client is given its own, and its signature version is set in code, so a bearer
token in the environment cannot replace them.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import httpx2

from flowdebug.errors import UsageError
from flowdebug.players.live.wire import REDACTED, Capture, Recording, recording_client
from flowdebug.protocols.bedrock.eventstream import (
    CONTENT_TYPE,
    EventStreamError,
    FrameReader,
    event_object,
)

if TYPE_CHECKING:
    from flowdebug.players.live.settings import LiveSettings

SERVICE = "bedrock-runtime"
BEARER_ENV = "AWS_BEARER_TOKEN_BEDROCK"
KEY_ID_ENV = "AWS_ACCESS_KEY_ID"
SECRET_ENV = "AWS_SECRET_ACCESS_KEY"
TOKEN_ENV = "AWS_SESSION_TOKEN"
REGION_ENV = ("AWS_REGION", "AWS_DEFAULT_REGION")
DEFAULT_REGION = "us-east-1"
# Signed with these where no credential may go: a local server checks no signature.
DUMMY = ("flowdebug-no-key", "flowdebug-no-secret")
# Request headers that carry a credential besides Authorization (the session token).
SECRET_HEADERS = ("x-amz-security-token",)


def load_sdk() -> None:
    """Import the SDK this module sends with (players/live/senders.py calls it, one thread at a
    time, before the first send)."""
    import botocore.loaders
    import botocore.session  # noqa: F401


@dataclass(frozen=True, repr=False)
class Credentials:
    """What botocore signs with: SigV4 keys, or a bearer token (a Bedrock API key)."""

    access_key: str | None = None
    secret_key: str | None = None
    session_token: str | None = None
    bearer: str | None = None

    def __repr__(self) -> str:
        return "Credentials(bearer)" if self.bearer else "Credentials(sigv4)"


def credentials(settings: LiveSettings, key: str) -> Credentials:
    """The credentials for ``settings``: ``key`` is what ``resolve_key`` chose (typed, an
    environment variable's value, or the placeholder)."""
    source = settings.key_source
    if source == KEY_ID_ENV:  # the environment's keys, trusted by resolve_key
        secret = os.environ.get(SECRET_ENV)
        if not secret:
            raise UsageError(f"{KEY_ID_ENV} is set but {SECRET_ENV} is not: set both")
        return Credentials(key, secret, os.environ.get(TOKEN_ENV) or None)
    if source == BEARER_ENV:
        return Credentials(bearer=key)
    if source == "typed":
        parts = key.split(":")
        if len(parts) in (2, 3) and all(parts[:2]):
            return Credentials(*parts)
        return Credentials(bearer=key)
    return Credentials(*DUMMY)


def region() -> str:
    """The AWS region botocore resolves the endpoint in (``AWS_REGION``, else us-east-1)."""
    return next((os.environ[v] for v in REGION_ENV if os.environ.get(v)), DEFAULT_REGION)


class _Tokens:
    """A token provider handing botocore one bearer token, in place of its own chain (which
    reads ``AWS_BEARER_TOKEN_BEDROCK`` from the environment)."""

    def __init__(self, token: str | None):
        self.token = token

    def load_token(self, **kwargs: Any) -> Any:
        from botocore.tokens import FrozenAuthToken

        return None if self.token is None else FrozenAuthToken(self.token)


@cache
def _loader() -> Any:
    """botocore's data loader, shared: it caches the parsed service model, which a fresh
    session would otherwise read and parse again for every call (~20x the client's cost)."""
    import botocore.loaders

    return botocore.loaders.create_loader()


def make_client(settings: LiveSettings, creds: Credentials) -> Any:
    """A botocore ``bedrock-runtime`` client signing with ``creds`` only (a session of its
    own per call, so no credential or token is kept between calls), for the base URL without
    its query (:mod:`flowdebug.players.live.route` adds that to each request)."""
    import botocore.session
    from botocore.config import Config

    session = botocore.session.Session()
    session.register_component("data_loader", _loader())
    session.register_component("token_provider", _Tokens(creds.bearer))
    config = Config(
        signature_version="bearer" if creds.bearer else "v4",
        retries={"total_max_attempts": settings.max_retries + 1, "mode": "standard"},
        connect_timeout=settings.timeout,
        read_timeout=settings.timeout,
    )
    return session.create_client(
        SERVICE,
        region_name=region(),
        endpoint_url=settings.route.base_url,
        aws_access_key_id=creds.access_key or DUMMY[0],
        aws_secret_access_key=creds.secret_key or DUMMY[1],
        aws_session_token=creds.session_token,
        config=config,
    )


def sdk_params(value: Any, shape: Any) -> Any:
    """``value`` (the codec's JSON) as botocore parameters for ``shape``: blob members hold
    bytes (the JSON's base64 decoded, which botocore encodes again), documents stay as
    they are."""
    kind = shape.type_name
    if kind == "blob" and isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except binascii.Error:
            return value  # botocore's validation names it
    if kind == "structure" and isinstance(value, dict) and not shape.is_document_type:
        members = shape.members
        return {k: sdk_params(v, members[k]) if k in members else v for k, v in value.items()}
    if kind == "list" and isinstance(value, list):
        return [sdk_params(v, shape.member) for v in value]
    if kind == "map" and isinstance(value, dict):
        return {k: sdk_params(v, shape.value) for k, v in value.items()}
    return value


class _Body:
    """A response body as botocore reads it (``stream()``, ``close()``), read from httpx2;
    an event stream's frames become the capture's events as they arrive."""

    def __init__(self, response: Any, capture: Capture | None):
        self.response = response
        self.capture = capture
        framed = CONTENT_TYPE in response.headers.get("content-type", "")
        self.reader: FrameReader | None = FrameReader() if framed and capture else None
        if self.reader is not None and capture is not None:
            capture.events = []

    def _events(self, chunk: bytes) -> None:
        if self.reader is None or self.capture is None or self.capture.events is None:
            return
        found: list[Any]
        try:
            found = [event_object(h, p) for h, p in self.reader.feed(chunk)]
        except EventStreamError as e:
            # Named as a stream event that is no JSON; nothing after a damaged frame is read.
            self.reader = None
            found = [str(e)]
        for event in found:
            self.capture.events.append(event)
            if self.capture.on_event is not None:
                self.capture.on_event(event)

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        for chunk in self.response.iter_bytes():
            self._events(chunk)
            yield chunk

    def read(self, *args: Any, **kwargs: Any) -> bytes:
        return b"".join(self.stream())

    def close(self) -> None:
        self.response.close()


def _through(http: Any, recording: Recording, timeout: float) -> Any:
    """A ``before-send`` handler sending botocore's signed request with ``http``: built
    as a bare request, so the wire carries botocore's headers and none of httpx2's defaults."""

    def send(request: Any, **kwargs: Any) -> Any:
        from botocore.awsrequest import AWSResponse

        body = request.body
        if hasattr(body, "read"):
            body = body.read()
        headers = [(k, v) for k, v in request.headers.items()]
        before = len(recording.captures)
        bare = httpx2.Request(
            request.method,
            request.url,
            headers=headers,
            content=body or b"",
            extensions={"timeout": httpx2.Timeout(timeout).as_dict()},
        )
        response = http.send(bare, stream=True)
        capture = recording.last if len(recording.captures) > before else None
        if capture is not None:
            for name in SECRET_HEADERS:
                if name in capture.request_headers:
                    capture.request_headers[name] = REDACTED
        raw = _Body(response, capture)
        return AWSResponse(request.url, response.status_code, dict(response.headers), raw)

    return send


def _extra_body(extra: dict[str, Any]) -> Any:
    """A ``before-call`` handler adding to the serialised body the keys botocore has no
    parameter for (as the other SDKs' ``extra_body`` does), before it is signed."""

    def add(params: Any, **kwargs: Any) -> None:
        if not extra:
            return
        body = json.loads(params.get("body") or b"{}")
        params["body"] = json.dumps({**body, **extra}).encode()

    return add


def count(
    body: dict[str, Any], settings: LiveSettings, key: str, recording: Recording, model: str
) -> None:
    """``client.count_tokens`` (CountTokens, the endpoint the vendor's facts name) for
    ``model``, signed and sent like a Converse call; the answer is in ``recording``."""
    creds = credentials(settings, key)
    with recording_client(httpx2, recording, settings.timeout, settings.route) as http:
        client = make_client(settings, creds)
        shape = client.meta.service_model.operation_model("CountTokens").input_shape
        client.meta.events.register_first(
            f"before-send.{SERVICE}.CountTokens", _through(http, recording, settings.timeout)
        )
        client.count_tokens(**sdk_params(body, shape), modelId=model)


def send(
    body: dict[str, Any], settings: LiveSettings, key: str, recording: Recording, model: str
) -> list[str]:
    """``client.converse`` (or ``converse_stream``, consumed) for ``model``, which botocore
    puts in the URL (a ``modelId`` in the body is left out for it).

    Returns the body keys botocore has no parameter for (added to the JSON it serialised).
    """
    creds = credentials(settings, key)
    with recording_client(httpx2, recording, settings.timeout, settings.route) as http:
        client = make_client(settings, creds)
        operation = "ConverseStream" if settings.stream else "Converse"
        shape = client.meta.service_model.operation_model(operation).input_shape
        known = {k: v for k, v in body.items() if k in shape.members and k != "modelId"}
        extra = {k: v for k, v in body.items() if k not in shape.members}
        params = {**sdk_params(known, shape), "modelId": model}
        events = client.meta.events
        events.register_first(
            f"before-send.{SERVICE}.{operation}", _through(http, recording, settings.timeout)
        )
        events.register(f"before-call.{SERVICE}.{operation}", _extra_body(extra))
        if settings.stream:
            stream = client.converse_stream(**params)["stream"]
            try:
                for _ in stream:
                    pass
            finally:
                stream.close()
        else:
            client.converse(**params)
    return sorted(extra)
