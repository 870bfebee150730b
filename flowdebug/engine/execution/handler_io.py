"""What a handler is given and what it gives back.

A handler runs with the call's arguments and a :class:`ToolContext` (the session's state,
the deadline, cancellation) and returns an :class:`Outcome`; an exception it raises becomes
an error outcome through :func:`exception_outcome` (a :class:`ToolError` chooses its own
``error_type``).
"""

from __future__ import annotations

import json
import math
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from flowdebug.model import ErrorType, ToolResult

DEFAULT_ERROR_TYPE: ErrorType = "exception"


class ToolError(Exception):
    """Raise from a python handler to return an error result with this ``error_type``."""

    def __init__(self, message: str, error_type: str = DEFAULT_ERROR_TYPE):
        super().__init__(message)
        self.error_type = error_type


@dataclass
class ToolContext:
    """What a handler may use besides its arguments.

    ``state`` is the session's JSON-only scratch space (the task store lives there), shared
    by every call of one runtime; take ``lock`` around read-modify-write because the calls of
    a batch run concurrently. ``cancelled`` is set when the runtime gave up on the call.
    """

    call_id: str = ""
    session_id: str = ""
    state: dict[str, Any] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)
    deadline: float = math.inf  # time.monotonic() at which the call times out
    cancelled: threading.Event = field(default_factory=threading.Event)

    @property
    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def sleep(self, seconds: float) -> bool:
        """Sleep, waking early when the call is abandoned; True when it slept in full."""
        return not self.cancelled.wait(seconds)


@dataclass(frozen=True)
class Outcome:
    """What a handler produced: the result's text and error flag, plus the raw value (for
    structured content) and a log (captured output, traceback) for the trace.

    A handler that gets a whole result from elsewhere (an MCP server: content blocks, images,
    ``structuredContent``, the JSON-RPC error) gives it as ``result``; the runtime pairs it to
    the call. ``data`` is JSON for the call's trace events (MCP: the JSON-RPC messages).
    """

    content: str = ""
    is_error: bool = False
    error_type: str | None = None
    value: Any = None
    log: str = ""
    result: ToolResult | None = None
    data: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def success(cls, value: Any, log: str = "") -> Outcome:
        if isinstance(value, BaseModel):
            value = value.model_dump(mode="json")
        if value is None or isinstance(value, str):
            return cls(content=value or "", value=value, log=log)
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            return cls.failure(
                f"handler returned {type(value).__name__}, which is not a JSON value ({exc})"
            )
        return cls(content=text, value=value, log=log)

    @classmethod
    def failure(cls, text: str, error_type: str = DEFAULT_ERROR_TYPE, log: str = "") -> Outcome:
        return cls(content=text, is_error=True, error_type=error_type, log=log)


def exception_outcome(exc: BaseException) -> Outcome:
    """The error result for an exception a handler raised: a :class:`ToolError` gives its
    own ``error_type``; PermissionError ``permission``; TimeoutError ``timeout``; anything
    else ``exception``, with ``Type: message`` as the text and the traceback in the log."""
    log = "".join(traceback.format_exception(exc))
    match exc:
        case ToolError():
            return Outcome.failure(str(exc), exc.error_type, log)
        case PermissionError():
            return Outcome.failure(f"permission denied: {exc}", "permission", log)
        case TimeoutError():
            return Outcome.failure(f"timeout: {exc}", "timeout", log)
        case _:
            return Outcome.failure(f"{type(exc).__name__}: {exc}", DEFAULT_ERROR_TYPE, log)
