"""OpenTelemetry GenAI traces (OTLP JSON) read as one canonical conversation.

An OTLP JSON export (``{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}``, or JSON
Lines of them) holds model calls as spans with ``gen_ai.*`` attributes. Three spellings are
read, as the instrumentations in the field write them:

- the current conventions: ``gen_ai.input.messages`` / ``gen_ai.output.messages`` /
  ``gen_ai.system_instructions`` / ``gen_ai.tool.definitions`` as JSON strings, on the span or
  on its ``gen_ai.client.inference.operation.details`` event;
- the events of v1.36.0 and before: ``gen_ai.system.message``, ``gen_ai.user.message``,
  ``gen_ai.assistant.message``, ``gen_ai.tool.message``, ``gen_ai.choice``, their fields as
  attributes (or as JSON in ``gen_ai.event.content``);
- the indexed attributes OpenLLMetry and LiteLLM write: ``gen_ai.prompt.N.role``,
  ``gen_ai.prompt.N.content``, ``gen_ai.completion.N.tool_calls.M.name``,
  ``gen_ai.completion.N.function_call.name``, ``llm.request.functions.N.name``...

Each model call's span carries its whole history, so the call whose history is longest is the
conversation; tools come from every call's declarations, and ``execute_tool`` spans add the
results of calls that no later model call saw. Input that is not such a trace raises a
:class:`~flowdebug.errors.CodecError` naming the JSON path that is wrong.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from flowdebug import jsontext
from flowdebug.errors import CodecError
from flowdebug.model import Conversation, Message, Part, Text, Thinking, Tool, ToolCall, ToolResult
from flowdebug.protocols.base import ConversionWarning
from flowdebug.protocols.warning_codes import WarningCode

SOURCE = "otel"
_VALUE_KINDS = ("stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue")
_OLD_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
    "gen_ai.choice": "assistant",
}
_NOT_MODEL_CALLS = {"invoke_agent", "create_agent", "invoke_workflow"}
_DETAILS_EVENT = "gen_ai.client.inference.operation.details"
_INDEXED = re.compile(r"^(gen_ai\.prompt|gen_ai\.completion|llm\.request\.functions)\.(\d+)\.(.+)$")


def is_otlp(payload: Any) -> bool:
    """``payload`` has the shape of an OTLP JSON trace export (or JSON Lines of them)."""
    if isinstance(payload, list) and payload:
        return all(isinstance(p, dict) and "resourceSpans" in p for p in payload)
    return isinstance(payload, dict) and "resourceSpans" in payload


@dataclass
class _Call:
    """One model call's span: where it is, when it started, what it held."""

    path: str
    start: int
    messages: list[Message]
    system: str | None
    tools: list[Tool]
    model: str | None


@dataclass
class Reading:
    """What a trace holds, as one conversation, and what it could not carry."""

    conversation: Conversation
    scope: str
    warnings: list[ConversionWarning] = field(default_factory=list)


def _error(path: str, message: str) -> CodecError:
    return CodecError(SOURCE, path, message)


