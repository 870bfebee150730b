"""Execution: the third phase of the cycle.

:meth:`Runtime.execute` takes the calls of one model turn and returns a :class:`Batch`: one
:class:`Execution` per call, in call order, each holding the :class:`ToolResult` paired to
its call by id, the timing and the steps taken. For every call it

1. refuses a repeated call id, an unknown tool (with a did-you-mean) and arguments that were
   not valid JSON;
2. asks for approval: a destructive tool (``Tool.destructive``) runs only with an
   :class:`~flowdebug.engine.execution.approval.Approve` or
   :class:`~flowdebug.engine.execution.approval.Edit`
   decision; any call may be edited or rejected;
3. validates the arguments against the tool's JSON Schema (Draft 2020-12,
   :mod:`flowdebug.engine.execution.validation`);
4. applies an execution fault when one targets the call;
5. runs the handler in a daemon thread, abandoned at the tool's timeout (``code`` handlers
   also kill their child process), while the other calls of the batch run concurrently;
6. truncates results longer than ``Policy.max_result_chars``.

Timeouts and the result cap that come with data are clamped to the host's ceilings
(:func:`flowdebug.hosting.limits`).

Every failure is data: an error result with an ``error_type`` (``duplicate_call_id``,
``unknown_tool``, ``malformed_arguments``, ``permission``, ``validation``,
``invalid_schema``, ``timeout``, ``exception``, ``crash``, ``rate_limited``, ...).
``execute`` does not raise for anything a call or a handler does.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from jsonschema.exceptions import SchemaError
from pydantic import Field, JsonValue

from flowdebug.engine.execution.approval import Approve, Decision, Edit, Reject
from flowdebug.engine.execution.faults import Fault, execution_fault
from flowdebug.engine.execution.handler_io import Outcome, ToolContext, exception_outcome
from flowdebug.engine.execution.handlers import Handler, Toolset
from flowdebug.engine.execution.validation import argument_errors, malformed_text, unknown_tool_text
from flowdebug.hosting import clamp_result_chars, clamp_timeout
from flowdebug.model import ErrorType, Message, ToolCall, ToolResult, _Model

# Error types only the runtime gives, to calls it refuses before any handler runs: such a
# call never reaches the tool. ("permission" is left out: handlers refuse with it too.)
REFUSED: frozenset[ErrorType] = frozenset(
    {"duplicate_call_id", "unknown_tool", "malformed_arguments", "invalid_schema", "validation"}
)


class Policy(_Model):
    """Limits of a session. The debugger stops after ``max_rounds`` model turns; the runtime
    applies the timeout (seconds, for tools without their own) and the result size cap."""

    max_rounds: Annotated[int, Field(ge=1)] = 10
    default_timeout: Annotated[float, Field(gt=0)] = 10.0
    max_result_chars: Annotated[int, Field(ge=1)] = 20_000


class Execution(_Model):
    """The record of one call: what came in, what went out, when, and what happened.

    ``started_ms`` / ``ended_ms`` are Unix times in milliseconds. ``arguments`` is what the
    tool received (None when the runtime refused the call; an execution fault stands in for
    the handler and gets them too), ``handler`` its kind, ``fault`` the spec of
    the execution fault applied, ``steps`` a readable account for trace events, ``log`` the
    handler's captured output or traceback, ``data`` what the handler adds to the call's trace
    events (an MCP handler: ``{"mcp": {...}}`` with the JSON-RPC messages exchanged).
    """

    call: ToolCall
    result: ToolResult
    number: int
    started_ms: float
    ended_ms: float
    arguments: dict[str, JsonValue] | None = None
    handler: str | None = None
    decision: Literal["approve", "edit", "reject"] | None = None
    fault: str | None = None
    steps: list[str] = Field(default_factory=list)
    log: str = ""
    data: dict[str, JsonValue] = Field(default_factory=dict)

    @property
    def duration_ms(self) -> float:
        return self.ended_ms - self.started_ms


class Batch(_Model):
    """The executions of one model turn, in call order."""

    executions: list[Execution] = Field(default_factory=list)

    @property
    def results(self) -> list[ToolResult]:
        return [e.result for e in self.executions]

    @property
    def message(self) -> Message:
        """The tool message to append to the history."""
        return Message(role="tool", parts=self.results)


def _now_ms() -> float:
    return time.time() * 1000


class _Job:
    """One handler run in a daemon thread, so a hang can be abandoned without blocking the
    batch or the interpreter's exit."""

    def __init__(self, handler: Handler, arguments: dict[str, Any], ctx: ToolContext, delay: float):
        self.handler, self.arguments, self.ctx, self.delay = handler, arguments, ctx, delay
        self.done = threading.Event()
        self.outcome = Outcome()
        self.ended_ms = 0.0

    def start(self, timeout: float) -> None:
        self.ctx.deadline = time.monotonic() + timeout
        threading.Thread(target=self._run, daemon=True, name=f"tool {self.ctx.call_id}").start()

    def _run(self) -> None:
        try:
            if self.delay and not self.ctx.sleep(self.delay):
                return
            outcome = self.handler.run(self.arguments, self.ctx)
        except BaseException as exc:  # a handler bug must not kill the thread silently
            outcome = exception_outcome(exc)
        self.outcome, self.ended_ms = outcome, _now_ms()
        self.done.set()

    def wait(self) -> bool:
        """Wait until the deadline; False when the handler did not finish in time."""
        return self.done.wait(max(self.ctx.remaining, 0.0))


