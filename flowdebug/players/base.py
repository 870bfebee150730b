"""Who plays the model. Scripted, manual and live players share this one interface."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from flowdebug.model import Conversation, ModelResponse, dump


@dataclass
class WireExchange:
    """What went over the wire for one live call (empty for offline players).

    ``request`` / ``response`` are the bodies the SDK really sent and received (parsed JSON,
    or the text when it is not JSON), ``raw_request`` / ``raw_response`` the exact text;
    ``stream_events`` the SSE ``data:`` objects in wire order. Credentials in headers and
    URLs are already ``[redacted]``. ``codec_request`` is flowdebug's own encoding of the
    same call and ``differences`` what the SDK changed in it (see
    :func:`flowdebug.players.live.differences.wire_differences`); ``argument_snapshots`` are
    ``(call index, arguments so far)`` steps of a stream.
    """

    protocol: str
    request: dict[str, Any] | None = None
    request_headers: dict[str, str] = field(default_factory=dict)
    response: Any = None
    status: int | None = None
    stream_events: list[Any] | None = None
    url: str | None = None
    codec_request: Any = None
    codec_warnings: list[Any] = field(default_factory=list)
    differences: list[Any] = field(default_factory=list)
    response_headers: dict[str, str] = field(default_factory=dict)
    raw_request: str | None = None
    raw_response: str | None = None
    argument_snapshots: list[tuple[int, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (differences and warnings as plain dicts)."""
        return json.loads(json.dumps(dataclasses.asdict(self), default=str))

    @property
    def unexpected_differences(self) -> list[Any]:
        return [d for d in self.differences if not getattr(d, "expected", False)]


@dataclass
class PlayerTurn:
    """One model turn: the canonical response plus, for live players, the exact exchange."""

    response: ModelResponse
    exchange: WireExchange | None = None
    elapsed_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "response": dump(self.response),
            "exchange": self.exchange.to_dict() if self.exchange else None,
            "elapsed_ms": self.elapsed_ms,
        }


class Player(Protocol):
    """Answers a conversation with the model's next turn. A player that answers from memory
    (no network, nothing to wait for) says so with a class attribute ``local = True``: the app
    then runs its turn in the page's own thread instead of a background job."""

    name: str

    def respond(self, conv: Conversation) -> PlayerTurn: ...
