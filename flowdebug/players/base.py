"""Who plays the model. Scripted, manual and live players share this one interface."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from flowdebug.model import Conversation, ModelResponse


@dataclass
class WireExchange:
    """What went over the wire for one live call (empty for offline players)."""

    protocol: str
    request: dict[str, Any] | None = None
    request_headers: dict[str, str] = field(default_factory=dict)
    response: Any = None
    status: int | None = None
    stream_events: list[Any] | None = None
    url: str | None = None


@dataclass
class PlayerTurn:
    """One model turn: the canonical response plus, for live players, the exact exchange."""

    response: ModelResponse
    exchange: WireExchange | None = None
    elapsed_ms: float = 0.0


class Player(Protocol):
    """Answers a conversation with the model's next turn."""

    name: str

    def respond(self, conv: Conversation) -> PlayerTurn: ...
