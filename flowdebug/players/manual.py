"""The manual player: the person writes the model's turn (calls and arguments, or text)."""

from __future__ import annotations

from flowdebug.errors import UsageError
from flowdebug.model import Conversation, Message, ModelResponse
from flowdebug.players.base import PlayerTurn


class ManualPlayer:
    """Returns the turn the person queued with :meth:`write`, once."""

    name = "manual"
    local = True  # answers from memory: no network, nothing to wait for

    def __init__(self) -> None:
        self.pending: Message | None = None

    @property
    def waiting(self) -> bool:
        """No turn is queued: asking this player now would fail."""
        return self.pending is None

    def write(self, message: Message) -> None:
        if message.role != "assistant":
            raise UsageError("the model's turn must be an assistant message")
        if not message.parts:
            raise UsageError("the model's turn is empty: add text or at least one tool call")
        self.pending = message

    def respond(self, conv: Conversation) -> PlayerTurn:
        if self.pending is None:
            raise UsageError(
                "write the model's turn first (text, or tool calls with arguments), then step"
            )
        message, self.pending = self.pending, None
        stop = "tool_use" if message.tool_calls else "end_turn"
        return PlayerTurn(ModelResponse(message=message, stop_reason=stop, model="manual"))