def _list(value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _error(path, f"expected a list, found {type(value).__name__}")
    return value


def _dict(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _error(path, f"expected an object, found {type(value).__name__}")
    return value


def _any_value(value: Any, path: str) -> Any:
    """An OTLP ``AnyValue`` (``{"stringValue": ...}``...) as plain JSON."""
    value = _dict(value, path)
    if not value:
        return None
    kind = next((k for k in _VALUE_KINDS if k in value), None)
    if kind is None:
        if "bytesValue" in value:
            return value["bytesValue"]
        raise _error(path, f"not an OTLP value: expected one of {', '.join(_VALUE_KINDS)}")
    v = value[kind]
    if kind == "intValue":
        try:
            return int(v)
        except (TypeError, ValueError):
            raise _error(f"{path}.intValue", f"not an integer: {v!r}") from None
    if kind == "arrayValue":
        items = _list(_dict(v, f"{path}.arrayValue").get("values"), f"{path}.arrayValue.values")
        return [_any_value(x, f"{path}.arrayValue.values[{i}]") for i, x in enumerate(items)]
    if kind == "kvlistValue":
        return _attributes(_dict(v, f"{path}.kvlistValue").get("values"), f"{path}.kvlistValue")
    return v


def _attributes(value: Any, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, kv in enumerate(_list(value, f"{path}.values" if path.endswith("Value") else path)):
        where = f"{path}[{i}]"
        kv = _dict(kv, where)
        key = kv.get("key")
        if not isinstance(key, str):
            raise _error(f"{where}.key", "an attribute needs a string key")
        out[key] = _any_value(kv.get("value", {}), f"{where}.value")
    return out


def _json_or_text(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return jsontext.embedded(value)
        except ValueError:
            return value
    return value


def _json_attr(attrs: dict[str, Any], key: str, path: str) -> Any:
    value = attrs.get(key)
    if not isinstance(value, str):
        return value
    try:
        return jsontext.embedded(value)
    except ValueError as e:
        raise _error(f"{path}[{key}]", f"not JSON ({e})") from None


def _arguments(value: Any) -> tuple[dict[str, Any], str | None]:
    value = _json_or_text(value)
    if isinstance(value, dict):
        return value, None
    return {}, None if value is None else json.dumps(value) if not isinstance(value, str) else value


def _content_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value)


class _Reader:
    def __init__(self) -> None:
        self.warnings: list[ConversionWarning] = []
        self.ids = 0

    def warn(self, code: WarningCode, path: str, message: str) -> None:
        self.warnings.append(ConversionWarning(SOURCE, code, path, message))

    def call_id(self, value: Any) -> str:
        if isinstance(value, str) and value:
            return value
        self.ids += 1
        made = f"call_otel_{self.ids}"
        self.warn("tool_call_id_missing", "messages", f"a call or result with no id is {made}")
        return made

    # -- the current conventions: messages of typed parts -------------------------------

    def part(self, p: Any, path: str) -> Part | None:
        p = _dict(p, path)
        kind = p.get("type")
        if kind == "text":
            return Text(text=_content_text(p.get("content")))
        if kind == "reasoning":
            return Thinking(text=_content_text(p.get("content")))
        if kind == "tool_call":
            return self.tool_call(p.get("id"), p, path)
        if kind == "tool_call_response":
            return ToolResult(
                call_id=self.call_id(p.get("id")), content=_content_text(p.get("response"))
            )
        self.warn("part_dropped", path, f"a {kind!r} part has no place in a conversation")
        return None

    def messages(self, value: Any, path: str) -> list[Message]:
        if isinstance(value, dict):  # one message where a list was meant (AgentScope's output)
            value = [value]
        out = []
        for i, m in enumerate(_list(value, path)):
            m = _dict(m, f"{path}[{i}]")
            role = m.get("role")
            if role not in ("system", "user", "assistant", "tool"):
                raise _error(f"{path}[{i}].role", f"unknown role {role!r}")
            parts = [
                self.part(p, f"{path}[{i}].parts[{j}]")
                for j, p in enumerate(_list(m.get("parts"), f"{path}[{i}].parts"))
            ]
            kept = [p for p in parts if p is not None]
            if role != "tool" and any(isinstance(p, ToolResult) for p in kept):
                role = "tool"
            out.append(Message(role=role, parts=kept))
        return out

    # -- the indexed attributes (OpenLLMetry, LiteLLM) -----------------------------------

    def indexed(self, attrs: dict[str, Any], prefix: str, path: str) -> list[Message]:
        found: dict[int, dict[str, Any]] = {}
        for key, value in attrs.items():
            m = _INDEXED.match(key)
            if m and m.group(1) == prefix:
                found.setdefault(int(m.group(2)), {})[m.group(3)] = value
        out = []
        default = "user" if prefix == "gen_ai.prompt" else "assistant"
        for n in sorted(found):
            fields = found[n]
            where = f"{path}[{prefix}.{n}]"
            role = fields.get("role", default)
            if role not in ("system", "user", "assistant", "tool"):
                raise _error(f"{where}.role", f"unknown role {role!r}")
            calls = self.indexed_calls(fields, where)
            if role == "tool":
                content = _content_text(fields.get("content"))
                result = ToolResult(
                    call_id=self.call_id(fields.get("tool_call_id")), content=content
                )
                out.append(Message(role="tool", parts=[result]))
                continue
            parts: list[Part] = []
            if fields.get("content"):
                parts.append(Text(text=_content_text(fields["content"])))
            out.append(Message(role=role, parts=[*parts, *calls]))
        return out

    def indexed_calls(self, fields: dict[str, Any], where: str) -> list[ToolCall]:
        calls: dict[int, dict[str, Any]] = {}
        for key, value in fields.items():
            m = re.match(r"^tool_calls\.(\d+)\.(.+)$", key)
            if m:
                calls.setdefault(int(m.group(1)), {})[m.group(2)] = value
        if "function_call.name" in fields:  # OpenAI's legacy single call: no id
            calls[len(calls)] = {
                "name": fields["function_call.name"],
                "arguments": fields.get("function_call.arguments"),
            }
        out = []
        for i in sorted(calls):
            out.append(self.tool_call(calls[i].get("id"), calls[i], f"{where}.tool_calls.{i}"))
        return out

    def tool_call(self, call_id: Any, fields: dict[str, Any], path: str) -> ToolCall:
        """A call from its ``name`` and ``arguments`` (an object, or JSON in a string)."""
        if not isinstance(fields.get("name"), str):
            raise _error(f"{path}.name", "a tool call needs a name")
        args, raw = _arguments(fields.get("arguments"))
        return ToolCall(
            id=self.call_id(call_id), name=fields["name"], arguments=args, raw_arguments=raw
        )

    # -- the events of v1.36.0 and before ------------------------------------------------

    def event_message(self, name: str, attrs: dict[str, Any], path: str) -> Message | None:
        body = _json_or_text(attrs.get("gen_ai.event.content"))
        fields = body if isinstance(body, dict) else attrs
        if name == "gen_ai.choice" and isinstance(fields.get("message"), dict):
            fields = fields["message"]
        role = _OLD_EVENTS[name]
        content = fields.get("content")
        if role == "tool":
            result = ToolResult(
                call_id=self.call_id(fields.get("id")), content=_content_text(content)
            )
            return Message(role="tool", parts=[result])
        parts: list[Part] = [Text(text=_content_text(content))] if content else []
        for i, c in enumerate(_list(_json_or_text(fields.get("tool_calls")), f"{path}.tool_calls")):
            c = _dict(c, f"{path}.tool_calls[{i}]")
            if isinstance(c.get("function"), dict):
                parts.append(
                    self.tool_call(c.get("id"), c["function"], f"{path}.tool_calls[{i}].function")
                )
            else:
                parts.append(self.tool_call(c.get("id"), c, f"{path}.tool_calls[{i}]"))
        return Message(role=role, parts=parts)

    # -- tools ---------------------------------------------------------------------------

    def tools(self, attrs: dict[str, Any], path: str) -> list[Tool]:
        out = []
        defs = _json_attr(attrs, "gen_ai.tool.definitions", f"{path}.attributes")
        for i, d in enumerate(_list(defs, f"{path}.attributes[gen_ai.tool.definitions]")):
            d = _dict(d, f"{path}.attributes[gen_ai.tool.definitions][{i}]")
            fn = d["function"] if isinstance(d.get("function"), dict) else d
            out.append(self.tool(fn, f"{path}.attributes[gen_ai.tool.definitions][{i}]"))
        functions: dict[int, dict[str, Any]] = {}
        for key, value in attrs.items():
            m = _INDEXED.match(key)
            if m and m.group(1) == "llm.request.functions":
                functions.setdefault(int(m.group(2)), {})[m.group(3)] = value
        for n in sorted(functions):
            out.append(self.tool(functions[n], f"{path}.attributes[llm.request.functions.{n}]"))
        return out

    def tool(self, d: dict[str, Any], path: str) -> Tool:
        if not isinstance(d.get("name"), str) or not d["name"]:
            raise _error(f"{path}.name", "a tool definition needs a name")
        params = _json_or_text(d.get("parameters"))
        if params is not None and not isinstance(params, dict):
            raise _error(f"{path}.parameters", "a tool's parameters must be a JSON Schema object")
        desc = d.get("description")
        return Tool(
            name=d["name"],
            description=desc if isinstance(desc, str) else None,
            parameters=params or {"type": "object", "properties": {}},
        )

    # -- one span ------------------------------------------------------------------------

    def call(self, span: dict[str, Any], attrs: dict[str, Any], path: str) -> _Call | None:
        where = f"{path}.attributes"
        inputs: list[Message] = []
        outputs: list[Message] = []
        system = attrs.get("gen_ai.system_instructions")
        details = {}
        for i, e in enumerate(_list(span.get("events"), f"{path}.events")):
            e = _dict(e, f"{path}.events[{i}]")
            e_attrs = _attributes(e.get("attributes"), f"{path}.events[{i}].attributes")
            if e.get("name") == _DETAILS_EVENT:
                details = e_attrs
            elif e.get("name") in _OLD_EVENTS:
                msg = self.event_message(e["name"], e_attrs, f"{path}.events[{i}]")
                if msg is not None:
                    (outputs if e["name"] == "gen_ai.choice" else inputs).append(msg)
        merged = {**details, **attrs}
        if "gen_ai.input.messages" in merged:
            inputs = self.messages(
                _json_attr(merged, "gen_ai.input.messages", where),
                f"{where}[gen_ai.input.messages]",
            )
        elif not inputs:
            inputs = self.indexed(merged, "gen_ai.prompt", where)
        new_outputs = self.messages(
            _json_attr(merged, "gen_ai.output.messages", where), f"{where}[gen_ai.output.messages]"
        )
        if any(m.parts for m in new_outputs):
            outputs = new_outputs
        elif not outputs:
            # LiteLLM writes an empty gen_ai.output.messages and the call in the indexed form.
            outputs = self.indexed(merged, "gen_ai.completion", where) or new_outputs
        tools = self.tools(merged, path)
        if not inputs and not outputs and not tools:
            return None
        system = _json_or_text(
            system if system is not None else merged.get("gen_ai.system_instructions")
        )
        if isinstance(system, list):
            system = "\n".join(
                _content_text(p.get("content")) if isinstance(p, dict) else str(p) for p in system
            )
        model = merged.get("gen_ai.request.model")
        return _Call(
            path,
            _start(span),
            [*inputs, *outputs],
            system if isinstance(system, str) else None,
            tools,
            model if isinstance(model, str) else None,
        )


def _start(span: dict[str, Any]) -> int:
    try:
        return int(span.get("startTimeUnixNano") or 0)
    except (TypeError, ValueError):
        return 0


def _spans(payload: Any) -> list[tuple[dict[str, Any], str, str]]:
    """Every span with its JSON path and its scope's name."""
    exports = payload if isinstance(payload, list) else [payload]
    out = []
    for e, export in enumerate(exports):
        root = f"$[{e}]" if isinstance(payload, list) else "$"
        rs_list = _list(_dict(export, root).get("resourceSpans"), f"{root}.resourceSpans")
        for r, rs in enumerate(rs_list):
            rpath = f"{root}.resourceSpans[{r}]"
            for s, ss in enumerate(
                _list(_dict(rs, rpath).get("scopeSpans"), f"{rpath}.scopeSpans")
            ):
                spath = f"{rpath}.scopeSpans[{s}]"
                scope = _dict(ss, spath).get("scope")
                name = scope.get("name") if isinstance(scope, dict) else None
                for k, span in enumerate(_list(ss.get("spans"), f"{spath}.spans")):
                    out.append(
                        (
                            _dict(span, f"{spath}.spans[{k}]"),
                            f"{spath}.spans[{k}]",
                            name if isinstance(name, str) else "",
                        )
                    )
    return out


def read(payload: Any) -> Reading:
    """The conversation an OTLP JSON trace holds (see the module's docstring)."""
    reader = _Reader()
    calls: list[tuple[_Call, str]] = []
    executions: list[dict[str, Any]] = []
    for span, path, scope in _spans(payload):
        attrs = _attributes(span.get("attributes"), f"{path}.attributes")
        operation = attrs.get("gen_ai.operation.name")
        if operation == "execute_tool" or "gen_ai.tool.call.id" in attrs:
            executions.append(attrs)
            continue
        if operation in _NOT_MODEL_CALLS:  # an agent's span repeats its model calls' messages
            continue
        call = reader.call(span, attrs, path)
        if call is not None:
            calls.append((call, scope))
    if not calls:
        raise _error(
            "$.resourceSpans", "no span holds a model call (no gen_ai.* messages or tools)"
        )
    calls.sort(key=lambda c: c[0].start)
    longest, scope = max(reversed(calls), key=lambda c: len(c[0].messages))
    tools: dict[str, Tool] = {}
    for call, _ in calls:
        for t in call.tools:
            tools.setdefault(t.name, t)
    messages = list(longest.messages)
    answered = {p.call_id for m in messages for p in m.parts if isinstance(p, ToolResult)}
    asked = {p.id for m in messages for p in m.parts if isinstance(p, ToolCall)}
    results = []
    for attrs in executions:
        name = attrs.get("gen_ai.tool.name")
        if isinstance(name, str) and name not in tools:
            desc = attrs.get("gen_ai.tool.description")
            tools[name] = Tool(name=name, description=desc if isinstance(desc, str) else None)
        call_id = attrs.get("gen_ai.tool.call.id")
        if call_id in asked and call_id not in answered and "gen_ai.tool.call.result" in attrs:
            content = _tool_result_text(attrs["gen_ai.tool.call.result"])
            results.append(
                ToolResult(
                    call_id=call_id, name=name if isinstance(name, str) else None, content=content
                )
            )
    if results:
        messages.append(Message(role="tool", parts=results))
    for name in dict.fromkeys(p.name for m in messages for p in m.parts if isinstance(p, ToolCall)):
        if name not in tools:  # called, but the trace kept no declaration of it
            tools[name] = Tool(name=name)
            reader.warn(
                "tool_metadata_dropped",
                "tools",
                f"the trace holds no declaration of {name}: declared here with no "
                "description and no parameters, as the calls name it",
            )
    if len(calls) > 1:
        reader.warn(
            "messages_merged",
            longest.path,
            f"{len(calls)} model calls: the one with the longest history is the "
            "conversation, the tools are every call's",
        )
    system = longest.system
    if system is None and messages and messages[0].role == "system":
        system = "\n".join(p.text for p in messages[0].parts if isinstance(p, Text))
        messages = messages[1:]
    conv = Conversation(
        system=system, tools=list(tools.values()), messages=messages, model=longest.model
    )
    return Reading(conv, scope, reader.warnings)


def _tool_result_text(value: Any) -> str:
    """A tool span's result: content blocks' text joined, else the value as sent."""
    parsed = _json_or_text(value)
    if isinstance(parsed, list) and all(isinstance(b, dict) and "text" in b for b in parsed):
        return "\n".join(str(b["text"]) for b in parsed)
    return _content_text(value)
