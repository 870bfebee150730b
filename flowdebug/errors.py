"""One family of errors. Messages say what went wrong, where, and what to do next."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def json_path(loc: Iterable[Any], root: str = "$") -> str:
    """A location (keys and indexes) as a JSON path: ``$.messages[2].parts[0]``."""
    return root + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)


# The tags pydantic inserts into an error location after a list index of a union of parts
# (messages.1.parts.0.tool_call.id), which a person's JSON never contains.
_PART_TAGS = {"text", "thinking", "image", "tool_call", "tool_result", "str", "list[...]"}


def validation_path(loc: Sequence[Any], root: str = "$") -> str:
    """pydantic's error location as the JSON path a person wrote, union tags left out."""
    kept = [
        p
        for i, p in enumerate(loc)
        if not (p in _PART_TAGS and (i == 0 or isinstance(loc[i - 1], int)))
    ]
    return json_path(kept, root)


class FlowdebugError(Exception):
    """Base of every error flowdebug raises on purpose."""


class UsageError(FlowdebugError):
    """The person asked for something that cannot be done (bad flag, unknown name)."""


_LONGEST = 500  # characters of a CodecError's reason


class CodecError(FlowdebugError):
    """A payload does not fit a protocol. ``path`` is a JSON path into the payload."""

    def __init__(self, protocol: str, path: str, message: str):
        self.protocol = protocol
        self.path = path
        # A reason may quote what the payload held, which can be any size: keep it readable.
        self.reason = message if len(message) <= _LONGEST else message[: _LONGEST - 1] + "…"
        message = self.reason
        super().__init__(f"{protocol}: {path}: {message}")


class ProviderError(FlowdebugError):
    """A live vendor call failed; ``body`` is the vendor's own error text, ``hint`` what to
    do next. ``exchange`` (a WireExchange, when the call reached the wire) shows what was
    sent and received."""

    def __init__(
        self, provider: str, status: int | None, body: str, hint: str = "", exchange: object = None
    ):
        self.provider = provider
        self.status = status
        self.body = body
        self.hint = hint
        self.exchange = exchange
        msg = f"{provider} returned {status}: {body}" if status else f"{provider}: {body}"
        super().__init__(f"{msg} — {hint}" if hint else msg)
