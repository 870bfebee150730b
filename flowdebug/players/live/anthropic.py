"""Anthropic Messages through the official ``anthropic`` SDK (which speaks httpx2)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import httpx2

from flowdebug.players.live.keys import withheld_headers
from flowdebug.players.live.wire import Recording, recording_client, sdk_call, split_parameters
from flowdebug.protocols import facts

if TYPE_CHECKING:
    from flowdebug.players.live.settings import LiveSettings


def load_sdk() -> None:
    """Import the SDK this module sends with (players/live/senders.py calls it, one thread at a
    time, before the first send)."""
    import anthropic
    import anthropic.resources.messages  # noqa: F401


@contextmanager
def _client(settings: LiveSettings, key: str, recording: Recording) -> Iterator[Any]:
    """An ``anthropic.Anthropic`` client recording into ``recording``, for one call."""
    import anthropic

    # Headers the host set for its own account (ANTHROPIC_CUSTOM_HEADERS) go only where its
    # key may go; the key itself is always passed, so the SDK reads no credential from the
    # environment (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, a profile).
    headers = {} if settings.trusted else withheld_headers(settings.protocol, anthropic.Omit())
    route = settings.route
    with recording_client(httpx2, recording, settings.timeout, route) as http:
        yield anthropic.Anthropic(
            api_key=key,
            base_url=route.base_url,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            http_client=http,
            default_headers=headers,
        )


def count(
    body: dict[str, Any], settings: LiveSettings, key: str, recording: Recording, model: str
) -> None:
    """POST ``body`` to the count-tokens endpoint through the SDK method the vendor's facts
    name (``messages.count_tokens``); the answer is in ``recording``."""
    counting = facts(settings.protocol).token_count
    assert counting is not None and counting.sdk_method is not None
    with _client(settings, key, recording) as client:
        sdk_call(client, counting.sdk_method, body)


def send(
    body: dict[str, Any], settings: LiveSettings, key: str, recording: Recording, model: str
) -> list[str]:
    """POST ``body`` to /v1/messages via ``client.messages.create``; consume any stream
    (``model`` is in the body already).

    Returns the body keys this SDK has no parameter for (sent through ``extra_body``).
    """
    with _client(settings, key, recording) as client:
        kwargs, extra = split_parameters(client.messages.create, body)
        if settings.stream:
            for _ in client.messages.create(**kwargs, stream=True):
                pass
        else:
            client.messages.create(**kwargs)
    return sorted(extra.get("extra_body", {}))
