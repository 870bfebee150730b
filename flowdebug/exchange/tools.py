"""Tool sets as a person edits them: fill a form, add, replace and delete tools, and see each
tool's lint findings. Tools pasted in a vendor's format are read by
:mod:`flowdebug.exchange.tool_imports`.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import TypeAdapter, ValidationError

from flowdebug import jsontext
from flowdebug.engine.execution.canned_handlers import (
    FixedHandler,
    Rule,
    RulesHandler,
    TemplateHandler,
)
from flowdebug.engine.execution.handlers import (
    CodeHandler,
    Handler,
    PythonHandler,
    ToolEntry,
    Toolset,
    handler_refusal,
)
from flowdebug.errors import CodecError, FlowdebugError, UsageError
from flowdebug.exchange.tool_imports import DEFAULT_RESULT
from flowdebug.lint.base.findings import Finding
from flowdebug.model import Tool

HANDLER_KINDS = ("fixed", "template", "rules", "code", "python")


def handler_kinds() -> tuple[str, ...]:
    """The handler kinds the tool editor offers on this server: without ``code`` where code
    handlers are refused (a shared server, ``FLOWDEBUG_DISABLE_CODE_HANDLERS``)."""
    from flowdebug.engine.sandboxing.sandbox import code_handlers_enabled

    return (
        HANDLER_KINDS if code_handlers_enabled() else tuple(k for k in HANDLER_KINDS if k != "code")
    )


SCHEMA_SKELETON = {"type": "object", "properties": {}, "required": []}
CODE_SKELETON = 'def handler(args):\n    return {"ok": True, "args": args}\n'


class ToolFormError(FlowdebugError):
    """A tool form was refused: ``field`` names the input, ``reason`` says what is wrong."""

    def __init__(self, field: str, reason: str):
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


# -- adding, replacing, deleting --------------------------------------------------------------


def upsert_tool(
    toolset: Toolset, entry: ToolEntry, replacing: str | None = None, *, new: bool = False
) -> Toolset:
    """``toolset`` with ``entry`` in it.

    ``replacing`` names the tool being edited (it may be renamed; it keeps its place); without
    it the tool of the same name is replaced, or the entry appended. ``new=True`` refuses a
    name already taken instead of replacing it.
    """
    name = entry.tool.name
    if replacing is None:
        if new and name in toolset.names:
            raise ToolFormError("name", f"a tool named {name!r} exists already: pick it to edit")
        return toolset.with_entry(entry)
    if replacing not in toolset.names:
        raise UsageError(f"no tool named {replacing!r} (tools: {', '.join(toolset.names)})")
    if name != replacing and name in toolset.names:
        raise ToolFormError("name", f"another tool is already named {name!r}")
    return Toolset(entries=[entry if e.tool.name == replacing else e for e in toolset.entries])


def delete_tool(toolset: Toolset, name: str) -> Toolset:
    """``toolset`` without the tool ``name``."""
    if name not in toolset.names:
        raise UsageError(f"no tool named {name!r} (tools: {', '.join(toolset.names) or 'none'})")
    return Toolset(entries=[e for e in toolset.entries if e.tool.name != name])


# -- the form -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolForm:
    """What the tool editor shows, as text: JSON fields are JSON text, ``timeout`` 0 means the
    policy's default. Every handler kind's field is kept, so switching kinds loses nothing."""

    name: str = ""
    description: str = ""
    parameters: str = json.dumps(SCHEMA_SKELETON, indent=2)
    annotations: str = "{}"
    timeout: float = 0.0
    handler_kind: str = "fixed"
    result: str = json.dumps(DEFAULT_RESULT)
    is_error: bool = False
    template: str = ""
    rules: str = '[\n  {"when": {}, "result": "ok"}\n]'
    source: str = CODE_SKELETON
    function: str = ""

    @classmethod
    def from_entry(cls, entry: ToolEntry) -> ToolForm:
        """The form for an existing tool; fields of other handler kinds get examples."""
        tool, h = entry.tool, entry.handler
        args = required_parameters(tool)
        form = cls(
            name=tool.name,
            description=tool.description or "",
            parameters=json.dumps(tool.parameters, indent=2, ensure_ascii=False),
            annotations=json.dumps(tool.annotations or {}, indent=2, ensure_ascii=False),
            timeout=entry.timeout or 0.0,
            handler_kind=h.kind,
            template="result for " + ", ".join(f"{{{a}}}" for a in args) if args else "done",
        )
        match h:
            case FixedHandler():
                return replace(form, result=_pretty(h.result), is_error=h.is_error)
            case TemplateHandler():
                return replace(form, template=h.template, is_error=h.is_error)
            case RulesHandler():
                data = h.model_dump(mode="json", exclude_defaults=True, exclude={"kind"})
                rules = data if h.default is not None else data.get("rules", [])
                return replace(form, rules=_pretty(rules))
            case CodeHandler():
                return replace(form, source=h.source)
            case PythonHandler():
                return replace(form, function=h.function)
        return form


def entry_from_form(form: ToolForm, current: ToolEntry | None = None) -> ToolEntry:
    """The entry a form describes, validated field by field (ToolFormError names the field).

    What the form does not show (output schema, strict mode, vendor details, an MCP handler
    when the kind is left as ``mcp``) is kept from ``current``, the entry being edited.
    """
    name = form.name.strip()
    if not name:
        raise ToolFormError("name", "a tool needs a name")
    parameters = _json_field("parameters", form.parameters)
    if not isinstance(parameters, dict):
        raise ToolFormError("parameters", "a JSON Schema is a JSON object")
    try:
        Draft202012Validator.check_schema(parameters)
    except SchemaError as e:
        raise ToolFormError("parameters", f"{e.json_path}: {e.message}") from None
    annotations = _json_field("annotations", form.annotations) if form.annotations.strip() else {}
    if not isinstance(annotations, dict):
        raise ToolFormError("annotations", 'a JSON object, e.g. {"destructiveHint": true}')
    if form.timeout < 0:
        raise ToolFormError("timeout", "seconds must be positive (0: the policy's default)")
    keep = current.tool if current is not None else Tool(name=name)
    tool = keep.model_copy(
        update={
            "name": name,
            "description": form.description.strip() or None,
            "parameters": parameters,
            "annotations": annotations or None,
        }
    )
    handler = _handler(form, current)
    try:
        return ToolEntry(tool=tool, handler=handler, timeout=form.timeout or None)
    except ValidationError as e:
        raise ToolFormError("tool", e.errors()[0]["msg"]) from None


def apply_form(toolset: Toolset, form: ToolForm, editing: str | None = None) -> Toolset:
    """``toolset`` after saving ``form``: the tool ``editing`` replaced (and perhaps renamed),
    or, when ``editing`` is None, a new tool added (refused when its name is taken)."""
    current = toolset.get(editing) if editing is not None else None
    if editing is not None and current is None:
        raise UsageError(f"no tool named {editing!r} (tools: {', '.join(toolset.names)})")
    entry = entry_from_form(form, current)
    return upsert_tool(toolset, entry, editing, new=editing is None)


_RULES: TypeAdapter[list[Rule]] = TypeAdapter(list[Rule])


def _handler(form: ToolForm, current: ToolEntry | None) -> Handler:
    match form.handler_kind:
        case "fixed":
            result = _json_field("result", form.result)
            return FixedHandler(result=result, is_error=form.is_error)
        case "template":
            if not form.template:
                raise ToolFormError("template", 'write the reply, e.g. "It is sunny in {location}"')
            return TemplateHandler(template=form.template, is_error=form.is_error)
        case "rules":
            return _rules(_json_field("rules", form.rules))
        case "code":
            return _code(form.source)
        case "python":
            return _python(form.function.strip())
        case "mcp" if current is not None and current.handler.kind == "mcp":
            return current.handler
    kinds = ", ".join(HANDLER_KINDS)
    raise ToolFormError("handler", f"unknown handler kind {form.handler_kind!r}; one of: {kinds}")


def _rules(data: Any) -> RulesHandler:
    """A JSON list of rules, or ``{"rules": [...], "default": {...}}``."""
    try:
        if isinstance(data, list):
            return RulesHandler(rules=_RULES.validate_python(data))
        if isinstance(data, dict):
            return RulesHandler.model_validate({**data, "kind": "rules"})
    except ValidationError as e:
        err = e.errors()[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"])
        raise ToolFormError("rules", f"${where}: {err['msg']}") from None
    raise ToolFormError("rules", 'a JSON list of rules, e.g. [{"when": {"x": 1}, "result": "y"}]')


def _code(source: str) -> CodeHandler:
    from flowdebug.engine.sandboxing.sandbox import DISABLE_ENV, code_handlers_enabled

    handler = CodeHandler(source=source)
    _refuse_here(handler)
    if not code_handlers_enabled():
        raise ToolFormError(
            "kind",
            f"code handlers are disabled on this server ({DISABLE_ENV}); use a fixed, "
            "template or rules handler",
        )
    problem = handler.check()
    if problem:
        raise ToolFormError("source", problem)
    tree = ast.parse(source)
    if not any(isinstance(n, ast.FunctionDef) and n.name == "handler" for n in tree.body):
        raise ToolFormError("source", "define a top-level function: def handler(args): ...")
    return handler


def _python(ref: str) -> PythonHandler:
    if not re.fullmatch(r"[\w.]+:[\w.]+", ref):
        raise ToolFormError(
            "function", "write module:function, e.g. sample_tools.weather:get_weather"
        )
    _refuse_here(PythonHandler(function=ref))  # before importing anything
    module_name, _, qualname = ref.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for attr in qualname.split("."):
            obj = getattr(obj, attr)
    except ImportError as e:
        raise ToolFormError("function", f"cannot import {module_name!r}: {e}") from None
    except AttributeError:
        raise ToolFormError("function", f"{module_name} has no {qualname!r}") from None
    if not callable(obj):
        raise ToolFormError("function", f"{ref} is not a function")
    return PythonHandler(function=ref)


def _refuse_here(handler: Handler) -> None:
    """The host's refusal of ``handler`` (a shared server) as an error on the form's kind."""
    refused = handler_refusal(handler)
    if refused is not None:
        raise ToolFormError("kind", str(refused))


def _json_field(name: str, text: str) -> Any:
    try:
        return jsontext.loads(text, name)
    except CodecError as e:
        quotes = name == "result" and e.reason.startswith("not valid JSON")
        hint = ' (a string needs quotes: "ok")' if quotes else ""
        where = "" if e.path == "$" else f"{e.path}: "
        raise ToolFormError(name, f"{where}{e.reason}{hint}") from None


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


# -- the table and the findings ---------------------------------------------------------------

_TOOL_INDEX = re.compile(r"^tools\[(\d+)\]")


def findings_by_tool(
    toolset: Toolset, protocols_: str | Iterable[str] | None = None
) -> dict[str, list[Finding]]:
    """The linter's findings on each tool's declaration, by tool name (every tool listed)."""
    from flowdebug.lint.linter import lint_tools

    out: dict[str, list[Finding]] = {name: [] for name in toolset.names}
    names = toolset.names
    for f in lint_tools(toolset.tools, protocols_):
        m = _TOOL_INDEX.match(f.path)
        if m and int(m.group(1)) < len(names):
            out[names[int(m.group(1))]].append(f)
    return out


FORM_FIELDS = ("name", "description", "parameters")  # the declaration's fields


def form_findings(
    form: ToolForm, protocols_: str | Iterable[str] | None = None
) -> dict[str, list[Finding]]:
    """The linter's findings on the tool as typed in ``form``, by the field they judge (one of
    :data:`FORM_FIELDS`): shown beside that field as the person edits. A field the form itself
    refuses (a schema that is not JSON) gets that reason as its one error instead."""
    from flowdebug.lint.linter import lint_tools

    out: dict[str, list[Finding]] = {name: [] for name in FORM_FIELDS}
    try:
        tool = entry_from_form(replace(form, handler_kind="fixed", result="null")).tool
    except ToolFormError as e:
        field = e.field if e.field in out else "parameters"
        out[field].append(Finding("error", "form_refused", e.field, e.reason))
        return out
    for f in lint_tools([tool], protocols_):
        field = f.path.removeprefix("tools[0].").split(".", 1)[0].split("[", 1)[0]
        out[field if field in out else "name"].append(f)
    return out


def required_parameters(tool: Tool) -> list[str]:
    required = tool.parameters.get("required") if tool.parameters else None
    return [r for r in required if isinstance(r, str)] if isinstance(required, list) else []


def tool_rows(
    toolset: Toolset, findings: dict[str, Sequence[Finding]], default_timeout: float
) -> list[dict[str, Any]]:
    """One row per tool for the tools table."""
    rows = []
    for e in toolset.entries:
        found = findings.get(e.tool.name, ())
        rows.append(
            {
                "name": e.tool.name,
                "description": e.tool.description or "",
                "required": ", ".join(required_parameters(e.tool)),
                "handler": e.handler.kind,
                "timeout": f"{e.timeout:g} s" if e.timeout else f"default ({default_timeout:g} s)",
                "destructive": "yes" if e.tool.destructive else "",
                "findings": len(found),
                "errors": sum(f.level == "error" for f in found),
            }
        )
    return rows


def finding_rows(findings: Iterable[Finding]) -> list[dict[str, str]]:
    """Findings as table rows (level, protocol, code, path, message)."""
    return [
        {
            "level": f.level,
            "protocol": f.protocol or "all",
            "code": f.code,
            "path": f.path,
            "message": f.message,
        }
        for f in findings
    ]
