"""OpenAI Chat Completions and Responses through the official ``openai`` SDK (httpx2).

Also the way to OpenAI-compatible local servers (Ollama, vLLM, LM Studio, llama.cpp): point
``base_url`` at their ``/v1``.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import httpx2

from flowdebug.errors import UsageError
from flowdebug.players.live.keys import withheld_headers
from flowdebug.players.live.wire import Recording, recording_client, sdk_call, split_parameters
from flowdebug.protocols import facts

if TYPE_CHECKING:
    from flowdebug.players.live.settings import LiveSettings


def load_sdk() -> None:
    """Import the SDK this module sends with (players/live/senders.py calls it, one thread at a
    time, before the first send)."""
    import openai
    import openai.resources.chat
    import openai.resources.responses  # noqa: F401


@contextmanager
def _client(settings: LiveSettings, key: str, recording: Recording) -> Iterator[Any]:
    """An ``openai.OpenAI`` client recording into ``recording``, for one call."""
    import openai

    route = settings.route
    with recording_client(httpx2, recording, settings.timeout, route) as http:
        client = openai.OpenAI(
            api_key=key,
            base_url=route.base_url,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            http_client=http,
            default_headers=None if settings.trusted else _untrusted_headers(settings, key),
        )
        if not settings.trusted:
            # The SDK adds OPENAI_ORG_ID / OPENAI_PROJECT_ID from the server's environment:
            # they describe the host's account, not for a server someone typed in.
            client.organization = client.project = None
        yield client


def count(
    body: dict[str, Any], settings: LiveSettings, key: str, recording: Recording, model: str
) -> None:
    """POST ``body`` to the count-tokens endpoint through the SDK method the vendor's facts
    name (``responses.input_tokens.count``); the answer is in ``recording``."""
    counting = facts(settings.protocol).token_count
    if counting is None or counting.sdk_method is None:
        raise UsageError(f"the facts of {settings.protocol!r} name no count-tokens method")
    with _client(settings, key, recording) as client:
        sdk_call(client, counting.sdk_method, body)


def send(
    body: dict[str, Any], settings: LiveSettings, key: str, recording: Recording, model: str
) -> list[str]:
    """POST ``body`` through the client method the vendor's facts name
    (``chat.completions.create``, ``responses.create``); ``model`` is in the body already.

    Returns the body keys this SDK has no parameter for (sent through ``extra_body``).
    """
    with _client(settings, key, recording) as client:
        method = facts(settings.protocol).sdk_method
        if method is None:
            raise UsageError(f"the facts of {settings.protocol!r} name no openai client method")
        create: Any = operator.attrgetter(method)(client)
        kwargs, extra = split_parameters(create, body)
        if settings.stream:
            for _ in create(**kwargs, stream=True):
                pass
        else:
            create(**kwargs)
    return sorted(extra.get("extra_body", {}))


def _untrusted_headers(settings: LiveSettings, key: str) -> dict[str, Any]:
    """For a base URL that is not trusted: the typed key (or placeholder) as the only
    Authorization (so one from ``OPENAI_CUSTOM_HEADERS`` is dropped), every other header of
    that variable withheld."""
    import openai

    withheld = withheld_headers(settings.protocol, openai.Omit())
    kept = {k: v for k, v in withheld.items() if k.lower() != "authorization"}
    return {**kept, "Authorization": f"Bearer {key}"}
