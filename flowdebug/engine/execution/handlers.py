"""Mock handlers: what runs when the model calls a tool.

A handler is data (a pydantic model in the :data:`Handler` union, keyed by ``kind``) so a
session that declares tools and their mocks can be saved and reloaded:

- ``python``: a function ``module:function`` taking the arguments dict (and optionally a
  :class:`~flowdebug.engine.execution.handler_io.ToolContext`), returning a JSON value or a string
  (:mod:`flowdebug.engine.execution.python_tools` declares such a tool from the function);
- ``fixed``: always the same result (optionally an error, optionally after a delay);
- ``template``: a ``str.format`` template filled from the arguments;
- ``rules``: the first rule whose ``when`` / ``match`` fits the arguments gives the reply;
- ``code``: Python source defining ``handler(args)``, run in a child process
  (:mod:`flowdebug.engine.sandboxing.sandbox`);
- ``mcp``: the tool of that name on an MCP server (:mod:`flowdebug.mcp.client`).

This module holds the handlers that run code (``python``, ``code``, ``mcp``), the union and
what a host refuses; ``fixed``, ``template`` and ``rules`` answer from data
(:mod:`flowdebug.engine.execution.canned_handlers`).

``handler.run(arguments, ctx)`` returns an :class:`~flowdebug.engine.execution.handler_io.Outcome`
and
never raises for anything the handler does. Timeouts are the runtime's job: it runs ``run``
in a thread it can abandon, and ``code`` handlers kill their child at ``ctx.deadline``.

A :class:`ToolEntry` pairs a declaration (:class:`~flowdebug.model.Tool`) with its handler
and timeout; a :class:`Toolset` is the tools of one session.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import math
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, TypeAdapter, ValidationInfo, field_validator, model_validator

from flowdebug import hosting
from flowdebug.engine.execution import toolsets
from flowdebug.engine.execution.canned_handlers import FixedHandler, RulesHandler, TemplateHandler
from flowdebug.engine.execution.handler_io import (
    DEFAULT_ERROR_TYPE,
    Outcome,
    ToolContext,
    exception_outcome,
)
from flowdebug.engine.execution.resources import RESOURCES
from flowdebug.engine.sandboxing.sandbox import (
    DISABLED_MESSAGE,
    code_handlers_enabled,
    describe_exit,
    run_code,
)
from flowdebug.errors import UsageError
from flowdebug.hosting import Refused, refusal
from flowdebug.mcp.spec import McpServerSpec
from flowdebug.model import ErrorType, Tool, _Model

if TYPE_CHECKING:
    from flowdebug.mcp.client import McpClient

REFUSED_ERROR_TYPE: ErrorType = "disabled"  # a handler the host does not allow to run here
# The validation context of an entry declared in code from a function object (python_tool).
IN_CODE: dict[str, Any] = {"declared_in_code": True}


class PythonHandler(_Model):
    """Calls ``function`` ("package.module:function") with the arguments dict, and with a
    :class:`ToolContext` too when the function takes a second parameter."""

    kind: Literal["python"] = "python"
    function: Annotated[str, Field(pattern=r"^[\w.]+:[\w.]+$")]

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> Outcome:
        if (refused := handler_refusal(self)) is not None:
            return Outcome.failure(str(refused), REFUSED_ERROR_TYPE)
        try:
            fn, wants_ctx = _resolve(self.function)
            value = fn(arguments, ctx) if wants_ctx else fn(arguments)
        except Exception as exc:
            return exception_outcome(exc)
        return Outcome.success(value)


@cache
def _resolve(ref: str) -> tuple[Callable[..., Any], bool]:
    module_name, _, qualname = ref.partition(":")
    obj: Any = importlib.import_module(module_name)
    for attr in qualname.split("."):
        obj = getattr(obj, attr)
    if not callable(obj):
        raise TypeError(f"{ref} is not a function")
    params = inspect.signature(obj).parameters.values()
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return obj, len(positional) >= 2


class CodeHandler(_Model):
    """Python source defining ``def handler(args): ...``, run in a child process with the
    call's timeout, a scrubbed environment and a memory limit (MiB; None: the host's). Where
    code handlers are disabled (:func:`flowdebug.engine.sandboxing.sandbox.code_handlers_enabled`)
    every call
    is an error result with ``error_type`` ``disabled``. ``memory_mb`` is clamped to the
    host's ceiling (:func:`flowdebug.hosting.limits`): None cannot lift it."""

    kind: Literal["code"] = "code"
    source: str
    memory_mb: Annotated[int, Field(ge=16)] | None = 256

    def check(self) -> str | None:
        """A syntax error in ``source`` as one line, or None."""
        try:
            compile(self.source, "<handler>", "exec")
        except SyntaxError as exc:
            return f"line {exc.lineno}: {exc.msg}"
        return None

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> Outcome:
        if (refused := handler_refusal(self)) is not None:
            return Outcome.failure(str(refused), REFUSED_ERROR_TYPE)
        if not code_handlers_enabled():
            return Outcome.failure(DISABLED_MESSAGE, REFUSED_ERROR_TYPE)
        ceiling = hosting.limits().timeout
        timeout = min(max(ctx.remaining, 0.01), ceiling) if math.isfinite(ctx.deadline) else ceiling
        res = run_code(self.source, arguments, timeout=timeout, memory_mb=self.memory_mb)
        log = "\n".join(s for s in (res.stdout, res.stderr) if s)
        match res.status:
            case "ok":
                if res.value is None and res.stdout:
                    return Outcome(content=res.stdout, log=log)
                return Outcome.success(res.value, log)
            case "error":
                return Outcome.failure(res.traceback or res.error, DEFAULT_ERROR_TYPE, log)
            case "timeout":
                return Outcome.failure(f"timeout after {timeout:g}s", "timeout", log)
            case "oversized":
                return Outcome.failure(res.error, "oversized", log)
            case "crashed":
                text = f"the handler process died ({describe_exit(res.exit_code)})"
                tail = res.stderr.strip()
                return Outcome.failure(f"{text}:\n{tail}" if tail else text, "crash", log)


