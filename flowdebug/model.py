"""Canonical types for one tool-calling conversation.

Every codec translates between these types and one vendor's wire format; the runtime, the
debugger and the renderers only ever see these. Vendor-only data that must survive a round
trip rides in ``provider_details`` instead of growing new top-level fields.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter

Details = dict[str, JsonValue] | None


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Tool(_Model):
    """A tool declaration: what the runtime tells the model it may call."""

    name: str
    description: str | None = None
    parameters: dict[str, JsonValue] = Field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    output_schema: dict[str, JsonValue] | None = None
    title: str | None = None
    # MCP spelling: readOnlyHint, destructiveHint, idempotentHint, openWorldHint, title.
    annotations: dict[str, JsonValue] | None = None
    strict: bool | None = None
    provider_details: Details = None

    @property
    def destructive(self) -> bool:
        return bool((self.annotations or {}).get("destructiveHint"))


class ToolChoice(_Model):
    """How the model may use tools: auto, none, required (any tool) or one named tool."""

    mode: Literal["auto", "none", "required", "tool"] = "auto"
    name: str | None = None
    # None means "the vendor's default" (parallel calls allowed everywhere today).
    parallel: bool | None = None


class Text(_Model):
    """Text of a turn. ``refusal`` marks a model's refusal (OpenAI carries it apart from the
    content); a target without refusals carries it as text and says so."""

    kind: Literal["text"] = "text"
    text: str
    refusal: bool | None = None  # True for a refusal; None (left out of the JSON) otherwise
    provider_details: Details = None


class Thinking(_Model):
    """Model reasoning. ``signature`` is opaque and must come back byte-identical.

    A redacted block (Anthropic ``redacted_thinking``) has ``redacted=True`` and its
    encrypted payload in ``text``.
    """

    kind: Literal["thinking"] = "thinking"
    text: str = ""
    signature: str | None = None
    redacted: bool = False
    # The protocol that issued the signature (or redacted data): it means nothing to, and is
    # rejected by, any other vendor.
    source: str | None = None
    provider_details: Details = None


class Image(_Model):
    """An image, inline (base64 ``data``) or by ``url``."""

    kind: Literal["image"] = "image"
    media_type: str = "image/png"
    data: str | None = None
    url: str | None = None
    provider_details: Details = None


class ToolCall(_Model):
    """The model asks to run a tool: ``id`` pairs it with its :class:`ToolResult`."""

    kind: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    arguments: dict[str, JsonValue] = Field(default_factory=dict)
    raw_arguments: str | None = None  # what the model sent when it was not a JSON object
    provider_details: Details = None


# Why a call (or a session) failed, as flowdebug itself reports it (inspect_ai's
# ToolCallError.type is the model). ToolResult.error_type stays an open str: a user's python
# handler may raise ToolError with a type of its own, a canned handler names one, and a pasted
# canonical payload or a stored session may carry any; flowdebug's own code only produces these
# (tests/engine/test_error_types.py enumerates them).
ErrorType = Literal[
    "validation",
    "unknown_tool",
    "malformed_arguments",
    "duplicate_call_id",
    "invalid_schema",
    "permission",
    "timeout",
    "exception",
    "rate_limited",
    "disabled",
    "oversized",
    "crash",
    "tool_error",
    "protocol",
    "mcp_connect",
    "mcp_crash",
    "round_cap",
    "provider_error",
]

ERROR_TYPES: dict[ErrorType, str] = {
    "validation": "the arguments break the tool's input schema; the runtime refused the call",
    "unknown_tool": "the call names a tool that was not declared",
    "malformed_arguments": "the model's arguments are not a JSON object",
    "duplicate_call_id": "the call reuses the id of an earlier call of the same turn",
    "invalid_schema": "the tool's own input schema is not a valid JSON Schema",
    "permission": "the call was refused: rejected by a person, or a handler denied it",
    "timeout": "the tool did not answer within its time limit",
    "exception": "the handler raised (also the type of a ToolError without one)",
    "rate_limited": "the tool turned the call away for now (an injected rate limit)",
    "disabled": "a handler the host does not allow to run here",
    "oversized": "the sandboxed handler's output exceeded its size cap",
    "crash": "the sandboxed handler's process died",
    "tool_error": "an MCP server answered with isError",
    "protocol": "an MCP server answered with a JSON-RPC error or an unreadable result",
    "mcp_connect": "the MCP server could not be reached or initialised",
    "mcp_crash": "the MCP server closed the connection during the call",
    "round_cap": "the session halted at its round cap (a trace event, not a result)",
    "provider_error": "the model API failed (a trace event, not a result)",
}

ResultContent = Annotated[Text | Image, Field(discriminator="kind")]


class ToolResult(_Model):
    """The outcome of one call, paired to it by ``call_id``.

    ``name`` repeats the called tool's name (Gemini pairs by name). ``error_type`` says why an
    error happened (validation, timeout, exception, permission, unknown_tool, ...) for the
    debugger; vendors only see ``is_error`` and the content. ``structured`` holds MCP
    ``structuredContent``.
    """

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str | None = None
    content: str | list[ResultContent] = ""
    is_error: bool = False
    error_type: str | None = None
    structured: JsonValue = None
    provider_details: Details = None

    @property
    def text(self) -> str:
        """The content as one string (images become a placeholder)."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(
            p.text if isinstance(p, Text) else f"[image {p.media_type}]" for p in self.content
        )


