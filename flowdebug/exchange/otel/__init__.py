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

from dataclasses import dataclass, field
from typing import Any

from flowdebug.exchange.otel.otlp import (
    SOURCE,
    attributes,
    content_text,
    error,
    is_otlp,
    json_or_text,
    spans,
)
from flowdebug.exchange.otel.reader import NOT_MODEL_CALLS, Call, Reader
from flowdebug.model import Conversation, Message, Text, Tool, ToolCall, ToolResult
from flowdebug.protocols.base import ConversionWarning

__all__ = ["SOURCE", "Reading", "is_otlp", "read"]


@dataclass
class Reading:
    """What a trace holds, as one conversation, and what it could not carry."""

    conversation: Conversation
    scope: str
    warnings: list[ConversionWarning] = field(default_factory=list)


def read(payload: Any) -> Reading:
    """The conversation an OTLP JSON trace holds (see the module's docstring)."""
    reader = Reader()
    calls: list[tuple[Call, str]] = []
    executions: list[dict[str, Any]] = []
    for span, path, scope in spans(payload):
        attrs = attributes(span.get("attributes"), f"{path}.attributes")
        operation = attrs.get("gen_ai.operation.name")
        if operation == "execute_tool" or "gen_ai.tool.call.id" in attrs:
            executions.append(attrs)
            continue
        if operation in NOT_MODEL_CALLS:  # an agent's span repeats its model calls' messages
            continue
        call = reader.call(span, attrs, path)
        if call is not None:
            calls.append((call, scope))
    if not calls:
        raise error("$.resourceSpans", "no span holds a model call (no gen_ai.* messages or tools)")
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
    parsed = json_or_text(value)
    if isinstance(parsed, list) and all(isinstance(b, dict) and "text" in b for b in parsed):
        return "\n".join(str(b["text"]) for b in parsed)
    return content_text(value)
