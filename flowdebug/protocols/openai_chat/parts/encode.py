"""OpenAI Chat Completions, canonical -> wire: the messages of a request and a ChatCompletion.

What OpenAI Chat cannot carry becomes a warning: thinking_dropped,
thinking_signature_dropped, image_dropped (images outside user and tool turns),
tool_metadata_dropped (title, annotations, output_schema), tool_choice_dropped,
tool_name_renamed, call_id_renamed, provider_details_dropped, part_dropped (a part in a role
that cannot hold it), hosted_call_dropped, hosted_result_dropped, refusal_flattened,
parts_reordered, parts_merged, messages_merged, model_filled_in, response_id_replaced,
created_filled_in, usage_dropped, usage_rewritten, legacy_functions_dropped. Tool results
become whole tool messages in ``openai_chat_tool_message``, with their own warnings.

Thinking goes out as ``reasoning_content`` only when an OpenAI-compatible server issued it
(``source == "openai-chat"``): DeepSeek wants it back within a tool-call turn, while
api.openai.com and the SDK types know no such field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, assert_never

from flowdebug.model import (
    HostedCall,
    HostedResult,
    Image,
    Message,
    Text,
    Thinking,
    Tool,
    ToolCall,
    ToolResult,
)
from flowdebug.protocols.base import Warnings, safe_call_id, safe_name
from flowdebug.protocols.openai_chat.parts import (
    PROTOCOL,
    encode_extra_content,
    own_details,
    reasoning_field,
)
from flowdebug.protocols.openai_chat.parts.tool_message import tool_message
from flowdebug.protocols.wire_helpers import tool_metadata

DEFAULT_MODEL = "gpt-4.1"
# `created` of an encoded response when the turn did not come from OpenAI: fixed, so the same
# turn always encodes to the same bytes.
CREATED = 1767225600


def own_extra(details: dict[str, Any] | None) -> dict[str, Any]:
    """Message fields a compatible server added, kept verbatim by the decoder."""
    extra = own_details(details).get("extra")
    return extra if isinstance(extra, dict) else {}


def _dump_arguments(arguments: dict[str, Any]) -> str:
    # Compact, as the API sends them: {"location":"Paris","unit":"c"}.
    return json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)


_GEMINI = frozenset({"gemini"})


@dataclass
class _Parts:
    """One canonical message's parts sorted into the places OpenAI Chat puts them."""

    content: list[dict[str, Any]] = field(default_factory=list)  # text / image_url parts
    calls: list[dict[str, Any]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)  # whole tool messages
    refusal: list[str] = field(default_factory=list)
    reasoning: dict[str, str] = field(default_factory=dict)  # wire field -> text
    order: list[int] = field(default_factory=list)  # where the decoder puts each kept part


# The order a decoded assistant message has: reasoning, content, refusal, calls.
_THINKING, _CONTENT, _REFUSAL, _CALL = range(4)


