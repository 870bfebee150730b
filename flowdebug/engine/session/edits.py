"""Edits of a history, validated: JSON text or dicts in, canonical parts and messages out.

A refused edit raises :class:`EditError` naming the JSON path and the reason; the debugger
then changes nothing.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError

from flowdebug import jsontext
from flowdebug.errors import CodecError, FlowdebugError, validation_path
from flowdebug.model import PARTS, Message


class EditError(FlowdebugError):
    """An edit was refused; the session is unchanged."""


def check_index(items: list[Any], i: int, what: str) -> None:
    if not 0 <= i < len(items):
        raise EditError(f"no {what} {i} (there are {len(items)})")


def _load(data: str | dict[str, Any], where: str) -> Any:
    """The edit as JSON, refused when empty, not JSON, nested too deeply or holding NaN,
    Infinity or a lone surrogate (:mod:`flowdebug.jsontext`)."""
    try:
        if isinstance(data, str):
            return jsontext.loads(data, where)
        jsontext.check(data, where)
    except CodecError as e:
        path = where + e.path.removeprefix("$")
        raise EditError(f"{path}: {e.reason}") from None
    return data


def _pydantic_reason(e: ValidationError, where: str) -> str:
    err = e.errors()[0]
    return f"{validation_path(err['loc'], where)}: {err['msg']}"


def parse_part(data: str | dict[str, Any], where: str) -> Any:
    raw = _load(data, where)
    try:
        return PARTS.validate_python(raw)
    except ValidationError as e:
        raise EditError(_pydantic_reason(e, where)) from None


_MESSAGE = TypeAdapter(Message)


def parse_message(data: str | dict[str, Any], where: str) -> Message:
    raw = _load(data, where)
    try:
        message = _MESSAGE.validate_python(raw)
    except ValidationError as e:
        raise EditError(_pydantic_reason(e, where)) from None
    for i, part in enumerate(message.parts):
        check_role(message.role, part, f"{where}.parts[{i}]")
    return message


def check_role(role: str, part: Any, where: str) -> None:
    kind = part.kind
    if kind == "tool_call" and role != "assistant":
        raise EditError(f"{where}: a tool_call belongs in an assistant message, not {role}")
    if kind == "tool_result" and role != "tool":
        raise EditError(f"{where}: a tool_result belongs in a tool message, not {role}")
    if kind == "thinking" and role != "assistant":
        raise EditError(f"{where}: thinking belongs in an assistant message, not {role}")
    if kind in ("hosted_call", "hosted_result") and role != "assistant":
        # The vendor runs its own tools inside the model's turn: call and answer both sit there.
        raise EditError(f"{where}: a {kind} belongs in an assistant message, not {role}")
    if role == "tool" and kind != "tool_result":
        raise EditError(f"{where}: a tool message holds only tool_result parts")