@dataclass
class _Plan:
    call: ToolCall
    number: int
    started_ms: float = field(default_factory=_now_ms)
    steps: list[str] = field(default_factory=list)
    outcome: Outcome | None = None  # decided before any handler ran
    ended_ms: float = 0.0
    job: _Job | None = None
    timeout: float = 0.0
    arguments: dict[str, Any] | None = None
    handler: str | None = None
    decision: Literal["approve", "edit", "reject"] | None = None
    fault: str | None = None
    output_schema: bool = False

    def decide(self, outcome: Outcome, step: str) -> _Plan:
        self.outcome, self.ended_ms = outcome, _now_ms()
        self.steps.append(step)
        return self

    def fail(self, text: str, error_type: ErrorType) -> _Plan:
        return self.decide(Outcome.failure(text, error_type), f"refused: {error_type}")


class Runtime:
    """Executes the calls of model turns against one session's tools.

    ``toolset`` and ``policy`` may be replaced between turns. ``state`` is the session's
    JSON-only handler state (e.g. the task store): save it with the session and pass it back
    to restore; copy it to snapshot before a turn you may rewind.
    """

    def __init__(
        self,
        toolset: Toolset,
        policy: Policy | None = None,
        *,
        session_id: str = "",
        state: dict[str, Any] | None = None,
    ):
        self.toolset = toolset
        self.policy = policy or Policy()
        self.session_id = session_id
        self.state: dict[str, Any] = {} if state is None else state
        self._lock = threading.RLock()

    def execute(
        self,
        calls: Message | Sequence[ToolCall],
        *,
        decisions: Mapping[str, Decision] | None = None,
        faults: Sequence[Fault] = (),
        first_call_number: int = 1,
    ) -> Batch:
        """Run the calls concurrently; results come back in call order.

        ``decisions`` maps call ids to a person's Approve / Edit / Reject; ``faults`` are
        the session's faults (only execution faults act here); ``first_call_number`` is the
        session number of the first call, for faults that target the nth call.
        """
        calls = calls.tool_calls if isinstance(calls, Message) else list(calls)
        seen: set[str] = set()
        plans = []
        for n, call in enumerate(calls):
            plans.append(self._prepare(call, first_call_number + n, decisions or {}, faults, seen))
            seen.add(call.id)
        # A handler with something to open first (an MCP server to start) opens it now, so a
        # tool's timeout measures its call and not the server's start.
        for job in [plan.job for plan in plans if plan.job]:
            prepare = getattr(job.handler, "prepare", None)
            if prepare is not None:
                prepare(job.ctx)  # cheap once open: a second call of a batch finds it open
        for plan in plans:
            if plan.job:
                plan.job.start(plan.timeout)
        return Batch(executions=[self._finish(plan) for plan in plans])

    def _prepare(
        self,
        call: ToolCall,
        number: int,
        decisions: Mapping[str, Decision],
        faults: Sequence[Fault],
        seen: set[str],
    ) -> _Plan:
        plan = _Plan(call, number)
        if call.id and call.id in seen:
            return plan.fail(
                f"call id {call.id!r} is used by an earlier call of this turn; results are "
                "paired to calls by id, so this call was not run",
                "duplicate_call_id",
            )
        if not call.id:
            plan.steps.append("the call has no id: its result pairs by name and position")
        entry = self.toolset.get(call.name)
        if entry is None:
            return plan.fail(unknown_tool_text(call.name, self.toolset.names), "unknown_tool")
        if call.raw_arguments is not None:
            return plan.fail(malformed_text(call.raw_arguments), "malformed_arguments")

        arguments: dict[str, Any] = dict(call.arguments)
        match decisions.get(call.id):
            case None if entry.tool.destructive:
                return plan.fail(
                    f"{call.name} is destructive and needs a person's approval; none was "
                    "given, so the call was not run",
                    "permission",
                )
            case None:
                pass
            case Approve():
                plan.decision = "approve"
                plan.steps.append("approved by the user")
            case Edit(arguments=edited):
                plan.decision, arguments = "edit", dict(edited)
                plan.steps.append(f"arguments edited by the user: {json.dumps(edited)}")
            case Reject(reason=reason):
                plan.decision = "reject"
                return plan.fail(f"the user rejected this call: {reason}", "permission")
            case other:  # fail closed: an unreadable decision never runs the call
                return plan.fail(f"unrecognised decision {other!r}", "permission")

        try:
            errors = argument_errors(entry.tool.parameters, arguments)
        except SchemaError as exc:
            return plan.fail(
                f"the declared parameters schema of {call.name} is invalid: {exc.message}",
                "invalid_schema",
            )
        if errors:
            return plan.fail("\n".join(errors), "validation")
        plan.steps.append("arguments valid")

        # A timeout from data (an import, a scenario) never exceeds the host's ceiling.
        plan.timeout = clamp_timeout(entry.timeout or self.policy.default_timeout)
        plan.arguments, plan.output_schema = arguments, entry.tool.output_schema is not None
        fault = execution_fault(faults, call, number)
        delay = 0.0
        if fault is not None:
            plan.fault = fault.spec
            if fault.kind != "slow":
                return plan.decide(_fault_outcome(fault, plan.timeout), f"fault: {fault.spec}")
            plan.steps.append(f"fault: {fault.spec}")
            delay = fault.param("delay")
        ctx = ToolContext(
            call_id=call.id, session_id=self.session_id, state=self.state, lock=self._lock
        )
        plan.handler = entry.handler.kind
        plan.job = _Job(entry.handler, copy.deepcopy(arguments), ctx, delay)  # handler may mutate
        return plan

    def _finish(self, plan: _Plan) -> Execution:
        outcome, ended_ms = plan.outcome, plan.ended_ms
        if plan.job is not None:
            plan.steps.append(f"ran the {plan.handler} handler")
            if plan.job.wait():
                outcome, ended_ms = plan.job.outcome, plan.job.ended_ms
            else:
                plan.job.ctx.cancelled.set()
                outcome = Outcome.failure(f"timeout after {plan.timeout:g}s", "timeout")
                ended_ms = _now_ms()
                plan.steps.append(f"abandoned at the {plan.timeout:g}s timeout")
        assert outcome is not None
        content, limit = outcome.content, clamp_result_chars(self.policy.max_result_chars)
        if len(content) > limit:
            plan.steps.append(f"result truncated from {len(content)} to {limit} characters")
            content = f"{content[:limit]}\n[truncated: {len(content)} characters, limit {limit}]"
        structured = outcome.value if isinstance(outcome.value, dict) else None
        result = ToolResult(
            call_id=plan.call.id,
            name=plan.call.name,
            content=content,
            is_error=outcome.is_error,
            error_type=outcome.error_type,
            structured=structured if plan.output_schema and not outcome.is_error else None,
        )
        if outcome.result is not None:  # a whole result (MCP), paired to this call
            paired = {"call_id": plan.call.id, "name": plan.call.name}
            if isinstance(outcome.result.content, str):
                paired["content"] = content
            result = outcome.result.model_copy(update=paired)
        return Execution(
            call=plan.call,
            result=result,
            number=plan.number,
            started_ms=plan.started_ms,
            ended_ms=ended_ms,
            # An execution fault stands in for the handler: the call reached the tool.
            arguments=plan.arguments if plan.job or plan.fault else None,
            handler=plan.handler,
            decision=plan.decision,
            fault=plan.fault,
            steps=plan.steps,
            log=outcome.log,
            data=outcome.data,
        )


def _fault_outcome(fault: Fault, timeout: float) -> Outcome:
    """The result of an execution fault that replaces the handler (all but ``slow``)."""
    match fault.kind:
        case "exception":
            return Outcome.failure(f"RuntimeError: {fault.param('message')}", "exception")
        case "timeout":
            return Outcome.failure(f"timeout after {timeout:g}s", "timeout")
        case "permission_denied":
            return Outcome.failure(fault.param("message"), "permission")
        case "rate_limited":
            wait = fault.param("retry_after")
            return Outcome.failure(f"rate limited: retry after {wait:g}s", "rate_limited")
        case "empty_result":
            return Outcome(content="")
        case "oversized_result":
            chars = fault.param("chars")
            line = "lorem ipsum dolor sit amet " * 4 + "\n"
            return Outcome(content=(line * (chars // len(line) + 1))[:chars])
        case _:
            raise AssertionError(f"{fault.kind} is not an execution fault")