class Encoder:
    """One encode: its warnings and the names and ids it already rewrote.

    ``model`` is the model the payload goes to (it decides whether Gemini's extensions
    travel); ``legacy`` encodes calls as the pre-tools ``functions`` / ``function_call``.
    """

    def __init__(self, model: str | None = None, legacy: bool = False) -> None:
        self.w = Warnings(PROTOCOL)
        self.model = model
        self.legacy = legacy
        # Calls left out (in a user or system message): their results go without a name.
        self.dropped_calls: set[str] = set()

    def name(self, name: str, path: str) -> str:
        new = safe_name(PROTOCOL, name)
        # Named at every place it changes (declaration, calls, results, tool_choice).
        if new != name:
            self.w.add(
                "tool_name_renamed",
                path,
                f"tool name {name!r} breaks OpenAI's rule "
                f"(a-z A-Z 0-9 _ -, at most 64); sent as {new!r}",
            )
        return new

    def call_id(self, call_id: str, path: str) -> str:
        new = safe_call_id(PROTOCOL, call_id)
        if new != call_id:
            self.w.add("call_id_renamed", path, f"call id {call_id!r} sent as {new!r}")
        return new

    def foreign_details(
        self, details: dict[str, Any] | None, path: str, carried: frozenset[str] = frozenset()
    ) -> None:
        """Warn for every other vendor's provider_details entry (``carried`` ones travel)."""
        for vendor in sorted(k for k in details or {} if k != PROTOCOL and k not in carried):
            self.w.add(
                "provider_details_dropped",
                f"{path}.provider_details.{vendor}" if path else f"provider_details.{vendor}",
                f"{vendor} details cannot be carried by OpenAI Chat",
            )

    def tool(self, tool: Tool, path: str) -> dict[str, Any]:
        self.foreign_details(tool.provider_details, path)
        lost = tool_metadata(tool)
        if lost:
            self.w.add(
                "tool_metadata_dropped",
                path,
                f"OpenAI Chat tools have no {', '.join(lost)}; dropped",
            )
        function: dict[str, Any] = {"name": self.name(tool.name, path)}
        if tool.description is not None:
            function["description"] = tool.description
        function["parameters"] = tool.parameters
        if tool.strict is not None:
            function["strict"] = tool.strict
        return {"type": "function", "function": function}

    def parts(self, msg: Message, path: str) -> _Parts:
        out = _Parts()
        dropped: list[tuple[int, int]] = []  # (first warning of a dropped part, its index)
        kept: list[int] = []
        for j, part in enumerate(msg.parts):
            ppath = f"{path}.parts[{j}]"
            first = len(self.w.items)
            if self.place(msg.role, part, ppath, out):
                kept.append(j)
            else:
                dropped.append((first, j))
        # A dropped part shifts every later part of the list: name the list, not the part.
        for first, j in dropped:
            if any(k > j for k in kept):
                for n in range(first, len(self.w.items)):
                    item = self.w.items[n]
                    if item.path.startswith(f"{path}.parts[{j}]"):
                        self.w.items[n] = replace(item, path=f"{path}.parts")
        if out.order != sorted(out.order):
            self.w.add(
                "parts_reordered",
                f"{path}.parts",
                "OpenAI Chat puts reasoning, then content, then refusal, then tool calls; "
                "the parts come back in that order",
            )
        return out

    def place(self, role: str, part: Any, ppath: str, out: _Parts) -> bool:
        """Put ``part`` where OpenAI Chat carries it; False when it is dropped."""
        details = part.provider_details
        if details:  # most parts have none: keep their path cheap
            gemini = details.get("gemini")
            # A call's Gemini thought signature is handled (carried or reported) by call().
            signature_only = isinstance(gemini, dict) and set(gemini) == {"thoughtSignature"}
            carried = _GEMINI if isinstance(part, ToolCall) and signature_only else frozenset()
            self.foreign_details(details, ppath, carried)
        match part:
            case Text() if role == "assistant" and part.refusal:
                out.refusal.append(part.text)
                out.order.append(_REFUSAL)
            case Text():
                if part.refusal:
                    self.w.add(
                        "refusal_flattened",
                        ppath,
                        f"OpenAI Chat {role} messages have no refusal; sent as text",
                    )
                out.content.append({"type": "text", "text": part.text})
                out.order.append(_CONTENT)
            case Image() if role in ("user", "tool"):
                image = self.image(part, ppath)
                if image is None:
                    return False
                out.content.append(image)
                out.order.append(_CONTENT)
            case Image():
                self.w.add(
                    "image_dropped", ppath, f"OpenAI Chat {role} messages cannot carry images"
                )
                return False
            case Thinking():
                return self.thinking(part, role, ppath, out)
            case ToolCall() if role == "assistant":
                out.calls.append(self.call(part, ppath))
                out.order.append(_CALL)
            case ToolCall():
                self.w.add("part_dropped", ppath, f"a tool call in a {role} message cannot be sent")
                self.dropped_calls.add(part.id)
                return False
            case ToolResult():
                if part.call_id in self.dropped_calls and part.name is not None:
                    # a tool message names no tool: the reader takes the name from the call
                    self.w.add(
                        "result_name_dropped",
                        f"{ppath}.name",
                        f"the call of this {part.name} result was left out, and a tool "
                        "message names no tool: read back, the result has no name",
                    )
                out.results.append(tool_message(self, part, ppath))
            case HostedCall():
                self.w.add(
                    "hosted_call_dropped",
                    ppath,
                    f"OpenAI Chat has no vendor-run tools: the hosted {part.name} call "
                    f"({part.source or 'unknown source'}) was left out",
                )
                return False
            case HostedResult():
                self.w.add(
                    "hosted_result_dropped",
                    ppath,
                    f"OpenAI Chat has no vendor-run tools: the hosted {part.name or 'tool'} "
                    "result was left out",
                )
                return False
            case _:
                assert_never(part)
        return True

    def thinking(self, part: Thinking, role: str, path: str, out: _Parts) -> bool:
        # Only an OpenAI-compatible server's own reasoning goes back (DeepSeek needs it
        # within a tool-call turn); api.openai.com has no reasoning field.
        if role == "assistant" and part.source == PROTOCOL and not part.redacted:
            key = reasoning_field(part.provider_details)
            if key in out.reasoning:
                self.w.add(
                    "parts_merged",
                    path,
                    "OpenAI Chat has one reasoning field per message; joined to the previous",
                )
                out.reasoning[key] += part.text
                return True
            out.reasoning[key] = part.text
            out.order.append(_THINKING)
            return True
        self.w.add(
            "thinking_dropped",
            path,
            "OpenAI Chat messages have no reasoning part; thinking dropped",
        )
        if part.signature or part.redacted:
            self.w.add(
                "thinking_signature_dropped",
                path,
                "the thinking signature was dropped; the vendor that made it "
                "may reject this history",
            )
        return False

    def image(self, image: Image, path: str) -> dict[str, Any] | None:
        url = image.url or (f"data:{image.media_type};base64,{image.data}" if image.data else None)
        if url is None:
            self.w.add("image_dropped", path, "the image has neither url nor data")
            return None
        image_url: dict[str, Any] = {"url": url}
        if "detail" in own_details(image.provider_details):
            image_url["detail"] = own_details(image.provider_details)["detail"]
        return {"type": "image_url", "image_url": image_url}

    def call(self, call: ToolCall, path: str) -> dict[str, Any]:
        arguments = (
            call.raw_arguments
            if call.raw_arguments is not None
            else _dump_arguments(call.arguments)
        )
        wire: dict[str, Any] = {
            "id": self.call_id(call.id, path),
            "type": "function",
            "function": {"name": self.name(call.name, path), "arguments": arguments},
        }
        extra = encode_extra_content(call.provider_details, self.model, path, self.w)
        if extra is not None:
            wire["extra_content"] = extra
        return wire

    def messages(self, msg: Message, path: str) -> list[dict[str, Any]]:
        """The wire messages for one canonical message (a tool batch becomes several)."""
        parts = self.parts(msg, path)
        self.foreign_details(msg.provider_details, path)
        extra = (
            {"name": own_details(msg.provider_details)["name"]}
            if "name" in own_details(msg.provider_details)
            else {}
        )
        match msg.role:
            case "assistant":
                content: Any = _content(parts.content)
                if content == "" and parts.content:
                    self.w.add("text_dropped", path, "an empty assistant text reads back as none")
                if content == "" and (parts.calls or parts.refusal):
                    content = None  # content may be null when the turn is only calls
                wire: dict[str, Any] = {"role": "assistant", **extra, "content": content}
                wire |= parts.reasoning
                if parts.refusal:
                    wire["refusal"] = "".join(parts.refusal)
                self.put_calls(wire, parts.calls, path)
                wire |= own_extra(msg.provider_details)
                if parts.results:
                    self.w.add("messages_regrouped", "messages", f"{path}'s results follow it")
                # One tool message per call, right after the assistant message.
                return [wire, *parts.results]
            case "system":
                role = (
                    "developer"
                    if own_details(msg.provider_details).get("role") == "developer"
                    else "system"
                )
                return [*parts.results, {"role": role, **extra, "content": _filled(parts)}]
            case "user":
                return [*parts.results, {"role": "user", **extra, "content": _filled(parts)}]
            case "tool":
                # Text next to results has no place in a tool message: it follows as a user turn.
                rest = (
                    [{"role": "user", "content": _content(parts.content)}] if parts.content else []
                )
                return [*parts.results, *rest]
            case _:
                assert_never(msg.role)

    def put_calls(self, wire: dict[str, Any], calls: list[dict[str, Any]], path: str) -> None:
        """The calls of an assistant message: ``tool_calls``, or one legacy ``function_call``."""
        if not calls:
            return
        if self.legacy and len(calls) == 1:
            wire["function_call"] = calls[0]["function"]
            return
        if self.legacy:
            self.legacy = False
            self.w.add(
                "legacy_functions_dropped",
                path,
                "a legacy function_call holds one call and this turn has "
                f"{len(calls)}: the payload uses tool_calls instead",
            )
        wire["tool_calls"] = calls


def _filled(parts: _Parts) -> str | list[dict[str, Any]]:
    """A user or system message's content: a message without parts has an empty list, which
    reads back as no parts (an empty string is a text part of its own)."""
    return _content(parts.content) if parts.content else []


def _content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """A lone text part is sent as a plain string, as the SDKs and the reference do."""
    if not parts:
        return ""
    if len(parts) == 1 and parts[0]["type"] == "text":
        return parts[0]["text"]
    return parts
