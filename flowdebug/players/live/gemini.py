"""Gemini generateContent through the official ``google-genai`` SDK.

The codec's body is REST JSON; the SDK takes typed ``Content`` and ``GenerateContentConfig``
and serialises them itself, so what goes on the wire is the SDK's own spelling (the
expected differences are listed in :mod:`flowdebug.players.live.differences`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import httpx2

from flowdebug.players.live.wire import Recording, recording_client, tls_context
from flowdebug.protocols import facts

if TYPE_CHECKING:
    from flowdebug.players.live.settings import LiveSettings


def load_sdk() -> None:
    """Import the SDK this module sends with (players/live/senders.py calls it, one thread at a
    time, before the first send)."""
    import google.genai
    import google.genai.types  # noqa: F401


def sdk_arguments(body: dict[str, Any]) -> tuple[list[Any], Any]:
    """The SDK's ``contents`` and ``config`` for a REST request body.

    Validated from JSON text so base64 fields (``thoughtSignature``) become bytes the way
    the SDK's own JSON parsing makes them.
    """
    from google.genai import types

    rest = {k: v for k, v in body.items() if k not in ("contents", "generationConfig")}
    config = types.GenerateContentConfig.model_validate_json(
        json.dumps({**rest, **(body.get("generationConfig") or {})})
    )
    contents = [types.Content.model_validate_json(json.dumps(c)) for c in body["contents"]]
    return contents, config


def count(
    body: dict[str, Any], settings: LiveSettings, key: str, recording: Recording, model: str
) -> None:
    """POST ``body`` to ``models/{model}:countTokens`` (the endpoint the vendor's facts name)
    with the key in ``x-goog-api-key``, as the SDK sends it: google-genai's own
    ``count_tokens`` refuses tools outside Vertex AI. The answer is in ``recording``."""
    counting = facts(settings.protocol).token_count
    assert counting is not None
    route = settings.route
    root = (route.base_url or facts(settings.protocol).base_url or "").rstrip("/")
    path = counting.endpoint.split(" ", 1)[1].format(model=model.removeprefix("models/"))
    with recording_client(httpx2, recording, settings.timeout, route) as http:
        http.post(root + path, json=body, headers={"x-goog-api-key": key})


def send(
    body: dict[str, Any], settings: LiveSettings, key: str, recording: Recording, model: str
) -> list[str]:
    """Call ``models.generate_content`` (or ``generate_content_stream``) for ``model``.

    The SDK takes typed arguments, not a body: no key goes through ``extra_body``.
    """
    from google import genai
    from google.genai import types

    contents, config = sdk_arguments(body)
    route = settings.route
    with recording_client(httpx2, recording, settings.timeout, route) as http:
        retries = (
            types.HttpRetryOptions(attempts=settings.max_retries + 1)
            if settings.max_retries
            else None
        )
        client = genai.Client(
            api_key=key,
            vertexai=False,
            http_options=types.HttpOptions(
                base_url=route.base_url,
                timeout=int(settings.timeout * 1000),
                httpx_client=http,
                # Its own async client and its websocket context, unused here, would each
                # read the CA certificates again (25 ms of CPU each, at every call).
                client_args={"verify": tls_context(httpx2)},
                async_client_args={"ssl": tls_context(httpx2)},
                retry_options=retries,
            ),
        )
        if settings.stream:
            for _ in client.models.generate_content_stream(
                model=model, contents=contents, config=config
            ):
                pass
        else:
            client.models.generate_content(model=model, contents=contents, config=config)
    return []
