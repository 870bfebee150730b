"""Failure injection: the catalog of faults, where each applies, and the CLI spec parser.

A :class:`Fault` has a ``kind`` from :data:`CATALOG`, a target (``call_id``, ``tool``, the
``nth`` call of the session counting from 1, or, with none of them, every call) and
``params``. Faults act in one of three phases of the cycle:

- ``request``: :func:`apply_request_faults` rewrites the model's turn before execution;
- ``execution``: the runtime asks :func:`execution_fault` for each call it runs;
- ``protocol``: :func:`apply_protocol_faults` rewrites the tool message after execution.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from jsonschema import Draft202012Validator
from pydantic import Field, JsonValue, ValidationError, model_validator

from flowdebug.errors import UsageError
from flowdebug.model import Message, Text, Tool, ToolCall, ToolResult, _Model

Phase = Literal["request", "execution", "protocol"]
FaultKind = Literal[
    "exception",
    "timeout",
    "permission_denied",
    "rate_limited",
    "slow",
    "empty_result",
    "oversized_result",
    "unknown_tool",
    "invalid_arguments",
    "malformed_json",
    "duplicate_call_id",
    "missing_call_id",
    "drop_result",
    "reorder_results",
    "wrong_result_id",
    "text_before_results",
]


@dataclass(frozen=True)
class Param:
    name: str
    type: Callable[[Any], Any]
    default: Any
    help: str


@dataclass(frozen=True)
class FaultInfo:
    """One catalog entry: its phase, a one-line description for the UI and its params."""

    kind: FaultKind
    phase: Phase
    description: str
    params: tuple[Param, ...] = ()


CATALOG: dict[str, FaultInfo] = {
    f.kind: f
    for f in (
        FaultInfo(
            "exception",
            "execution",
            "The handler raises an exception instead of returning.",
            (Param("message", str, "injected failure", "the exception message"),),
        ),
        FaultInfo("timeout", "execution", "The handler never answers within the tool's timeout."),
        FaultInfo(
            "permission_denied",
            "execution",
            "The tool refuses the call: permission denied.",
            (Param("message", str, "permission denied", "the refusal text"),),
        ),
        FaultInfo(
            "rate_limited",
            "execution",
            "The tool's backend answers 'rate limited, retry later'.",
            (Param("retry_after", float, 30.0, "seconds the error tells the model to wait"),),
        ),
        FaultInfo(
            "slow",
            "execution",
            "The handler waits before returning its real result (may hit the timeout).",
            (Param("delay", float, 2.0, "seconds to wait"),),
        ),
        FaultInfo("empty_result", "execution", "The tool succeeds with an empty result."),
        FaultInfo(
            "oversized_result",
            "execution",
            "The tool returns a huge result; the runtime's max_result_chars truncates it.",
            (Param("chars", int, 100_000, "length of the result"),),
        ),
        FaultInfo(
            "unknown_tool",
            "request",
            "The model calls a tool name that does not exist (a near miss of the real one).",
            (Param("name", str, None, "the wrong name (default: a near miss)"),),
        ),
        FaultInfo(
            "invalid_arguments",
            "request",
            "The model sends arguments that fail the tool's schema.",
        ),
        FaultInfo(
            "malformed_json",
            "request",
            "The model sends arguments that are not valid JSON.",
        ),
        FaultInfo(
            "duplicate_call_id",
            "request",
            "Two calls of one turn share an id.",
        ),
        FaultInfo("missing_call_id", "request", "The model's call has no id."),
        FaultInfo("drop_result", "protocol", "A call's result is left out of the history."),
        FaultInfo(
            "reorder_results",
            "protocol",
            "The results are appended in reverse call order.",
        ),
        FaultInfo(
            "wrong_result_id",
            "protocol",
            "A result carries an id that matches no call.",
            (Param("id", str, None, "the wrong id (default: wrong_<call id>)"),),
        ),
        FaultInfo(
            "text_before_results",
            "protocol",
            "A user text message comes before the tool results (vendors that want the results "
            "first in the turn reject this).",
            (Param("text", str, "Here are the results.", "the text"),),
        ),
    )
}


class Fault(_Model):
    """One injected failure. Set at most one of ``call_id``, ``tool``, ``nth``; none means
    every call."""

    kind: FaultKind
    call_id: str | None = None
    tool: str | None = None
    nth: int | None = None
    params: dict[str, JsonValue] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> Fault:
        targets = [t for t in (self.call_id, self.tool, self.nth) if t is not None]
        if len(targets) > 1:
            raise ValueError("a fault targets one of call_id, tool or nth, not several")
        if self.nth is not None and self.nth < 1:
            raise ValueError("nth counts calls from 1")
        known = {p.name: p for p in self.info.params}
        for key, value in self.params.items():
            if key not in known:
                valid = ", ".join(known) or "none"
                raise ValueError(f"{self.kind} has no param {key!r} (params: {valid})")
            try:
                known[key].type(value)
            except (TypeError, ValueError):
                raise ValueError(f"{self.kind} param {key}={value!r} is not a number") from None
        return self

    @property
    def info(self) -> FaultInfo:
        return CATALOG[self.kind]

    @property
    def phase(self) -> Phase:
        return self.info.phase

    def param(self, name: str) -> Any:
        """The param's value (converted to its type) or its default."""
        spec = next(p for p in self.info.params if p.name == name)
        value = self.params.get(name)
        return spec.default if value is None else spec.type(value)

    def targets(self, call_id: str, tool: str, number: int) -> bool:
        """Whether this fault applies to the ``number``-th call of the session."""
        if self.call_id is not None:
            return call_id == self.call_id
        if self.tool is not None:
            return tool == self.tool
        if self.nth is not None:
            return number == self.nth
        return True

    @property
    def spec(self) -> str:
        """The CLI spelling, inverse of :func:`parse_fault`."""
        text = self.kind
        if self.call_id is not None:
            text += f"@id={self.call_id}"
        elif self.tool is not None:
            text += f"@{self.tool}"
        elif self.nth is not None:
            text += f"@#{self.nth}"
        if self.params:
            text += ":" + ",".join(f"{k}={v}" for k, v in self.params.items())
        return text


