"""The Protocols page's content, computed without Streamlit: the payloads of the current step
in one protocol, what changed since the previous step, the conversion warnings, the linter's
verdict, and what a live player really put on the wire.

Long histories stay fast: only the current turn is encoded (never every turn), and every
encoding, lint and diff is cached per (protocol, conversation fingerprint), so a step computes
only the new state's payloads — the previous state's are the ones shown one step ago.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from flowdebug import protocols
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.session_state import SessionState
from flowdebug.lint.base.findings import Finding
from flowdebug.lint.linter import lint_conversation
from flowdebug.model import Conversation, Message, ModelResponse
from flowdebug.protocols.base import ConversionWarning
from flowdebug.protocols.models import choosing
from flowdebug.render.text import (
    changed_paths,
    event_stream_text,
    pretty,
    sse_text,
    text_diff,
)

Kind = Literal["request", "response", "stream"]
KINDS: tuple[Kind, ...] = ("request", "response", "stream")
Status = Literal["unchanged", "changed", "new", "gone", "first"]
VerdictName = Literal["accepted", "warnings", "rejected"]
VERDICT_ICONS: dict[str, str] = {"accepted": "✅", "warnings": "⚠️", "rejected": "⛔"}
VERDICT_COLORS: dict[str, str] = {"accepted": "green", "warnings": "orange", "rejected": "red"}
LEVEL_ICONS: dict[str, str] = {"error": "⛔", "warning": "⚠️", "info": "ℹ️"}


@dataclass(frozen=True)
class PayloadView:
    """One payload of the current step: its JSON, its display text and what it lost."""

    label: str  # "request 2"
    kind: Kind
    value: Any
    text: str  # requests and responses: pretty JSON; streams: one `data:` line per event
    warnings: tuple[ConversionWarning, ...] = ()


@dataclass(frozen=True)
class Change:
    """How one payload differs from the same payload one step earlier."""

    status: Status
    diff: str = ""  # a unified diff of the two texts ('' when unchanged or new)
    paths: tuple[str, ...] = ()  # "$.messages[3] added", a dozen at most, then "… N more"
    before: str | None = None  # the previous payload's label


@dataclass(frozen=True)
class Wire:
    """A live player's real exchange for this turn, beside the codec's own encoding."""

    step: int
    request: Any
    response: Any
    stream: list[Any] | None
    status: int | None
    url: str | None
    differences: tuple[str, ...]  # what the SDK changed in the codec's body, one line each
    diff: str  # the codec's request (as shown) against the request on the wire


@dataclass(frozen=True)
class StepView:
    """Everything the Protocols page shows for one protocol at the current step."""

    protocol: str
    title: str
    turn: int
    pending: bool  # the request is not answered yet (no response in this step)
    payloads: dict[str, PayloadView]
    diffs: dict[str, Change]
    warnings: tuple[ConversionWarning, ...]
    verdict: VerdictName
    findings: tuple[Finding, ...]
    wire: Wire | None = None
    counts: dict[str, int] = field(default_factory=dict)  # findings per level

    @property
    def icon(self) -> str:
        return VERDICT_ICONS[self.verdict]

    def warnings_apart(self) -> dict[str, tuple[ConversionWarning, ...]]:
        """The conversion warnings of the request and of the response (with its stream's)
        apart: a response's filled-in model is not the request's (issue 30)."""
        out: dict[str, dict[tuple[str, str, str], ConversionWarning]] = {
            "request": {},
            "response": {},
        }
        for p in self.payloads.values():
            side = out["request" if p.kind == "request" else "response"]
            for w in p.warnings:
                side.setdefault((w.code, w.path, w.message), w)
        return {kind: tuple(ws.values()) for kind, ws in out.items()}


def verdict_badge(name: str) -> str:
    """Markdown for a verdict: colored, so it reads even where emoji do not render."""
    return f":{VERDICT_COLORS[name]}[{VERDICT_ICONS[name]} **{name}**]"


# -- fingerprints and caching --------------------------------------------------------------

_FINGERPRINTS: dict[int, tuple[weakref.ref[Conversation], str]] = {}


def fingerprint(conv: Conversation) -> str:
    """A hash of the conversation's JSON, memoised per object (conversations are frozen and
    snapshots share them, so each is dumped once)."""
    key = id(conv)
    known = _FINGERPRINTS.get(key)
    if known is not None and known[0]() is conv:
        return known[1]
    digest = hashlib.sha1(conv.model_dump_json().encode()).hexdigest()
    _FINGERPRINTS[key] = (weakref.ref(conv, lambda _r, k=key: _FINGERPRINTS.pop(k, None)), digest)
    return digest


class _Keyed:
    """A conversation that hashes and compares by its fingerprint (an lru_cache key), with
    the session's model per vendor it is encoded with."""

    __slots__ = ("conv", "fp", "models")

    def __init__(self, conv: Conversation, models: Mapping[str, str] | None = None):
        self.conv = conv
        self.models = dict(models or {})
        self.fp = fingerprint(conv) + (json.dumps(self.models, sort_keys=True) if models else "")

    def __hash__(self) -> int:
        return hash(self.fp)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Keyed) and other.fp == self.fp