class HostedCall(_Model):
    """A call of a tool the vendor runs itself (web search, code execution, an MCP connector
    server, file search, a computer or shell action): the model asks and the vendor answers in
    the same turn, so the runtime never executes it.

    ``name`` is the hosted tool (``web_search``, ``code_execution``, ``file_search``, ``mcp``,
    ...); ``server`` the MCP server's label for a connector call (``name`` is then the remote
    tool). ``source`` is the protocol that issued it; the exact wire item rides in
    ``provider_details[source]`` so it goes back to that vendor byte-identical.
    """

    kind: Literal["hosted_call"] = "hosted_call"
    id: str
    name: str
    arguments: dict[str, JsonValue] = Field(default_factory=dict)
    server: str | None = None
    status: str | None = None
    source: str | None = None
    provider_details: Details = None


class HostedResult(_Model):
    """What the vendor's own tool answered for a :class:`HostedCall` (same turn, same id)."""

    kind: Literal["hosted_result"] = "hosted_result"
    call_id: str
    name: str | None = None
    content: str | list[ResultContent] = ""
    is_error: bool = False
    source: str | None = None
    provider_details: Details = None

    @property
    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "\n".join(
            p.text if isinstance(p, Text) else f"[image {p.media_type}]" for p in self.content
        )


Part = Annotated[
    Text | Thinking | Image | ToolCall | ToolResult | HostedCall | HostedResult,
    Field(discriminator="kind"),
]
Role = Literal["system", "user", "assistant", "tool"]


class Message(_Model):
    """One turn. Tool results live in a ``tool`` message holding the whole parallel batch."""

    role: Role
    parts: list[Part] = Field(default_factory=list)
    provider_details: Details = None

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [p for p in self.parts if isinstance(p, ToolCall)]

    @property
    def tool_results(self) -> list[ToolResult]:
        return [p for p in self.parts if isinstance(p, ToolResult)]

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, Text))

    @property
    def hosted(self) -> list[HostedCall | HostedResult]:
        """The vendor-run tool calls and results of this turn, in order."""
        return [p for p in self.parts if isinstance(p, (HostedCall, HostedResult))]


class Conversation(_Model):
    """The whole state of a cycle: the system prompt, the tools and the message history."""

    system: str | None = None
    tools: list[Tool] = Field(default_factory=list)
    tool_choice: ToolChoice | None = None
    messages: list[Message] = Field(default_factory=list)
    model: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    provider_details: Details = None

    def tool(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)


StopReason = Literal[
    "end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "content_filter", "other"
]


class ModelResponse(_Model):
    """One model turn as a vendor returns it: the assistant message plus its envelope."""

    message: Message
    stop_reason: StopReason | None = None
    id: str | None = None
    model: str | None = None
    usage: dict[str, int] | None = None
    provider_details: Details = None


PARTS: TypeAdapter[Part] = TypeAdapter(Part)


def dump(obj: BaseModel) -> dict[str, Any]:
    """The canonical JSON form: ``None`` fields left out; a conversation always has
    ``system``, ``tools`` and ``messages``."""
    data = obj.model_dump(mode="json", exclude_none=True)
    if isinstance(obj, Conversation):
        data = {"system": obj.system, **data}
    return data


def canonical_json(obj: BaseModel) -> str:
    return json.dumps(dump(obj), indent=2, ensure_ascii=False)
