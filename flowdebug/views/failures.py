"""The Failures page's content, computed without Streamlit: build a fault from the page's
fields, and preview what a set of faults does to a scenario in every encoding.

A preview replays the scenario from the start on a separate headless session with the faults
on (stopping where a run stops: the end, the round cap, or a call waiting for approval — no
call is approved or rejected for the person), finds the first message the faults changed
against the same replay without faults, and encodes the request that carries that message —
the continuation with the faulted results — in each protocol, with the linter's findings per
vendor on that history: what each vendor would reject, and with which message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pydantic import ValidationError

from flowdebug import protocols as registry
from flowdebug.engine.execution.faults import CATALOG, Fault
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.session_state import SessionState
from flowdebug.errors import FlowdebugError, UsageError
from flowdebug.lint.base.findings import Finding
from flowdebug.lint.linter import lint_conversation
from flowdebug.model import Conversation, Message
from flowdebug.protocols.base import ConversionWarning
from flowdebug.protocols.models import choosing
from flowdebug.render.text import pretty, text_diff
from flowdebug.views.protocols import VerdictName, verdict

Target = Literal["tool", "call", "nth", "all"]
TARGETS: dict[str, str] = {
    "tool": "every call of a tool",
    "call": "one call, by id",
    "nth": "the nth call of the session",
    "all": "every call",
}


# -- building faults ---------------------------------------------------------------------------


def catalog_rows() -> list[dict[str, str]]:
    """The fault catalog as table rows: kind, phase, description, params."""
    return [
        {
            "kind": info.kind,
            "phase": info.phase,
            "description": info.description,
            "params": "; ".join(f"{p.name} (default {p.default!r}): {p.help}" for p in info.params)
            or "—",
        }
        for info in CATALOG.values()
    ]


def build_fault(
    kind: str,
    target: Target,
    value: str | int | None = None,
    params: Mapping[str, Any] | None = None,
) -> Fault:
    """A fault from the page's fields; blank params take their defaults.

    Raises UsageError saying what is wrong (an unknown kind, a missing target, a param that is
    not a number).
    """
    info = CATALOG.get(kind)
    if info is None:
        raise UsageError(f"unknown fault kind {kind!r}; valid kinds: {', '.join(CATALOG)}")
    fields: dict[str, Any] = {"kind": kind}
    match target:
        case "tool" | "call":
            if value is None or not str(value).strip():
                what = "a tool" if target == "tool" else "a call id"
                raise UsageError(f"{kind}: pick {what} to target")
            fields["tool" if target == "tool" else "call_id"] = str(value).strip()
        case "nth":
            try:
                number = int(value) if value is not None else 0
            except (TypeError, ValueError):
                number = 0
            if number < 1:
                raise UsageError(f"{kind}: the nth call counts from 1 (got {value!r})")
            fields["nth"] = number
        case "all":
            pass
        case _:
            raise UsageError(f"unknown target {target!r}; choose one of: {', '.join(TARGETS)}")
    clean: dict[str, Any] = {}
    for p in info.params:
        raw = (params or {}).get(p.name)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            continue
        try:
            clean[p.name] = p.type(raw.strip() if isinstance(raw, str) else raw)
        except (TypeError, ValueError):
            raise UsageError(f"{kind}: {p.name} must be a {p.type.__name__}, not {raw!r}") from None
    fields["params"] = clean
    try:
        return Fault(**fields)
    except ValidationError as e:
        reason = "; ".join(x["msg"].removeprefix("Value error, ") for x in e.errors())
        raise UsageError(f"{kind}: {reason}") from None


def call_choices(conv: Conversation) -> dict[str, str]:
    """The history's calls, id → "call_1 · get_weather(location=Paris)", for a picker."""
    out: dict[str, str] = {}
    for m in conv.messages:
        for c in m.tool_calls:
            if c.id and c.id not in out:
                args = ", ".join(f"{k}={v}" for k, v in c.arguments.items())
                out[c.id] = f"{c.id} · {c.name}({args})"
    return out


# -- the preview --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorResult:
    """One error result the replay produced (a dropped one included)."""

    call_id: str
    tool: str
    error_type: str
    text: str
    fault: str | None  # the execution fault's spec, when one made it


@dataclass(frozen=True)
class Effect:
    """The faulted continuation in one protocol, and what that vendor says about it."""

    protocol: str
    title: str
    label: str  # "request 2"
    payload: Any
    text: str  # pretty JSON
    warnings: tuple[ConversionWarning, ...]
    findings: tuple[Finding, ...]  # history findings for this vendor (and neutral ones)
    verdict: VerdictName
    diff: str  # against the same request replayed without the faults

    @property
    def rejections(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.level == "error")