def current_turn(conv: Conversation) -> tuple[int, Conversation, ModelResponse | None]:
    """(turn number, request history, response or None): the last model turn when the
    history ends with the model, else the request about to be sent. Only this one turn is
    sliced out, whatever the history's length."""
    messages = conv.messages
    n_turns = sum(1 for m in messages if m.role == "assistant")
    if messages and messages[-1].role == "assistant":
        request = conv.model_copy(update={"messages": messages[:-1]})
        return n_turns, request, _response(messages[-1])
    return n_turns + 1, conv, None


def _response(message: Message) -> ModelResponse:
    stop = "tool_use" if message.tool_calls else "end_turn"
    # The message is validated already; constructing skips re-validating it (and keeps
    # working when a dev server has reloaded flowdebug.model under a live session).
    return ModelResponse.model_construct(message=message, stop_reason=stop)


def last_response(conv: Conversation) -> ModelResponse | None:
    """The model's latest turn, wherever it is in the history (None before the first)."""
    last = next((m for m in reversed(conv.messages) if m.role == "assistant"), None)
    return None if last is None else _response(last)


def previous_conversation(state: SessionState) -> Conversation | None:
    """The history as it was before the last step, read from that step's trace events: a
    request added the model's turn, an execution its results, the other phases nothing.
    None when the events do not say (an edit since, or no step yet)."""
    kinds = set() if state.edited else {e.kind for e in state.events if e.step == state.step}
    messages = state.conversation.messages
    if not kinds or not messages:
        return None
    if kinds & {"tool_call", "final_answer"}:
        if messages[-1].role != "assistant":
            return None
        return state.conversation.model_copy(update={"messages": messages[:-1]})
    if "result" in kinds:
        keep = len(messages)
        while keep and messages[keep - 1].role != "assistant":
            keep -= 1
        return state.conversation.model_copy(update={"messages": messages[:keep]})
    return state.conversation


# Two states (this step and the previous) per protocol and browser session; a 1,000-message
# request is ~300 KB of text, so the caches stay small.
@lru_cache(maxsize=48)
def _payloads(protocol: str, key: _Keyed) -> tuple[int, bool, tuple[PayloadView, ...]]:
    with choosing(key.models):
        return _encoded(protocol, key.conv)


def _encoded(protocol: str, conv: Conversation) -> tuple[int, bool, tuple[PayloadView, ...]]:
    codec = protocols.get(protocol)
    number, request, response = current_turn(conv)
    req = codec.encode_request(request)
    out = [
        PayloadView(
            f"request {number}", "request", req.value, pretty(req.value), tuple(req.warnings)
        )
    ]
    if response is not None:
        out += _response_views(codec, response, number)
    elif (earlier := last_response(request)) is not None:
        # While the next request waits, the model's last turn stays in view: its calls are
        # the ones just run, and its results are at the end of the next request.
        out += _response_views(codec, earlier, number - 1)
    return number, response is None, tuple(out)


def _response_views(codec: Any, response: ModelResponse, number: int) -> list[PayloadView]:
    resp = codec.encode_response(response)
    events = codec.encode_stream(response)
    return [
        PayloadView(
            f"response {number}", "response", resp.value, pretty(resp.value), tuple(resp.warnings)
        ),
        PayloadView(
            f"stream {number}",
            "stream",
            events.value,
            event_stream_text(events.value)
            if codec.facts.stream_framing == "event-stream"
            else sse_text(events.value),
            tuple(events.warnings),
        ),
    ]


@lru_cache(maxsize=48)
def _findings(protocol: str, key: _Keyed) -> tuple[Finding, ...]:
    return tuple(lint_conversation(key.conv, protocol))


