"""One model call's span read as messages, tools and a model: the three spellings of the
``gen_ai.*`` conventions (see the package's docstring)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from flowdebug.exchange.otel.otlp import (
    SOURCE,
    attributes,
    content_text,
    dict_of,
    error,
    json_attr,
    json_or_text,
    list_of,
    start,
)
from flowdebug.model import Message, Part, Text, Thinking, Tool, ToolCall, ToolResult
from flowdebug.protocols.base import ConversionWarning
from flowdebug.protocols.warning_codes import WarningCode

_OLD_EVENTS = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
    "gen_ai.choice": "assistant",
}
NOT_MODEL_CALLS = {"invoke_agent", "create_agent", "invoke_workflow"}
_DETAILS_EVENT = "gen_ai.client.inference.operation.details"
_INDEXED = re.compile(r"^(gen_ai\.prompt|gen_ai\.completion|llm\.request\.functions)\.(\d+)\.(.+)$")


@dataclass
class Call:
    """One model call's span: where it is, when it started, what it held."""

    path: str
    start: int
    messages: list[Message]
    system: str | None
    tools: list[Tool]
    model: str | None


def _arguments(value: Any) -> tuple[dict[str, Any], str | None]:
    value = json_or_text(value)
    if isinstance(value, dict):
        return value, None
    return {}, None if value is None else json.dumps(value) if not isinstance(value, str) else value


class Reader:
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
        p = dict_of(p, path)
        kind = p.get("type")
        if kind == "text":
            return Text(text=content_text(p.get("content")))
        if kind == "reasoning":
            return Thinking(text=content_text(p.get("content")))
        if kind == "tool_call":
            return self.tool_call(p.get("id"), p, path)
        if kind == "tool_call_response":
            return ToolResult(
                call_id=self.call_id(p.get("id")), content=content_text(p.get("response"))
            )
        self.warn("part_dropped", path, f"a {kind!r} part has no place in a conversation")
        return None

    def messages(self, value: Any, path: str) -> list[Message]:
        if isinstance(value, dict):  # one message where a list was meant (AgentScope's output)
            value = [value]
        out = []
        for i, m in enumerate(list_of(value, path)):
            m = dict_of(m, f"{path}[{i}]")
            role = m.get("role")
            if role not in ("system", "user", "assistant", "tool"):
                raise error(f"{path}[{i}].role", f"unknown role {role!r}")
            parts = [
                self.part(p, f"{path}[{i}].parts[{j}]")
                for j, p in enumerate(list_of(m.get("parts"), f"{path}[{i}].parts"))
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
                raise error(f"{where}.role", f"unknown role {role!r}")
            calls = self.indexed_calls(fields, where)
            if role == "tool":
                content = content_text(fields.get("content"))
                result = ToolResult(
                    call_id=self.call_id(fields.get("tool_call_id")), content=content
                )
                out.append(Message(role="tool", parts=[result]))
                continue
            parts: list[Part] = []
            if fields.get("content"):
                parts.append(Text(text=content_text(fields["content"])))
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
            raise error(f"{path}.name", "a tool call needs a name")
        args, raw = _arguments(fields.get("arguments"))
        return ToolCall(
            id=self.call_id(call_id), name=fields["name"], arguments=args, raw_arguments=raw
        )

    # -- the events of v1.36.0 and before ------------------------------------------------

    def event_message(self, name: str, attrs: dict[str, Any], path: str) -> Message | None:
        body = json_or_text(attrs.get("gen_ai.event.content"))
        fields = body if isinstance(body, dict) else attrs
        if name == "gen_ai.choice" and isinstance(fields.get("message"), dict):
            fields = fields["message"]
        role = _OLD_EVENTS[name]
        content = fields.get("content")
        if role == "tool":
            result = ToolResult(
                call_id=self.call_id(fields.get("id")), content=content_text(content)
            )
            return Message(role="tool", parts=[result])
        parts: list[Part] = [Text(text=content_text(content))] if content else []
        for i, c in enumerate(
            list_of(json_or_text(fields.get("tool_calls")), f"{path}.tool_calls")
        ):
            c = dict_of(c, f"{path}.tool_calls[{i}]")
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
        defs = json_attr(attrs, "gen_ai.tool.definitions", f"{path}.attributes")
        for i, d in enumerate(list_of(defs, f"{path}.attributes[gen_ai.tool.definitions]")):
            d = dict_of(d, f"{path}.attributes[gen_ai.tool.definitions][{i}]")
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
            raise error(f"{path}.name", "a tool definition needs a name")
        params = json_or_text(d.get("parameters"))
        if params is not None and not isinstance(params, dict):
            raise error(f"{path}.parameters", "a tool's parameters must be a JSON Schema object")
        desc = d.get("description")
        return Tool(
            name=d["name"],
            description=desc if isinstance(desc, str) else None,
            parameters=params or {"type": "object", "properties": {}},
        )

    # -- one span ------------------------------------------------------------------------

    def call(self, span: dict[str, Any], attrs: dict[str, Any], path: str) -> Call | None:
        where = f"{path}.attributes"
        inputs: list[Message] = []
        outputs: list[Message] = []
        system = attrs.get("gen_ai.system_instructions")
        details = {}
        for i, e in enumerate(list_of(span.get("events"), f"{path}.events")):
            e = dict_of(e, f"{path}.events[{i}]")
            e_attrs = attributes(e.get("attributes"), f"{path}.events[{i}].attributes")
            if e.get("name") == _DETAILS_EVENT:
                details = e_attrs
            elif e.get("name") in _OLD_EVENTS:
                msg = self.event_message(e["name"], e_attrs, f"{path}.events[{i}]")
                if msg is not None:
                    (outputs if e["name"] == "gen_ai.choice" else inputs).append(msg)
        merged = {**details, **attrs}
        if "gen_ai.input.messages" in merged:
            inputs = self.messages(
                json_attr(merged, "gen_ai.input.messages", where),
                f"{where}[gen_ai.input.messages]",
            )
        elif not inputs:
            inputs = self.indexed(merged, "gen_ai.prompt", where)
        new_outputs = self.messages(
            json_attr(merged, "gen_ai.output.messages", where), f"{where}[gen_ai.output.messages]"
        )
        if any(m.parts for m in new_outputs):
            outputs = new_outputs
        elif not outputs:
            # LiteLLM writes an empty gen_ai.output.messages and the call in the indexed form.
            outputs = self.indexed(merged, "gen_ai.completion", where) or new_outputs
        tools = self.tools(merged, path)
        if not inputs and not outputs and not tools:
            return None
        system = json_or_text(
            system if system is not None else merged.get("gen_ai.system_instructions")
        )
        if isinstance(system, list):
            system = "\n".join(
                content_text(p.get("content")) if isinstance(p, dict) else str(p) for p in system
            )
        model = merged.get("gen_ai.request.model")
        return Call(
            path,
            start(span),
            [*inputs, *outputs],
            system if isinstance(system, str) else None,
            tools,
            model if isinstance(model, str) else None,
        )
