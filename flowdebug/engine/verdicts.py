"""The linter's verdict on each request the trace draws, remembered: one Step lints at most the
one request it sends, however long the history (see :class:`Verdicts`)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from flowdebug.lint.finding import Finding
from flowdebug.lint.protocol import check_conversation
from flowdebug.model import Conversation

Lint = Callable[[Conversation, tuple[str, ...]], list[Finding]]


class Verdicts:
    """The linter's findings per request already judged, so a Step lints only a request it has
    not seen: the Steps that send no new request (a model turn, an execution) lint nothing.

    A request is the history's first ``n`` messages. Messages are immutable and a step or an
    edit makes a new list around the same message objects, so a prefix made of the very same
    objects (and the same system, tools and settings) is the same request: its verdict stands.
    Each entry holds its messages, so their ids cannot be reused while it is here; the cache is
    bounded (least recently used first out) and shared by the process's sessions."""

    def __init__(self, size: int = 512):
        self.size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[Any, ...], tuple[tuple[Any, ...], list[Finding]]] = (
            OrderedDict()
        )

    @staticmethod
    def _settings(conv: Conversation) -> tuple[Any, ...]:
        # Everything but the messages, compared by value (a few small fields and the tools).
        return tuple(getattr(conv, f) for f in type(conv).model_fields if f != "messages")

    def findings(
        self, conv: Conversation, n: int, chosen: tuple[str, ...], lint: Lint | None = None
    ) -> list[Finding]:
        """``lint`` (the linter's ``check_conversation``) of the request that carried
        ``conv``'s first ``n`` messages, for the protocols ``chosen``."""
        prefix = tuple(conv.messages[:n])
        key = (chosen, n, id(prefix[-1]) if prefix else 0)
        settings = self._settings(conv)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                (held, held_settings), found = hit[0], hit[1]
                if (
                    all(a is b for a, b in zip(held, prefix, strict=True))
                    and held_settings == settings
                ):
                    self._entries.move_to_end(key)
                    return found
        carried = conv.model_copy(update={"messages": list(prefix)})
        found = (lint or check_conversation)(carried, chosen)
        with self._lock:
            self._entries[key] = ((prefix, settings), found)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return found

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


VERDICTS = Verdicts()
"""The process's verdicts, shared by every session it serves."""