@dataclass(frozen=True)
class Preview:
    """What the faults do to a replay of the scenario."""

    scenario: str
    faults: tuple[Fault, ...]
    status: str  # the replay's end: finished, halted, awaiting_approval, ready (or "error")
    status_text: str
    errors: tuple[ErrorResult, ...]
    changed_message: int | None  # the first message that differs from the replay without faults
    turn: int | None  # the model turn whose request carries it
    sent: bool  # False when the replay stopped before sending that request
    effects: dict[str, Effect]
    conversation: Conversation  # the faulted replay's history

    @property
    def error_types(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(e.error_type for e in self.errors))

    @property
    def changed(self) -> bool:
        return self.changed_message is not None


def preview(
    scenario_name_or_state: str | SessionState,
    faults: Sequence[Fault],
    protocols: Sequence[str] | None = None,
    models: Mapping[str, str] | None = None,
) -> Preview:
    """Replay the scenario with ``faults`` and show their effect in each protocol named (all
    of them by default), each request naming ``models``' choice for its vendor (a session
    state's own model per vendor when none is given; protocols/models.py). A session state
    stands for its scenario; one without a scenario cannot be replayed (UsageError). Replays
    are cached per (scenario, faults)."""
    if isinstance(scenario_name_or_state, SessionState):
        if models is None:
            models = scenario_name_or_state.models
        name = scenario_name_or_state.scenario
        if not name:
            raise UsageError(
                "this session has no scenario to replay: load one on the Debugger page"
            )
    else:
        name = scenario_name_or_state
    names = list(protocols) if protocols is not None else list(registry.PROTOCOLS)
    for n in names:
        registry.get(n)  # an unknown name raises UsageError
    key = tuple(f.model_dump_json() for f in faults)
    state, failure = _replay(name, key)
    baseline, _ = _replay(name, ())
    messages = state.conversation.messages
    changed = _first_change(baseline.conversation.messages, messages)
    effects: dict[str, Effect] = {}
    turn, sent = None, False
    if changed is not None:
        end = next(
            (j for j in range(changed + 1, len(messages)) if messages[j].role == "assistant"), None
        )
        sent = end is not None
        request = state.conversation.model_copy(update={"messages": messages[:end]})
        turn = _turns(messages[: len(request.messages)]) + 1
        before = _request_of_turn(baseline.conversation, turn)
        with choosing(models):
            effects = {n: _effect(n, request, before, turn) for n in names}
    return Preview(
        scenario=name,
        faults=tuple(faults),
        status="error" if failure else state.status,
        status_text=failure or state.status_text,
        errors=_errors(state),
        changed_message=changed,
        turn=turn,
        sent=sent,
        effects=effects,
        conversation=state.conversation,
    )


@lru_cache(maxsize=32)
def _replay(scenario: str, faults: tuple[str, ...]) -> tuple[SessionState, str | None]:
    session = Session.from_scenario(scenario)
    session.set_faults([Fault.model_validate_json(f) for f in faults])
    try:
        session.run()
    except FlowdebugError as e:  # a player or tool that gives up: show how far it got
        return session.state, f"the replay stopped: {e}"
    return session.state, None


def clear_cache() -> None:
    _replay.cache_clear()


def _first_change(before: Sequence[Message], after: Sequence[Message]) -> int | None:
    for i, (a, b) in enumerate(zip(before, after, strict=False)):
        if a != b:
            return i
    return None if len(before) == len(after) else min(len(before), len(after))


def _turns(messages: Sequence[Message]) -> int:
    return sum(m.role == "assistant" for m in messages)


def _request_of_turn(conv: Conversation, turn: int) -> Conversation | None:
    """The history the ``turn``-th model turn was asked with (None: the run never got there;
    the whole history when that turn is the next one)."""
    seen = 0
    for j, m in enumerate(conv.messages):
        if m.role == "assistant":
            seen += 1
            if seen == turn:
                return conv.model_copy(update={"messages": conv.messages[:j]})
    return conv if seen == turn - 1 else None


def _effect(protocol: str, request: Conversation, before: Conversation | None, turn: int) -> Effect:
    codec = registry.get(protocol)
    encoded = codec.encode_request(request)
    text = pretty(encoded.value)
    diff = ""
    if before is not None:
        diff = text_diff(
            pretty(codec.encode_request(before).value),
            text,
            f"request {turn} without faults",
            f"request {turn} with faults",
        )
    # Tool declaration findings are the same with or without faults: only the history's.
    findings = tuple(
        f for f in lint_conversation(request, protocol) if not f.path.startswith("tools")
    )
    return Effect(
        protocol,
        codec.title,
        f"request {turn}",
        encoded.value,
        text,
        tuple(encoded.warnings),
        findings,
        verdict(findings),
        diff,
    )


def _errors(state: SessionState) -> tuple[ErrorResult, ...]:
    return tuple(
        ErrorResult(
            ex.call.id, ex.call.name, ex.result.error_type or "error", ex.result.text, ex.fault
        )
        for ex in state.executions
        if ex.result.is_error
    )
