"""Who holds what a session starts, so that it ends with its holder.

A session can start things that outlive a function call: an MCP server over stdio (a process
and the threads that read it), an HTTP connection to one, temporary files. Each is registered
here under an **owner**, an id: a debugger session's id (the runtime gives it to the handlers
as ``ctx.session_id``), or a browser session's in the app. Closing the owner closes what it
holds.

Owners nest: the app links each browser session to the debugger sessions it has held, so
closing the browser session closes them too (a child shared by two parents, one session open
in two tabs, is closed when the last of them lets go).

Some things are worth sharing with a bound instead: a ``group`` caps how many of its
resources stay open across all owners, and the least recently used beyond the cap is closed
(its owner gets a fresh one on next use).

:class:`Reaper` is the backstop for holders that vanish without saying so: a daemon thread
that closes every top-level owner its ``keep`` predicate no longer vouches for.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Protocol, TypeVar

log = logging.getLogger(__name__)


class Closeable(Protocol):
    """Anything with a ``close()`` that lets go of what it holds (idempotent)."""

    def close(self) -> None: ...


C = TypeVar("C", bound=Closeable)
_Slot = tuple[str, Hashable]  # (owner, key)


class Resources:
    """Closeables by owner and key; thread-safe. ``limits`` caps the open resources of a
    group (``{"mcp": 32}``) across every owner."""

    def __init__(self, limits: dict[str, int] | None = None):
        self.limits = dict(limits or {})
        self._lock = threading.RLock()
        self._held: dict[str, dict[Hashable, Closeable]] = {}
        self._children: dict[str, set[str]] = {}
        self._parents: dict[str, set[str]] = {}
        self._groups: dict[str, OrderedDict[_Slot, None]] = {}
        self._group_of: dict[_Slot, str] = {}

    # -- holding ----------------------------------------------------------------------------

    def open(
        self, owner: str, key: Hashable, factory: Callable[[], C], *, group: str | None = None
    ) -> C:
        """``owner``'s resource ``key``, made by ``factory`` when it holds none yet (under the
        registry's lock: a factory must be quick, and an MCP client connects only when used).
        With a ``group``, the use counts for that group's least-recently-used bound; what the
        bound pushes out is closed in the background, so this caller does not wait for it."""
        evicted: list[Closeable] = []
        with self._lock:
            found = self._held.get(owner, {}).get(key)
            if found is None:
                found = factory()
                self._held.setdefault(owner, {})[key] = found
            if group is not None:
                evicted = self._touch((owner, key), group)
        _close_in_background(evicted)
        return found  # type: ignore[return-value]  # what the factory made for this key

    def add(self, owner: str, key: Hashable, thing: Closeable) -> None:
        """Hold ``thing`` for ``owner`` under ``key``; one held there before is closed."""
        with self._lock:
            old = self._held.setdefault(owner, {}).get(key)
            self._held[owner][key] = thing
        if old is not None and old is not thing:
            _close_each([old])

    def get(self, owner: str, key: Hashable) -> Any:
        with self._lock:
            return self._held.get(owner, {}).get(key)

    def release(self, owner: str, key: Hashable) -> bool:
        """Close ``owner``'s resource ``key``; False when it held none."""
        with self._lock:
            thing = self._forget((owner, key))
        _close_each([thing] if thing is not None else [])
        return thing is not None

    def _forget(self, slot: _Slot) -> Closeable | None:
        owner, key = slot
        thing = self._held.get(owner, {}).pop(key, None)
        if owner in self._held and not self._held[owner]:
            del self._held[owner]
        group = self._group_of.pop(slot, None)
        if group is not None:
            self._groups[group].pop(slot, None)
        return thing

    def _touch(self, slot: _Slot, group: str) -> list[Closeable]:
        order = self._groups.setdefault(group, OrderedDict())
        order[slot] = None
        order.move_to_end(slot)
        self._group_of[slot] = group
        evicted = []
        limit = self.limits.get(group)
        while limit is not None and len(order) > limit:
            oldest = next(iter(order))
            thing = self._forget(oldest)
            if thing is not None:
                evicted.append(thing)
        return evicted

    # -- owners -------------------------------------------------------------------------------

    def link(self, parent: str, child: str) -> None:
        """``parent`` holds ``child``: closing the parent closes the child (when no other
        parent still holds it)."""
        if parent == child:
            return
        with self._lock:
            self._children.setdefault(parent, set()).add(child)
            self._parents.setdefault(child, set()).add(parent)

    def holders(self, child: str) -> set[str]:
        """The owners that hold ``child`` now."""
        with self._lock:
            return set(self._parents.get(child, ()))

    def let_go(self, parent: str, child: str) -> int:
        """``parent`` no longer holds ``child``: the child is closed (in the background, see
        :meth:`close_later`) unless another owner still holds it. Returns how many resources
        are being closed."""
        with self._lock:
            self._children.get(parent, set()).discard(child)
            parents = self._parents.get(child, set())
            parents.discard(parent)
            if parents:
                return 0
            self._parents.pop(child, None)
        return self.close_later(child)

    def close(self, owner: str) -> int:
        """Close everything ``owner`` holds, and its children that no other owner holds;
        returns how many resources were closed. The owner's own parents keep it linked."""
        with self._lock:
            things = self._detach(owner)
        _close_each(things)
        return len(things)

    def _detach(self, owner: str) -> list[Closeable]:
        things = []
        for key in list(self._held.get(owner, {})):
            thing = self._forget((owner, key))
            if thing is not None:
                things.append(thing)
        for child in self._children.pop(owner, set()):
            parents = self._parents.get(child, set())
            parents.discard(owner)
            if not parents:
                self._parents.pop(child, None)
                things += self._detach(child)
        return things

    def close_later(self, owner: str) -> int:
        """Like :meth:`close`, but the closing runs in a short-lived daemon thread: what the
        owner held is let go of at once (nobody can use it again), and the caller does not
        wait for a server to exit. Returns how many resources are being closed."""
        with self._lock:
            things = self._detach(owner)
        _close_in_background(things)
        return len(things)

    def close_all(self) -> int:
        """Close everything every owner holds (at exit)."""
        with self._lock:
            things = [t for held in self._held.values() for t in held.values()]
            self._held.clear()
            self._children.clear()
            self._parents.clear()
            self._groups.clear()
            self._group_of.clear()
        _close_each(things)
        return len(things)

    def owners(self) -> set[str]:
        """Every owner that holds something or someone."""
        with self._lock:
            return set(self._held) | {o for o, kids in self._children.items() if kids}

    def roots(self) -> set[str]:
        """The owners nobody else holds: the ones a :class:`Reaper` answers for."""
        with self._lock:
            return {o for o in self.owners() if not self._parents.get(o)}

    def count(self, owner: str | None = None, group: str | None = None) -> int:
        """How many resources are open: ``owner``'s own, a ``group``'s, or all."""
        with self._lock:
            if group is not None:
                return len(self._groups.get(group, {}))
            if owner is not None:
                return len(self._held.get(owner, {}))
            return sum(len(h) for h in self._held.values())