@lru_cache(maxsize=48)
def _changes(protocol: str, before: _Keyed | None, after: _Keyed) -> dict[str, Change]:
    _, _, now = _payloads(protocol, after)
    if before is None:
        return {p.kind: Change("first") for p in now}
    if before == after:
        return {p.kind: Change("unchanged", before=p.label) for p in now}
    _, _, then = _payloads(protocol, before)
    old = {p.kind: p for p in then}
    out: dict[str, Change] = {}
    for p in now:
        prev = old.get(p.kind)
        if prev is None:
            out[p.kind] = Change("new")
        elif prev.text == p.text:
            out[p.kind] = Change("unchanged", before=prev.label)
        else:
            diff = text_diff(
                prev.text, p.text, f"{prev.label} (previous step)", f"{p.label} (this step)"
            )
            out[p.kind] = Change(
                "changed", diff, tuple(changed_paths(prev.value, p.value)), prev.label
            )
    for kind, prev in old.items():
        if kind not in out:
            out[kind] = Change("gone", before=prev.label)
    return out


def clear_cache() -> None:
    """Forget every cached encoding, lint and diff (tests, benchmarks)."""
    for f in (_payloads, _findings, _changes):
        f.cache_clear()


# -- the view ---------------------------------------------------------------------------------


def step_view(
    session_or_state: Session | SessionState,
    protocol: str,
    previous_state: SessionState | None = None,
) -> StepView:
    """The current step in ``protocol``: payloads, changes since ``previous_state`` (usually
    ``views.previous_state(session)``), conversion warnings, lint verdict and the wire."""
    state = session_or_state.state if isinstance(session_or_state, Session) else session_or_state
    key = _Keyed(state.conversation, state.models)
    number, pending, shown = _payloads(protocol, key)
    before = (
        _Keyed(previous_state.conversation, state.models) if previous_state is not None else None
    )
    findings = _findings(protocol, key)
    counts = {lvl: sum(f.level == lvl for f in findings) for lvl in ("error", "warning", "info")}
    seen: dict[tuple[str, str, str], ConversionWarning] = {}
    for p in shown:
        for w in p.warnings:
            seen.setdefault((w.code, w.path, w.message), w)
    payloads = {p.kind: p for p in shown}
    return StepView(
        protocol=protocol,
        title=protocols.get(protocol).title,
        turn=number,
        pending=pending,
        payloads=payloads,
        diffs=_changes(protocol, before, key),
        warnings=tuple(seen.values()),
        verdict=verdict(findings),
        findings=findings,
        wire=None if pending else wire_for(state, protocol, payloads["request"]),
        counts=counts,
    )


def step_views(session: Session, names: list[str]) -> dict[str, StepView]:
    """``step_view`` for each protocol named, against the session's previous state."""
    if session.undo_stack:
        previous: SessionState | None = session.undo_stack[-1]
    else:  # reopened from the store (or imported): the trace says what the last step did
        before = previous_conversation(session.state)
        previous = (
            None if before is None else session.state.model_copy(update={"conversation": before})
        )
    return {n: step_view(session, n, previous) for n in names}


def verdict(findings: tuple[Finding, ...] | list[Finding]) -> VerdictName:
    """rejected: the vendor refuses the history; warnings: it goes through with something
    worth fixing; accepted: nothing, or only information."""
    levels = {f.level for f in findings}
    if "error" in levels:
        return "rejected"
    if "warning" in levels:
        return "warnings"
    return "accepted"


# -- the wire ------------------------------------------------------------------------------------


def wire_for(state: SessionState, protocol: str, codec_request: PayloadView) -> Wire | None:
    """The live exchange that produced the history's last model turn, when a live player of
    ``protocol`` made it (``state.exchanges`` holds one dict per live call, with its step)."""
    if not state.exchanges or not state.conversation.messages:
        return None
    if state.conversation.messages[-1].role != "assistant":
        return None
    steps = [e.step for e in state.events if e.phase == "request"]
    step = steps[-1] if steps else state.step
    found = next(
        (
            x
            for x in reversed(state.exchanges)
            if x.get("protocol") == protocol and x.get("step") == step
        ),
        None,
    )
    if found is None:
        return None
    request = found.get("request")
    stream = found.get("stream_events")
    return Wire(
        step=step,
        request=request,
        response=found.get("response"),
        stream=stream if isinstance(stream, list) else None,
        status=found.get("status") if isinstance(found.get("status"), int) else None,
        url=found.get("url") if isinstance(found.get("url"), str) else None,
        differences=tuple(_difference_line(d) for d in found.get("differences") or []),
        diff=text_diff(codec_request.text, pretty(request), "codec encoding", "on the wire"),
    )


def _difference_line(d: Any) -> str:
    """A captured difference, stored as its text or as the Difference's fields."""
    if isinstance(d, dict):
        tag = f"expected ({d.get('reason')})" if d.get("expected") else "DIFFERENT"
        return (
            f"{tag} {d.get('path')}: {d.get('change')} codec={d.get('codec')!r} "
            f"wire={d.get('wire')!r}"
        )
    return str(d)
