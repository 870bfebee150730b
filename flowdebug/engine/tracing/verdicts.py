"""The linter's verdict on each request the trace draws, remembered: one Step lints at most the
one request it sends, however long the history (see :class:`Verdicts`), and a long history's
next request can be linted ahead, between two Steps (:meth:`Verdicts.ahead`)."""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from flowdebug.lint.base.findings import Finding
from flowdebug.lint.protocol import check_conversation
from flowdebug.model import Conversation

Lint = Callable[[Conversation, tuple[str, ...]], list[Finding]]

AHEAD_FROM = 200
"""Messages from which a history's next request is worth linting ahead: the six vendors' lint of
a 1,000-message history takes 8-20 ms of the interpreter, of 200 messages a few, of a
workshop's twenty well under one."""

AHEAD_DELAY = 0.05
"""Seconds a lint ahead waits before it starts, so that the Step which asked for it has sent its
page first (the lint and that Step would share the interpreter)."""

WAIT_FOR_OTHER = 30.0
"""Seconds a Step waits for another thread's lint of the same request before linting it too."""

log = logging.getLogger(__name__)


class Verdicts:
    """The linter's findings per request already judged, so a Step lints only a request it has
    not seen: the Steps that send no new request (a model turn, an execution) lint nothing.

    A request is the history's first ``n`` messages. Messages are immutable and a step or an
    edit makes a new list around the same message objects, so a prefix made of the very same
    objects (and the same system, tools and settings) is the same request: its verdict stands.
    Each entry holds its messages, so their ids cannot be reused while it is here; the cache is
    bounded (least recently used first out) and shared by the process's sessions.

    A request is linted by one thread at a time: a Step that needs a verdict another thread is
    working out (a lint ahead) waits for it rather than linting it twice."""

    def __init__(self, size: int = 512):
        self.size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[Any, ...], tuple[tuple[Any, ...], list[Finding]]] = (
            OrderedDict()
        )
        self._working: dict[tuple[Any, ...], threading.Event] = {}
        self._ahead = False  # a lint ahead is under way (one at a time in the process)

    @staticmethod
    def _settings(conv: Conversation) -> tuple[Any, ...]:
        # Everything but the messages, compared by value (a few small fields and the tools).
        return tuple(getattr(conv, f) for f in type(conv).model_fields if f != "messages")

    def _held(
        self, key: tuple[Any, ...], prefix: tuple[Any, ...], settings: tuple[Any, ...]
    ) -> list[Finding] | None:
        """The verdict kept for this very request, if any (the caller holds the lock)."""
        hit = self._entries.get(key)
        if hit is None:
            return None
        (held, held_settings), found = hit
        if not (
            all(a is b for a, b in zip(held, prefix, strict=True)) and held_settings == settings
        ):
            return None
        self._entries.move_to_end(key)
        return found

    def _request(
        self, conv: Conversation, n: int, chosen: tuple[str, ...]
    ) -> tuple[tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]]:
        """The cache's key for a request, the messages it carried and its settings."""
        prefix = tuple(conv.messages[:n])
        return (chosen, n, id(prefix[-1]) if prefix else 0), prefix, self._settings(conv)

    def findings(
        self, conv: Conversation, n: int, chosen: tuple[str, ...], lint: Lint | None = None
    ) -> list[Finding]:
        """``lint`` (the linter's ``check_conversation``) of the request that carried
        ``conv``'s first ``n`` messages, for the protocols ``chosen``."""
        key, prefix, settings = self._request(conv, n, chosen)
        mine: threading.Event | None = None
        while mine is None:
            with self._lock:
                found = self._held(key, prefix, settings)
                if found is not None:
                    return found
                other = self._working.get(key)
                if other is None:
                    mine = self._working[key] = threading.Event()
            if other is not None and not other.wait(WAIT_FOR_OTHER):
                break  # that lint is stuck: this Step lints the request itself
        try:
            carried = conv.model_copy(update={"messages": list(prefix)})
            found = (lint or check_conversation)(carried, chosen)
            with self._lock:
                self._entries[key] = ((prefix, settings), found)
                self._entries.move_to_end(key)
                while len(self._entries) > self.size:
                    self._entries.popitem(last=False)
        finally:
            if mine is not None:
                with self._lock:
                    self._working.pop(key, None)
                mine.set()
        return found

    def ahead(
        self,
        conv: Conversation,
        chosen: tuple[str, ...],
        lint: Lint | None = None,
        delay: float = AHEAD_DELAY,
    ) -> threading.Thread | None:
        """Lint the request that carries all of ``conv``'s messages now, in a thread of its own,
        so that the Step that sends it finds its verdict ready (a Step then costs a long history
        no more than a short one). Only for histories of :data:`AHEAD_FROM` messages or more,
        and one lint ahead at a time in the process: while one runs, another is not started
        (that Step lints its request itself, as without this). The thread ends with its lint;
        nothing else is kept but the verdict. Returns the thread started, if any."""
        n = len(conv.messages)
        if n < AHEAD_FROM or not chosen:
            return None
        key, prefix, settings = self._request(conv, n, chosen)
        with self._lock:
            # Judged already (a rerun that changed nothing), or one under way: nothing to do.
            held = self._held(key, prefix, settings) is not None
            if self._ahead or key in self._working or held:
                return None
            self._ahead = True
        thread = threading.Thread(
            target=self._lint_ahead,
            args=(conv, chosen, lint, delay),
            name="flowdebug-lint-ahead",
            daemon=True,
        )
        try:
            thread.start()
        except RuntimeError:  # no thread to be had: the Step lints its request itself
            with self._lock:
                self._ahead = False
            return None
        return thread

    def _lint_ahead(
        self, conv: Conversation, chosen: tuple[str, ...], lint: Lint | None, delay: float
    ) -> None:
        try:
            time.sleep(delay)
            self.findings(conv, len(conv.messages), chosen, lint)
        except Exception:  # the Step that sends the request lints it again, and says why
            log.debug("lint ahead failed", exc_info=True)
        finally:
            with self._lock:
                self._ahead = False

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


VERDICTS = Verdicts()
"""The process's verdicts, shared by every session it serves."""
