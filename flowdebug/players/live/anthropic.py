"""Anthropic Messages through the official ``anthropic`` SDK (which speaks httpx2)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx2

from flowdebug.players.live.keys import withheld_headers
from flowdebug.players.live.wire import Recording, recording_client, split_parameters

if TYPE_CHECKING:
    from flowdebug.players.live.settings import LiveSettings


def send(
    body: dict[str, Any], settings: LiveSettings, key: str, recording: Recording, model: str
) -> list[str]:
    """POST ``body`` to /v1/messages via ``client.messages.create``; consume any stream
    (``model`` is in the body already).

    Returns the body keys this SDK has no parameter for (sent through ``extra_body``).
    """
    import anthropic

    # Headers the host set for its own account (ANTHROPIC_CUSTOM_HEADERS) go only where its
    # key may go; the key itself is always passed, so the SDK reads no credential from the
    # environment (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, a profile).
    headers = {} if settings.trusted else withheld_headers(settings.protocol, anthropic.Omit())
    route = settings.route
    with recording_client(httpx2, recording, settings.timeout, route) as http:
        client = anthropic.Anthropic(
            api_key=key,
            base_url=route.base_url,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            http_client=http,
            default_headers=headers,
        )
        kwargs, extra = split_parameters(client.messages.create, body)
        if settings.stream:
            for _ in client.messages.create(**kwargs, stream=True):
                pass
        else:
            client.messages.create(**kwargs)
    return sorted(extra.get("extra_body", {}))