_SPEC = re.compile(r"^(?P<kind>[A-Za-z_]+)(?:@(?P<target>[^:]+))?(?::(?P<params>.*))?$")


def parse_fault(spec: str) -> Fault:
    """Parse ``KIND[@TARGET][:key=value,...]``; TARGET is a tool name, ``#N`` (the nth call
    of the session) or ``id=CALL_ID``. Raises UsageError naming the problem."""
    m = _SPEC.match(spec.strip())
    if not m:
        raise UsageError(f"bad fault {spec!r}: expected KIND[@TARGET][:key=value,...]")
    kind = m["kind"]
    if kind not in CATALOG:
        near = difflib.get_close_matches(kind, CATALOG, n=1)
        hint = f" (did you mean {near[0]}?)" if near else ""
        raise UsageError(f"unknown fault kind {kind!r}{hint}; valid kinds: {', '.join(CATALOG)}")
    fields: dict[str, Any] = {"kind": kind}
    target = m["target"]
    if target is not None:
        if target.startswith("#"):
            if not target[1:].isdigit():
                raise UsageError(f"bad fault target {target!r}: #N needs a call number, e.g. #2")
            fields["nth"] = int(target[1:])
        elif target.startswith("id="):
            fields["call_id"] = target[3:]
        else:
            fields["tool"] = target
    params: dict[str, Any] = {}
    for item in filter(None, (m["params"] or "").split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise UsageError(f"bad fault param {item!r} in {spec!r}: expected key=value")
        params[key.strip()] = value.strip()
    fields["params"] = params
    try:
        return Fault(**fields)
    except ValidationError as exc:
        reason = "; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors())
        raise UsageError(f"bad fault {spec!r}: {reason}") from None


def first_call_number(messages: Sequence[Message]) -> int:
    """The session number of the next call: one more than the calls in ``messages``."""
    return 1 + sum(len(m.tool_calls) for m in messages)


def execution_fault(faults: Sequence[Fault], call: ToolCall, number: int) -> Fault | None:
    """The first execution fault that targets ``call`` (the ``number``-th of the session)."""
    return next(
        (f for f in faults if f.phase == "execution" and f.targets(call.id, call.name, number)),
        None,
    )


def apply_request_faults(
    message: Message,
    faults: Sequence[Fault],
    first_call_number: int = 1,
    tools: Sequence[Tool] = (),
) -> Message:
    """The model's turn with the request faults applied to the calls they target.

    ``tools`` lets ``invalid_arguments`` break the call's schema for certain; without them it
    changes the type of an argument.
    """
    schemas = {t.name: t.parameters for t in tools}
    parts = list(message.parts)
    for fault in (f for f in faults if f.phase == "request"):
        calls = [(i, p) for i, p in enumerate(parts) if isinstance(p, ToolCall)]
        hit = [
            (i, c)
            for n, (i, c) in enumerate(calls)
            if fault.targets(c.id, c.name, first_call_number + n)
        ]
        if fault.kind == "duplicate_call_id":
            parts = _duplicate_ids(parts, calls, {i for i, _ in hit})
            continue
        for i, call in hit:
            parts[i] = _break_call(fault, call, schemas.get(call.name))
    return message.model_copy(update={"parts": parts})


def _break_call(fault: Fault, call: ToolCall, schema: dict[str, Any] | None) -> ToolCall:
    match fault.kind:
        case "unknown_tool":
            name = fault.param("name") or near_miss(call.name)
            return call.model_copy(update={"name": name})
        case "invalid_arguments":
            return call.model_copy(update={"arguments": invalid_arguments(call.arguments, schema)})
        case "malformed_json":
            raw = json.dumps(call.arguments, ensure_ascii=False)[:-1]  # the closing brace lost
            return call.model_copy(update={"arguments": {}, "raw_arguments": raw})
        case "missing_call_id":
            return call.model_copy(update={"id": ""})
        case _:
            raise AssertionError(f"{fault.kind} is not a request fault")


def _duplicate_ids(parts: list[Any], calls: list[tuple[int, ToolCall]], hit: set[int]) -> list[Any]:
    """Targeted calls after the first take the first call's id; when only the first call
    is targeted, it is sent twice."""
    if not calls or not hit:
        return parts
    first_index, first = calls[0]
    later = hit - {first_index}
    if not later:
        return [*parts[: first_index + 1], first, *parts[first_index + 1 :]]
    return [p.model_copy(update={"id": first.id}) if i in later else p for i, p in enumerate(parts)]


def near_miss(name: str) -> str:
    """A plausible wrong spelling of a tool name (a model pluralising or dropping an s)."""
    return name[:-1] if name.endswith("s") else name + "s"


def invalid_arguments(arguments: dict[str, Any], schema: dict[str, Any] | None) -> dict[str, Any]:
    """Arguments that fail ``schema``: drop a required one, else give one the wrong type."""
    candidates: list[dict[str, Any]] = []
    schema = schema or {}
    props = schema.get("properties") or {}
    for name in schema.get("required") or []:
        candidates.append({k: v for k, v in arguments.items() if k != name})
    for name in [*arguments, *props]:
        candidates.append({**arguments, name: _wrong_type(arguments.get(name), props.get(name))})
    if schema:
        validator = Draft202012Validator(schema)
        for args in candidates:
            if not validator.is_valid(args):
                return args
    return candidates[0] if candidates else {"unexpected": True}


def _wrong_type(value: Any, prop: Any) -> Any:
    declared = prop.get("type") if isinstance(prop, dict) else None
    if isinstance(value, str) or declared == "string" or (prop and "enum" in prop):
        return 12345
    return "not-a-" + (declared if isinstance(declared, str) else "value")


def apply_protocol_faults(
    tool_message: Message, faults: Sequence[Fault], first_call_number: int = 1
) -> list[Message]:
    """The messages to append instead of ``tool_message`` (results in call order) under the
    protocol faults; ``text_before_results`` puts a user text message first."""
    # (session call number, part): results arrive in call order, so position gives the number
    items = [(first_call_number + n, p) for n, p in enumerate(tool_message.parts)]
    before: list[Message] = []
    for fault in (f for f in faults if f.phase == "protocol"):
        hit = [
            i
            for i, (number, r) in enumerate(items)
            if isinstance(r, ToolResult) and fault.targets(r.call_id, r.name or "", number)
        ]
        match fault.kind:
            case "drop_result":
                items = [item for i, item in enumerate(items) if i not in hit]
            case "reorder_results":
                reordered = list(items)
                for i, j in zip(hit, reversed(hit), strict=True):
                    reordered[i] = items[j]
                items = reordered
            case "wrong_result_id":
                for i in hit:
                    number, r = items[i]
                    wrong = fault.param("id") or f"wrong_{r.call_id}"
                    items[i] = (number, r.model_copy(update={"call_id": wrong}))
            case "text_before_results":
                if hit:
                    before.append(Message(role="user", parts=[Text(text=fault.param("text"))]))
            case _:
                raise AssertionError(f"{fault.kind} is not a protocol fault")
    return [*before, tool_message.model_copy(update={"parts": [p for _, p in items]})]