class McpHandler(_Model):
    """Calls ``tool`` (its name on the server) on the MCP server ``server`` with ``tools/call``.

    Tool errors (``isError``), JSON-RPC errors, timeouts and a server that dies come back as
    error results with ``error_type`` ``tool_error``, ``protocol``, ``timeout`` and
    ``mcp_crash``. A stdio server runs once per session (an HTTP server is shared) and is
    started again after a crash.
    """

    kind: Literal["mcp"] = "mcp"
    server: McpServerSpec
    tool: str

    def prepare(self, ctx: ToolContext) -> None:
        """Start (or reach) the session's server before the call's timeout starts ticking."""

        if handler_refusal(self) is None:
            prepare_mcp_handler(self, ctx)

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> Outcome:

        if (refused := handler_refusal(self)) is not None:
            return Outcome.failure(str(refused), REFUSED_ERROR_TYPE)
        return run_mcp_handler(self, arguments, ctx)


Handler = Annotated[
    PythonHandler | FixedHandler | TemplateHandler | RulesHandler | CodeHandler | McpHandler,
    Field(discriminator="kind"),
]
HANDLER: TypeAdapter[Handler] = TypeAdapter(Handler)


class ToolEntry(_Model):
    """A tool declaration, its mock handler and its timeout (seconds; None: the policy's).

    On a shared server (:func:`flowdebug.hosting.shared`) an entry whose handler would run
    code or commands there cannot be made: validation raises :class:`~flowdebug.hosting.Refused`
    (not a ValidationError), so every way in (the Tools page, an import, a scenario, a stored
    session) stops with the same message. An entry declared in code from a function object
    (:func:`~flowdebug.engine.execution.python_tools.python_tool`, validated with :data:`IN_CODE`)
    names
    no function a person typed, so it is not judged when made; its handler still is when it runs.
    """

    tool: Tool
    handler: Handler
    timeout: Annotated[float, Field(gt=0)] | None = None

    # A field validator, not a model one: pydantic reruns a model's "after" validators when an
    # entry is put in a Toolset, without the context an entry from python_tool was made with.
    @field_validator("handler", mode="after")
    @classmethod
    def _allowed_here(cls, handler: Handler, info: ValidationInfo) -> Handler:
        if isinstance(handler, PythonHandler) and info.context is IN_CODE:
            return handler
        tool = info.data.get("tool")
        refused = handler_refusal(handler, tool.name if isinstance(tool, Tool) else None)
        if refused is not None:
            raise refused
        return handler


