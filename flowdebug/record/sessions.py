"""Recorded exchanges become sessions in the store, one per conversation, saved as they come.

A model request joins the recorded conversation whose last request's history (the list its
vendor's facts name, ``history_key``) it extends: the same items first, at least one more
after them (compared as sent, else as decoded when the SDK respelled an earlier item). Any
other request starts a conversation of its own. MCP messages join the
conversation the agent is in (the one that last had traffic); before any model call they start
one, which the first model conversation then takes over, so the tools listed before the first
model call stay with it.

Each conversation is one :class:`~flowdebug.engine.session.session_state.SessionState`: its history
is
the last request's, decoded by the vendor's codec, plus the answer's assistant turn; its trace is
that history replayed (as an import draws it); its exchanges are every recorded exchange, each
with the step of the model turn it produced. The work (decoding, grouping, saving) happens on one
background thread in arrival order, so the proxy never waits for the store.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue, ValidationError

from flowdebug import protocols
from flowdebug.engine.execution.canned_handlers import FixedHandler
from flowdebug.engine.execution.handlers import ToolEntry, Toolset
from flowdebug.engine.session.exchange_bodies import last_of, shared
from flowdebug.engine.session.session_state import SessionState, resume
from flowdebug.engine.tracing.replay import replay
from flowdebug.errors import FlowdebugError
from flowdebug.model import Conversation, Message
from flowdebug.protocols.convert import decode
from flowdebug.store.sessions import StaleSession, Store

log = logging.getLogger(__name__)
MCP = "mcp"


def wire_history(protocol: str, request: Any) -> list[Any]:
    """The history items a request carries, as sent (its facts' ``history_key``; a bare text
    input is one item)."""
    key = protocols.facts(protocol).history_key
    value = request.get(key) if isinstance(request, dict) and key else None
    if isinstance(value, list):
        return value
    return [] if value is None else [value]


def extends(history: list[Any], earlier: list[Any]) -> bool:
    """``history`` starts with every item of ``earlier`` and goes on past them."""
    return len(history) > len(earlier) and history[: len(earlier)] == earlier


@dataclass
class Recording:
    """One recorded conversation: its session and what the next request must extend."""

    state: SessionState
    name: str
    protocol: str | None = None
    history: list[Any] = field(default_factory=list)
    request: list[Message] = field(default_factory=list)  # the last request's, decoded
    revision: int = 0
    mcp_messages: list[Any] = field(default_factory=list)


def _toolset(conv: Conversation) -> Toolset:
    # The recorded agent ran its own tools: replayed here, each answers a fixed "ok".
    entries = [ToolEntry(tool=t, handler=FixedHandler(result="ok")) for t in conv.tools]
    try:
        return Toolset(entries=entries)
    except ValidationError:
        return Toolset(entries=[])


def _answered(protocol: str, exchange: dict[str, Any], conv: Conversation) -> Conversation:
    """``conv`` with the exchange's answer appended, when it is a decodable success."""
    status = exchange.get("status")
    if not isinstance(status, int) or not 200 <= status < 300:
        return conv
    codec = protocols.get(protocol)
    events = exchange.get("stream_events")
    try:
        if isinstance(events, list):
            answer = codec.decode_stream(events).value
        else:
            answer = codec.decode_response(exchange.get("response")).value
    except (FlowdebugError, RecursionError, TypeError, KeyError, ValueError):
        return conv
    return conv.model_copy(update={"messages": [*conv.messages, answer.message]})


