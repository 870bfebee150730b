"""How a session lies in the store's rows: its state as JSON with credentials redacted, in the
pieces the store keeps (a head without the long lists, the conversation without its messages,
one body per message, trace event, execution and wire exchange) and assembled whole again; and
a line of the session list (:class:`SessionInfo`) read from the sessions table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pydantic_core
from pydantic import BaseModel

from flowdebug.engine.session.exchange_bodies import expanded
from flowdebug.engine.session.session_state import SessionState
from flowdebug.redact import redact_json_text, secret_values
from flowdebug.store.errors import StoreError

LISTS = ("messages", "events", "executions", "exchanges")
_HEAD_EXCLUDE = {"conversation", "events", "executions", "exchanges"}


@dataclass(frozen=True)
class SessionInfo:
    """One line of the session list."""

    id: str
    name: str
    scenario: str | None
    updated: datetime
    messages: int
    parent: str | None
    created: datetime
    step: int
    status: str
    revision: int = 0


def state_items(state: SessionState) -> dict[str, list[Any]]:
    """The state's long lists, one row per item."""
    return {
        "messages": list(state.conversation.messages),
        "events": list(state.events),
        "executions": list(state.executions),
        "exchanges": list(state.exchanges),
    }


def _json(value: Any, where: str, exclude: set[str] | None = None) -> str:
    try:
        if isinstance(value, BaseModel):
            return value.model_dump_json(exclude=exclude)
        return pydantic_core.to_json(value).decode()
    except pydantic_core.PydanticSerializationError as e:
        raise StoreError(
            f"{where}: cannot be saved ({e}); text with a lone surrogate is not Unicode: "
            "edit it out, then save again"
        ) from None


def item_json(kind: str, index: int, item: Any, secrets: list[str]) -> str:
    """One item's row body: its JSON with credentials redacted."""
    where = f"$.conversation.messages[{index}]" if kind == "messages" else f"$.{kind}[{index}]"
    text = _json(expanded(item) if kind == "exchanges" else item, where)
    # Messages are the person's conversation: only the secret values rule applies to them.
    return redact_json_text(text, secrets, names=kind != "messages")


def heads(state: SessionState, secrets: list[str]) -> tuple[str, str]:
    """The state without its long lists, and the conversation without its messages."""
    head = _json(state, "$", _HEAD_EXCLUDE)
    conversation = _json(state.conversation, "$.conversation", {"messages"})
    return redact_json_text(head, secrets), redact_json_text(conversation, secrets)


def state_json(state: SessionState) -> str:
    """The whole state as JSON with credentials redacted: what the store keeps, in one piece
    (exports use it too)."""
    secrets = secret_values()
    head, conversation = heads(state, secrets)
    bodies = {
        kind: [item_json(kind, i, item, secrets) for i, item in enumerate(items)]
        for kind, items in state_items(state).items()
    }
    return assemble(head, conversation, bodies)


def assemble(head: str, conversation: str, bodies: dict[str, list[str]]) -> str:
    """The whole state's JSON from its parts: one parse validates everything at once."""

    def array(kind: str) -> str:
        return "[" + ",".join(bodies.get(kind, ())) + "]"

    conv = f'{conversation[:-1]},"messages":{array("messages")}}}'
    lists = "".join(f',"{k}":{array(k)}' for k in ("events", "executions", "exchanges"))
    return f'{head[:-1]},"conversation":{conv}{lists}}}'


def utc(t: float) -> datetime:
    """A stored timestamp (seconds since the epoch) as a UTC datetime."""
    return datetime.fromtimestamp(t, UTC)


INFO = "id, name, scenario, updated, messages, parent, created, step, status, revision"


def session_info(row: Sequence[Any]) -> SessionInfo:
    """The list line of a sessions-table row read with the :data:`INFO` columns."""
    return SessionInfo(
        id=row[0],
        name=row[1],
        scenario=row[2],
        updated=utc(row[3]),
        messages=row[4],
        parent=row[5],
        created=utc(row[6]),
        step=row[7],
        status=row[8],
        revision=row[9],
    )
