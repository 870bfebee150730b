"""Mock handlers: what runs when the model calls a tool.

A handler is data (a pydantic model in the :data:`Handler` union, keyed by ``kind``) so a
session that declares tools and their mocks can be saved and reloaded:

- ``python``: a function ``module:function`` taking the arguments dict (and optionally a
  :class:`ToolContext`), returning a JSON value or a string;
- ``fixed``: always the same result (optionally an error, optionally after a delay);
- ``template``: a ``str.format`` template filled from the arguments;
- ``rules``: the first rule whose ``when`` / ``match`` fits the arguments gives the reply;
- ``code``: Python source defining ``handler(args)``, run in a child process
  (:mod:`flowdebug.engine.sandbox`);
- ``mcp``: the tool of that name on an MCP server (:mod:`flowdebug.mcp.client`).

``handler.run(arguments, ctx)`` returns an :class:`Outcome` and never raises for anything
the handler does. Timeouts are the runtime's job: it runs ``run`` in a thread it can abandon,
and ``code`` handlers kill their child at ``ctx.deadline``.

A :class:`ToolEntry` pairs a declaration (:class:`~flowdebug.model.Tool`) with its handler
and timeout; a :class:`Toolset` is the tools of one session.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import json
import math
import string
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Annotated, Any, Literal

import regex
from pydantic import BaseModel, Field, JsonValue, TypeAdapter, field_validator, model_validator

from flowdebug import hosting
from flowdebug.engine.sandbox import (
    DISABLED_MESSAGE,
    code_handlers_enabled,
    describe_exit,
    run_code,
)
from flowdebug.hosting import Refused, refusal
from flowdebug.mcp.client import CALL_TIMEOUT, McpError, client_for
from flowdebug.mcp.spec import McpServerSpec
from flowdebug.model import Tool, ToolResult, _Model

DEFAULT_ERROR_TYPE = "exception"
REFUSED_ERROR_TYPE = "disabled"  # a handler the host does not allow to run here
REGEX_TIMEOUT = 0.25  # seconds one rule's pattern may take on one argument
MAX_FIELD_WIDTH = 10_000  # the largest width or precision a result template may ask for


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


class _ErrorFlag(_Model):
    is_error: bool = False
    error_type: str | None = None  # when is_error: "exception" unless given

    def _outcome(self, text: str) -> Outcome:
        if self.is_error:
            return Outcome.failure(text, self.error_type or DEFAULT_ERROR_TYPE)
        return Outcome(content=text)


class Reply(_ErrorFlag):
    """A canned reply: ``result`` (text or a JSON value), optionally an error, optionally
    after ``delay`` seconds (a delay past the tool's timeout makes the call time out)."""

    result: JsonValue = ""
    delay: Annotated[float, Field(ge=0)] = 0.0

    def respond(self, ctx: ToolContext) -> Outcome:
        if self.delay and not ctx.sleep(self.delay):
            return Outcome.failure("cancelled", "timeout")
        outcome = Outcome.success(self.result)
        return self._outcome(outcome.content) if self.is_error else outcome


class FixedHandler(Reply):
    """Always the same reply."""

    kind: Literal["fixed"] = "fixed"

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> Outcome:
        return self.respond(ctx)


class TemplateHandler(_ErrorFlag):
    """``template.format(**arguments)``, e.g. ``"It is sunny in {location}"``."""

    kind: Literal["template"] = "template"
    template: str

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> Outcome:
        try:
            formatter = _BoundedFormatter(hosting.limits().result_chars)
            return self._outcome(formatter.vformat(self.template, (), arguments))
        except KeyError as exc:
            sent = ", ".join(arguments) or "none"
            return Outcome.failure(
                f"the result template needs the argument {exc.args[0]!r}, which the call "
                f"did not send (arguments sent: {sent})"
            )
        except (ValueError, IndexError, AttributeError, TypeError) as exc:
            return Outcome.failure(f"cannot fill the result template {self.template!r}: {exc}")


class _BoundedFormatter(string.Formatter):
    """``str.format`` for result templates, within bounds: a width or precision above
    :data:`MAX_FIELD_WIDTH` (``{q:>1500000000}`` would allocate 1.5 GB) and private
    attributes (``{q.__class__}``) are refused before anything is built, and filling stops
    once the fields add up to more than ``budget`` characters (a long argument repeated)."""

    _NUMBERS = regex.compile(r"\d+")

    def __init__(self, budget: int):
        self.left = budget

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        if "._" in field_name or field_name.startswith("_"):
            raise ValueError(f"{{{field_name}}}: private attributes are not available")
        return super().get_field(field_name, args, kwargs)

    def format_field(self, value: Any, format_spec: str) -> Any:
        for number in self._NUMBERS.findall(format_spec):
            if len(number) > 6 or int(number) > MAX_FIELD_WIDTH:
                raise ValueError(
                    f"the width or precision {number} in {{:{format_spec}}} is larger than "
                    f"{MAX_FIELD_WIDTH}"
                )
        text = super().format_field(value, format_spec)
        self.left -= len(text)
        if self.left < 0:
            raise ValueError(
                f"the filled template would be longer than {hosting.limits().result_chars} "
                "characters, the limit on this server"
            )
        return text


class Rule(Reply):
    """A reply given when every ``when`` field equals the argument of that name and every
    ``match`` regex is found in it (non-strings are matched as JSON). A pattern runs with the
    ``regex`` package under a time limit (:data:`REGEX_TIMEOUT`), so a catastrophic one
    (``^(a+)+$``) gives an error result instead of freezing the server."""

    when: dict[str, JsonValue] = Field(default_factory=dict)
    match: dict[str, str] = Field(default_factory=dict)

    @field_validator("match")
    @classmethod
    def _compiles(cls, patterns: dict[str, str]) -> dict[str, str]:
        for name, pattern in patterns.items():
            try:
                regex.compile(pattern)
            except regex.error as exc:
                raise ValueError(f"match.{name}: invalid regex {pattern!r}: {exc}") from None
        return patterns

    def applies(self, arguments: dict[str, Any]) -> bool:
        if any(k not in arguments or arguments[k] != v for k, v in self.when.items()):
            return False
        for name, pattern in self.match.items():
            if name not in arguments:
                return False
            value = arguments[name]
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            try:
                found = regex.search(pattern, text, timeout=REGEX_TIMEOUT, concurrent=True)
            except TimeoutError:
                raise ToolError(
                    f"the rule pattern {pattern!r} took longer than {REGEX_TIMEOUT:g}s on the "
                    f"argument {name!r}: simplify it (nested repeats such as (a+)+ backtrack)",
                    "timeout",
                ) from None
            if found is None:
                return False
        return True


class RulesHandler(_Model):
    """The first rule that applies replies; otherwise ``default``, or an error naming the
    arguments no rule matched."""

    kind: Literal["rules"] = "rules"
    rules: list[Rule] = Field(default_factory=list)
    default: Reply | None = None

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> Outcome:
        try:
            rule = next((r for r in self.rules if r.applies(arguments)), self.default)
        except ToolError as exc:
            return exception_outcome(exc)
        if rule is None:
            shown = json.dumps(arguments, ensure_ascii=False)
            return Outcome.failure(f"no mock rule matches the arguments {shown}")
        return rule.respond(ctx)


class CodeHandler(_Model):
    """Python source defining ``def handler(args): ...``, run in a child process with the
    call's timeout, a scrubbed environment and a memory limit (MiB; None: the host's). Where
    code handlers are disabled (:func:`flowdebug.engine.sandbox.code_handlers_enabled`) every call
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
    session) stops with the same message."""

    tool: Tool
    handler: Handler
    timeout: Annotated[float, Field(gt=0)] | None = None

    @model_validator(mode="after")
    def _allowed_here(self) -> ToolEntry:
        refused = handler_refusal(self.handler, self.tool.name)
        if refused is not None:
            raise refused
        return self


def handler_refusal(handler: Handler, tool: str | None = None) -> Refused | None:
    """Why ``handler`` may not run on this server, or None: on a shared server, a ``code``
    handler, a ``python`` handler outside the shipped sample tool sets, an MCP server over
    stdio or at a URL the host did not allow."""
    if not hosting.shared():
        return None
    whose = f"tool {tool!r}: " if tool else ""
    match handler:
        case CodeHandler():
            return refusal(f"{whose}a code handler", "run Python code typed by a person")
        case PythonHandler() if not _shipped(handler.function):
            return refusal(
                f"{whose}the python handler {handler.function!r}",
                "import and call a function that is not one of the shipped sample tools",
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


def _shipped(function: str) -> bool:
    """Whether ``function`` is the handler of a tool in the shipped sample tool sets."""
    module = function.partition(":")[0]
    if module != "sample_tools" and not module.startswith("sample_tools."):
        return False
    import sample_tools

    toolsets = getattr(sample_tools, "TOOLSETS", None)
    if toolsets is None:
        return True  # this thread is importing sample_tools: its own tool sets are being made
    return function in _shipped_functions(id(toolsets))


@cache
def _shipped_functions(_: int) -> frozenset[str]:
    import sample_tools

    return frozenset(
        e.handler.function
        for ts in sample_tools.TOOLSETS.values()
        for e in ts.entries
        if isinstance(e.handler, PythonHandler)
    )


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


def python_tool(
    fn: Callable[..., Any],
    parameters: type[BaseModel] | dict[str, Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    annotations: dict[str, JsonValue] | None = None,
    timeout: float | None = None,
) -> ToolEntry:
    """Declare module-level function ``fn`` as a tool with a ``python`` handler.

    ``parameters`` is a pydantic model (its JSON Schema, without pydantic's titles) or a
    JSON Schema dict; the description defaults to the first paragraph of the docstring.
    """
    doc = inspect.getdoc(fn) or ""
    tool = Tool(
        name=name or fn.__name__,
        description=description or doc.split("\n\n")[0].replace("\n", " ") or None,
        parameters=schema_of(parameters),
        annotations=annotations,
    )
    handler = PythonHandler(function=f"{fn.__module__}:{fn.__qualname__}")
    return ToolEntry(tool=tool, handler=handler, timeout=timeout)


def schema_of(parameters: type[BaseModel] | dict[str, Any] | None) -> dict[str, Any]:
    """A JSON Schema for tool arguments from a pydantic model, a schema dict or nothing."""
    if parameters is None:
        return {"type": "object", "properties": {}}
    if isinstance(parameters, dict):
        return parameters
    return _drop_titles(parameters.model_json_schema())


_SCHEMA_MAPS = {"properties", "patternProperties", "$defs", "dependentSchemas"}
_SCHEMA_LISTS = {"allOf", "anyOf", "oneOf", "prefixItems"}
_SCHEMA_ONE = {"items", "additionalProperties", "not", "if", "then", "else", "contains"}


def _drop_titles(schema: Any) -> Any:
    """Remove pydantic's generated ``title`` keywords (keeping properties named "title")."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            value = {k: _drop_titles(v) for k, v in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            value = [_drop_titles(v) for v in value]
        elif key in _SCHEMA_ONE:
            value = _drop_titles(value)
        out[key] = value
    return out


# The runtime abandons a call at its deadline; the MCP timeout fires a little earlier so the
# result says what happened on the wire (no response, notifications/cancelled sent).
_MARGIN = 0.2


def prepare_mcp_handler(handler: McpHandler, ctx: ToolContext) -> None:
    """Connect the session's client before a batch's timeouts start (a stdio server takes a
    second or two to start). A server that cannot be reached is reported by the call."""
    with contextlib.suppress(McpError):
        client_for(handler.server, ctx.session_id).connect()


def run_mcp_handler(handler: McpHandler, arguments: dict[str, Any], ctx: ToolContext) -> Outcome:
    """What :class:`~flowdebug.engine.handlers.McpHandler` runs: one ``tools/call``."""
    remaining = ctx.remaining
    timeout = (
        CALL_TIMEOUT if remaining == float("inf") else max(round(remaining - _MARGIN, 1), 0.05)
    )
    call = client_for(handler.server, ctx.session_id).call_tool(
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
