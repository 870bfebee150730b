"""How a live player reaches its vendor: protocol, model, key, base URL, streaming."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from typing import Any

from flowdebug import protocols
from flowdebug.errors import ProviderError, UsageError
from flowdebug.model import Conversation, ToolChoice
from flowdebug.players.live.errors import key_hint
from flowdebug.players.live.keys import env_key_allowed
from flowdebug.players.live.route import Route, route
from flowdebug.players.live.wire import Secret
from flowdebug.protocols import facts
from flowdebug.redact import strip_url_credentials

log = logging.getLogger(__name__)

# Every vendor whose facts name the SDK its live player sends through, in registry order.
LIVE_PROTOCOLS = tuple(n for n in protocols.PROTOCOLS if facts(n).sdk)
# Local OpenAI-compatible servers ignore the key, but the SDKs insist on one.
NO_KEY = "no-key"


@dataclass(frozen=True, repr=False)
class LiveSettings:
    """How to reach one model. ``tool_choice`` / ``parallel`` / ``model`` / ``temperature``
    / ``max_tokens`` override the conversation's own when set. ``api_key`` (a str is
    wrapped) falls back to the vendor's environment variable only when ``base_url`` is the
    vendor's own or one the host allowed (:mod:`flowdebug.players.live.keys`); any other
    ``base_url`` without a typed key gets a placeholder (local servers need none). Credentials
    inside ``base_url`` are used on the wire but never shown or saved. ``timeout`` is the SDK's:
    seconds to connect and between bytes. ``max_retries`` defaults to 0 so a debugger shows
    every failure instead of the SDK silently retrying it."""

    protocol: str
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    tool_choice: ToolChoice | None = None
    parallel: bool | None = None
    stream: bool = False
    base_url: str | None = None
    api_key: Secret | str | None = field(default=None, repr=False, compare=False)
    timeout: float = 60.0
    max_retries: int = 0

    def __post_init__(self) -> None:
        if self.protocol not in LIVE_PROTOCOLS:
            raise UsageError(
                f"no live player for {self.protocol!r}; choose one of: {', '.join(LIVE_PROTOCOLS)}"
            )
        if isinstance(self.api_key, str):
            object.__setattr__(self, "api_key", Secret(self.api_key) if self.api_key else None)

    @property
    def model_name(self) -> str:
        return self.model or facts(self.protocol).default_model or "default"

    @property
    def trusted(self) -> bool:
        """Does ``base_url`` lead to the vendor (or a URL the host allowed)?"""
        return env_key_allowed(self.protocol, self.base_url)

    @property
    def key_source(self) -> str:
        """Where the key comes from: ``typed``, the env var's name, ``placeholder``, ``none``."""
        if self.api_key:
            return "typed"
        if self.trusted:
            found = next((v for v in facts(self.protocol).key_env if os.environ.get(v)), None)
            if found:
                return found
        return "placeholder" if self.base_url else "none"

    @property
    def route(self) -> Route:
        """How the call reaches ``base_url``: the SDK gets it without its query, which goes on
        every request instead; on a shared server every connection is checked."""
        return route(self.base_url)

    @property
    def shown_url(self) -> str | None:
        """``base_url`` without the credentials it may carry: what may be shown or saved."""
        return strip_url_credentials(self.base_url) if self.base_url else None

    def public(self) -> dict[str, Any]:
        """The settings safe to save or show: no key, no credential inside the base URL."""
        data = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "api_key"}
        data["base_url"] = self.shown_url
        if self.tool_choice is not None:
            data["tool_choice"] = self.tool_choice.model_dump(exclude_none=True)
        return {**data, "api_key": self.key_source}

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.public().items() if v is not None)
        return f"LiveSettings({shown})"

    def resolve_key(self) -> str:
        """The key to send: the typed one; the environment's when the base URL is trusted;
        a placeholder for any other base URL."""
        if isinstance(self.api_key, Secret) and self.api_key:
            return self.api_key.reveal()
        source = self.key_source
        if source in facts(self.protocol).key_env:
            return os.environ[source]
        if self.base_url:
            return NO_KEY
        raise ProviderError(self.protocol, None, "no API key", key_hint(self.protocol))

    def apply(self, conv: Conversation) -> Conversation:
        """``conv`` with these settings' overrides (a copy; ``conv`` is unchanged)."""
        update: dict[str, Any] = {}
        if self.model:
            update["model"] = self.model
        if self.temperature is not None:
            update["temperature"] = self.temperature
        if self.max_tokens is not None:
            update["max_tokens"] = self.max_tokens
        choice = self.tool_choice or conv.tool_choice
        if self.parallel is not None:
            choice = (choice or ToolChoice()).model_copy(update={"parallel": self.parallel})
        update["tool_choice"] = choice
        return conv.model_copy(update=update)