def _close_each(things: list[Closeable]) -> None:
    # Outside the lock: closing a stdio server can take seconds, and others keep working.
    for thing in things:
        try:
            thing.close()
        except Exception:  # one that fails to close must not keep the others open
            log.warning("could not close %r", thing, exc_info=True)


def _close_in_background(things: list[Closeable]) -> None:
    if things:
        threading.Thread(
            target=_close_each, args=(things,), name="flowdebug-close", daemon=True
        ).start()


# One registry per process: whatever a handler starts is found here by its owner's id.
MCP_CLIENTS = 32  # MCP connections open at once in this process (stdio: a process each)
RESOURCES = Resources(limits={"mcp": MCP_CLIENTS})
atexit.register(RESOURCES.close_all)


class Reaper:
    """A daemon thread that closes the top-level owners ``keep`` no longer vouches for.

    Every ``interval`` seconds each root owner of ``resources`` is asked about; one that
    ``keep`` refuses ``grace`` sweeps in a row is closed (the grace covers an owner made a
    moment before its holder linked it). ``keep`` raising skips that sweep.
    """

    def __init__(
        self,
        keep: Callable[[str], bool],
        resources: Resources = RESOURCES,
        interval: float = 5.0,
        grace: int = 2,
    ):
        self.keep = keep
        self.resources = resources
        self.interval = interval
        self.grace = grace
        self._missed: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def sweep(self) -> list[str]:
        """One pass; returns the owners closed."""
        closed = []
        roots = self.resources.roots()
        try:
            gone = {o for o in roots if not self.keep(o)}
        except Exception:  # the app's runtime may be starting or stopping: try again later
            log.debug("reaper: keep() failed; sweep skipped", exc_info=True)
            return []
        self._missed = {o: self._missed.get(o, 0) + 1 for o in gone}
        for owner, missed in list(self._missed.items()):
            if missed >= self.grace:
                self.resources.close(owner)
                del self._missed[owner]
                closed.append(owner)
        return closed

    def start(self) -> Reaper:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="flowdebug-reaper", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            with contextlib.suppress(Exception):  # a sweep's failure must not end the thread
                self.sweep()