class Recorder:
    """Keeps recorded exchanges as sessions in ``store``: :meth:`model` and :meth:`mcp` queue
    an exchange and return at once; :meth:`flush` waits until every one queued is saved."""

    def __init__(self, store: Store, name: str | None = None):
        self.store = store
        self.name = name or time.strftime("recording %Y-%m-%d %H:%M")
        self.recordings: list[Recording] = []
        self._current: Recording | None = None
        self._queue: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self._lock = threading.Lock()
        self._open = 0  # exchanges under way: begun, not yet queued
        self._settled = threading.Condition()
        self._thread = threading.Thread(target=self._work, name="flowdebug-recorder", daemon=True)
        self._thread.start()

    # -- the proxy's side ----------------------------------------------------------------

    def begin(self) -> None:
        """An exchange is under way (its :meth:`model` call will come): :meth:`flush` waits
        for it, as an agent may read the whole answer before the proxy has seen its end."""
        with self._settled:
            self._open += 1

    def model(self, exchange: dict[str, JsonValue]) -> None:
        """Record a model exchange (:func:`~flowdebug.record.exchanges.model_exchange`) that
        :meth:`begin` announced."""
        self._queue.put(lambda: self._add_model(exchange))
        with self._settled:
            self._open -= 1
            self._settled.notify_all()

    def mcp(self, exchange: dict[str, JsonValue]) -> None:
        """Record MCP messages (:func:`~flowdebug.record.exchanges.mcp_exchange`)."""
        self._queue.put(lambda: self._add_mcp(exchange))

    def flush(self, timeout: float = 30) -> None:
        """Return once every exchange begun so far is saved."""
        with self._settled:
            self._settled.wait_for(lambda: self._open <= 0, timeout)
        done = threading.Event()
        self._queue.put(done.set)
        done.wait(timeout)

    def close(self) -> None:
        """Save what is queued, then stop the worker."""
        self._queue.put(None)
        self._thread.join(timeout=60)

    def session_ids(self) -> list[str]:
        with self._lock:
            return [r.state.id for r in self.recordings]

    # -- the worker's side ---------------------------------------------------------------

    def _work(self) -> None:
        while (job := self._queue.get()) is not None:
            try:
                job()
            except Exception:  # one bad exchange must not end the recording
                log.exception("record: an exchange could not be recorded")

    def _recording_for(
        self, protocol: str, history: list[Any], messages: list[Message]
    ) -> Recording:
        # The wire's items first; their meaning where an SDK respells what it sent before
        # (a first text input sent bare, then as a message item).
        found = next(
            (
                r
                for r in reversed(self.recordings)
                if r.protocol == protocol
                and (extends(history, r.history) or extends(messages, r.request))
            ),
            None,
        )
        if found is None and self._current is not None and self._current.protocol is None:
            found = self._current  # MCP traffic before the first model call: this conversation's
        if found is None:
            found = self._new()
        return found

    def _new(self) -> Recording:
        count = len(self.recordings)
        name = self.name if not count else f"{self.name} · {count + 1}"
        rec = Recording(SessionState(conversation=Conversation(), toolset=Toolset()), name)
        with self._lock:
            self.recordings.append(rec)
        return rec

    def _add_model(self, exchange: dict[str, Any]) -> None:
        protocol = str(exchange["protocol"])
        request = exchange.get("request")
        history = wire_history(protocol, request)
        try:
            conv: Conversation | None = protocols.get(protocol).decode_request(request).value
        except (FlowdebugError, RecursionError, TypeError, KeyError, ValueError):
            conv = None
        messages = conv.messages if conv is not None else []
        rec = self._recording_for(protocol, history, messages)
        conv = _answered(protocol, exchange, conv or rec.state.conversation)
        self._redraw(rec, conv)
        steps = [e.step for e in rec.state.events if e.phase == "request"]
        step = steps[-1] if steps else rec.state.step
        # Kept sharing the history the exchange before it holds (exchange_bodies).
        kept = shared({**exchange, "step": step}, last_of(rec.state.exchanges, protocol))
        rec.state.exchanges.append(kept)
        rec.protocol, rec.history = protocol, wire_history(protocol, kept.get("request"))
        rec.request = messages
        self._save(rec)

    def _add_mcp(self, exchange: dict[str, Any]) -> None:
        rec = self._current or self._new()
        messages = exchange.get("messages")
        rec.mcp_messages.extend(messages if isinstance(messages, list) else [])
        if rec.protocol is None:
            # No model call yet: the history is what the MCP traffic says.
            try:
                conv = decode(rec.mcp_messages, MCP).as_conversation()
            except (FlowdebugError, RecursionError):
                conv = rec.state.conversation
            self._redraw(rec, conv)
        rec.state.exchanges.append({**exchange, "step": rec.state.step})
        self._save(rec)

    def _redraw(self, rec: Recording, conv: Conversation) -> None:
        state = rec.state
        if conv.tools != state.conversation.tools or not state.toolset.entries:
            state.toolset = _toolset(conv)
        state.conversation = conv
        past = replay(conv)
        state.events, state.step, state.round = past.events, past.step, past.round
        state.next_phase, state.status, state.status_text = resume(conv, past.events)

    def _save(self, rec: Recording) -> None:
        self._current = rec
        try:
            info = self.store.save(rec.state, name=rec.name, expected=rec.revision)
        except StaleSession:
            # Someone stepped or edited the session in the app: theirs stays, the recording
            # goes on in a copy.
            rec.state = rec.state.model_copy(update={"id": uuid.uuid4().hex[:12]})
            rec.name = f"{rec.name} (recording continued)"
            info = self.store.save(rec.state, name=rec.name, expected=0)
        rec.revision = info.revision