def handler_refusal(handler: Handler, tool: str | None = None) -> Refused | None:
    """Why ``handler`` may not run on this server, or None: on a shared server, a ``code``
    handler, a ``python`` handler of no registered tool set
    (:mod:`flowdebug.engine.execution.toolsets`),
    an MCP server over stdio or at a URL the host did not allow."""
    if not hosting.shared():
        return None
    whose = f"tool {tool!r}: " if tool else ""
    match handler:
        case CodeHandler() if not code_handlers_enabled():
            return refusal(f"{whose}a code handler", "run Python code typed by a person")
        case PythonHandler() if handler.function not in toolsets.trusted_functions():
            return refusal(
                f"{whose}the python handler {handler.function!r}",
                "import and call a function that is not a handler of an installed tool set",
            )
        case McpHandler():
            server = handler.server
            return hosting.mcp_refusal(server.stdio, server.url, server.label)
    return None


def refuse_unsafe(toolset: Toolset) -> None:
    """Raise :class:`~flowdebug.hosting.Refused` for the first tool of ``toolset`` whose handler
    may not run on this server (see :func:`handler_refusal`)."""
    for entry in toolset.entries:
        refused = handler_refusal(entry.handler, entry.tool.name)
        if refused is not None:
            raise refused


class Toolset(_Model):
    """The tools of one session, by unique name."""

    entries: list[ToolEntry] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_names(self) -> Toolset:
        seen: set[str] = set()
        for e in self.entries:
            if e.tool.name in seen:
                raise ValueError(f"two tools are named {e.tool.name!r}")
            seen.add(e.tool.name)
        return self

    @property
    def tools(self) -> list[Tool]:
        return [e.tool for e in self.entries]

    @property
    def names(self) -> list[str]:
        return [e.tool.name for e in self.entries]

    def get(self, name: str) -> ToolEntry | None:
        return next((e for e in self.entries if e.tool.name == name), None)

    def with_entry(self, entry: ToolEntry) -> Toolset:
        """A copy with ``entry`` replacing the tool of the same name, or appended."""
        entries = [entry if e.tool.name == entry.tool.name else e for e in self.entries]
        if entry.tool.name not in self.names:
            entries.append(entry)
        return Toolset(entries=entries)

    def __add__(self, other: Toolset) -> Toolset:
        return Toolset(entries=[*self.entries, *other.entries])

    @classmethod
    def registered(cls, *names: str) -> Toolset:
        """The tool sets registered under ``names`` (:mod:`flowdebug.engine.execution.toolsets`)
        joined
        into one, e.g. ``Toolset.registered("weather", "tasks")``."""
        joined = cls()
        for name in names:
            found = toolsets.load(name)
            if not isinstance(found, Toolset):
                raise UsageError(
                    f"the tool set {name!r} is a {type(found).__name__}, not a Toolset"
                )
            joined += found
        return joined


# The runtime abandons a call at its deadline; the MCP timeout fires a little earlier so the
# result says what happened on the wire (no response, notifications/cancelled sent).
_MARGIN = 0.2


def mcp_client(spec: McpServerSpec, owner: str) -> McpClient:
    """``owner``'s connection to ``spec``'s server, held in the resource registry: closed with
    its owner, or earlier when more than the process's bound are open (least recently used).

    flowdebug's MCP client (and the SDK under it, about 0.7 s of imports) loads at the first
    MCP call, not with this module: a process that steps or saves sessions without an MCP tool
    (the CLI, the stores' other processes) never pays it. An MCP server still loads the SDK's
    client with its server: the SDK's package imports both."""
    from flowdebug.mcp.client import McpClient

    return RESOURCES.open(owner, ("mcp", spec.key), lambda: McpClient(spec), group="mcp")


def prepare_mcp_handler(handler: McpHandler, ctx: ToolContext) -> None:
    """Connect the session's client before a batch's timeouts start (a stdio server takes a
    second or two to start). A server that cannot be reached is reported by the call."""
    from flowdebug.mcp.client import McpError

    with contextlib.suppress(McpError):
        mcp_client(handler.server, ctx.session_id).connect()


def run_mcp_handler(handler: McpHandler, arguments: dict[str, Any], ctx: ToolContext) -> Outcome:
    """What :class:`~flowdebug.engine.execution.handlers.McpHandler` runs: one ``tools/call``."""
    from flowdebug.mcp.client import CALL_TIMEOUT

    remaining = ctx.remaining
    timeout = (
        CALL_TIMEOUT if remaining == float("inf") else max(round(remaining - _MARGIN, 1), 0.05)
    )
    call = mcp_client(handler.server, ctx.session_id).call_tool(
        handler.tool, arguments, timeout=timeout, call_id=ctx.call_id or None
    )
    result = call.result
    return Outcome(
        content=result.text,
        is_error=result.is_error,
        error_type=result.error_type,
        value=result.structured,
        log=call.log,
        result=result,
        data=call.trace_data(),
    )
