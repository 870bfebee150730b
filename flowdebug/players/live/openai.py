"""OpenAI Chat Completions and Responses through the official ``openai`` SDK (httpx2).

Also the way to OpenAI-compatible local servers (Ollama, vLLM, LM Studio, llama.cpp): point
``base_url`` at their ``/v1``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx2

from flowdebug.players.live.wire import Recording, recording_client, split_parameters

if TYPE_CHECKING:
    from flowdebug.players.live.settings import LiveSettings


def send(body: dict[str, Any], settings: LiveSettings, key: str, recording: Recording) -> list[str]:
    """POST ``body`` via ``chat.completions.create`` or ``responses.create``.

    Returns the body keys this SDK has no parameter for (sent through ``extra_body``).
    """
    import openai

    with recording_client(httpx2, recording, settings.timeout) as http:
        client = openai.OpenAI(
            api_key=key,
            base_url=settings.base_url or None,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            http_client=http,
        )
        if not settings.trusted:
            # The SDK adds OPENAI_ORG_ID / OPENAI_PROJECT_ID from the server's environment:
            # they describe the host's account, not for a server someone typed in.
            client.organization = client.project = None
        if settings.protocol == "openai-responses":
            create: Any = client.responses.create
        else:
            create = client.chat.completions.create
        kwargs, extra = split_parameters(create, body)
        if settings.stream:
            for _ in create(**kwargs, stream=True):
                pass
        else:
            create(**kwargs)
    return sorted(extra.get("extra_body", {}))
