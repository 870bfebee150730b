"""OpenAI Chat Completions, canonical -> wire: request bodies and ChatCompletion objects.

What OpenAI Chat cannot carry becomes a warning: thinking_dropped,
thinking_signature_dropped, image_in_result_dropped, image_dropped (images outside user and
tool turns), structured_content_dropped, tool_metadata_dropped (title, annotations,
output_schema), tool_choice_dropped, tool_name_renamed, call_id_renamed,
provider_details_dropped, part_dropped (a part in a role that cannot hold it).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, assert_never

from flowdebug.model import (
    Conversation,
    Image,
    Message,
    ModelResponse,
    Text,
    Thinking,
    Tool,
    ToolCall,
    ToolChoice,
    ToolResult,
    dump,
)
from flowdebug.protocols.base import Warnings, safe_call_id, safe_name

PROTOCOL = "openai-chat"
DEFAULT_MODEL = "gpt-4.1"
# `created` of an encoded response when the turn did not come from OpenAI: fixed, so the same
# turn always encodes to the same bytes.
CREATED = 1767225600

_STOP_TO_FINISH = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "refusal": "stop",
    "content_filter": "content_filter",
    "other": "stop",
}


def _own(details: dict[str, Any] | None) -> dict[str, Any]:
    value = (details or {}).get(PROTOCOL)
    return value if isinstance(value, dict) else {}


def _dump_arguments(arguments: dict[str, Any]) -> str:
    # Compact, as the API sends them: {"location":"Paris","unit":"c"}.
    return json.dumps(arguments, separators=(",", ":"), ensure_ascii=False)


def _is_refusal(part: Text) -> bool:
    return _own(part.provider_details).get("refusal") is True


@dataclass
class _Parts:
    """One canonical message's parts sorted into the places OpenAI Chat puts them."""

    content: list[dict[str, Any]] = field(default_factory=list)  # text / image_url parts
    calls: list[dict[str, Any]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)  # whole tool messages
    refusal: list[str] = field(default_factory=list)


class Encoder:
    """One encode: its warnings and the names and ids it already rewrote."""

    def __init__(self) -> None:
        self.w = Warnings(PROTOCOL)
        self._names: set[str] = set()
        self._ids: set[str] = set()

    def name(self, name: str, path: str) -> str:
        new = safe_name(PROTOCOL, name)
        if new != name and name not in self._names:
            self._names.add(name)
            self.w.add(
                "tool_name_renamed",
                path,
                f"tool name {name!r} breaks OpenAI's rule "
                f"(a-z A-Z 0-9 _ -, at most 64); sent as {new!r}",
            )
        return new

    def call_id(self, call_id: str, path: str) -> str:
        new = safe_call_id(PROTOCOL, call_id)
        if new != call_id and call_id not in self._ids:
            self._ids.add(call_id)
            self.w.add("call_id_renamed", path, f"call id {call_id!r} sent as {new!r}")
        return new

    def foreign_details(self, details: dict[str, Any] | None, path: str) -> None:
        others = sorted(k for k in details or {} if k != PROTOCOL)
        if others:
            self.w.add(
                "provider_details_dropped",
                path,
                f"{', '.join(others)} details cannot be carried by OpenAI Chat",
            )

    def tool(self, tool: Tool, path: str) -> dict[str, Any]:
        self.foreign_details(tool.provider_details, path)
        lost = [f for f in ("title", "annotations", "output_schema") if getattr(tool, f)]
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

    def tool_choice(self, choice: ToolChoice, body: dict[str, Any]) -> None:
        if "tools" not in body:
            # OpenAI rejects tool_choice and parallel_tool_calls when no tools are declared.
            if choice.mode != "auto" or choice.parallel is not None:
                self.w.add(
                    "tool_choice_dropped",
                    "tool_choice",
                    "no tools are declared, so tool_choice cannot be sent",
                )
            return
        match choice.mode:
            case "tool" if choice.name is not None:
                name = self.name(choice.name, "tool_choice")
                body["tool_choice"] = {"type": "function", "function": {"name": name}}
            case "tool":
                self.w.add(
                    "tool_choice_dropped",
                    "tool_choice",
                    "tool choice 'tool' names no tool; sent as 'required'",
                )
                body["tool_choice"] = "required"
            case "auto" | "none" | "required" as mode:
                body["tool_choice"] = mode
            case _:
                assert_never(choice.mode)
        if choice.parallel is not None:
            body["parallel_tool_calls"] = choice.parallel

    def parts(self, msg: Message, path: str) -> _Parts:
        out = _Parts()
        for j, part in enumerate(msg.parts):
            ppath = f"{path}.parts[{j}]"
            self.foreign_details(part.provider_details, ppath)
            match part:
                case Text() if msg.role == "assistant" and _is_refusal(part):
                    out.refusal.append(part.text)
                case Text():
                    out.content.append({"type": "text", "text": part.text})
                case Image() if msg.role in ("user", "tool"):
                    image = self.image(part, ppath)
                    if image is not None:
                        out.content.append(image)
                case Image():
                    self.w.add(
                        "image_dropped",
                        ppath,
                        f"OpenAI Chat {msg.role} messages cannot carry images",
                    )
                case Thinking():
                    self.w.add(
                        "thinking_dropped",
                        ppath,
                        "OpenAI Chat messages have no reasoning part; thinking dropped",
                    )
                    if part.signature or part.redacted:
                        self.w.add(
                            "thinking_signature_dropped",
                            ppath,
                            "the thinking signature was dropped; the vendor that made it "
                            "may reject this history",
                        )
                case ToolCall() if msg.role == "assistant":
                    out.calls.append(self.call(part, ppath))
                case ToolCall():
                    self.w.add(
                        "part_dropped", ppath, f"a tool call in a {msg.role} message cannot be sent"
                    )
                case ToolResult():
                    out.results.append(self.result(part, ppath))
                case _:
                    assert_never(part)
        return out

    def image(self, image: Image, path: str) -> dict[str, Any] | None:
        url = image.url or (f"data:{image.media_type};base64,{image.data}" if image.data else None)
        if url is None:
            self.w.add("image_dropped", path, "the image has neither url nor data")
            return None
        image_url: dict[str, Any] = {"url": url}
        if "detail" in _own(image.provider_details):
            image_url["detail"] = _own(image.provider_details)["detail"]
        return {"type": "image_url", "image_url": image_url}

    def call(self, call: ToolCall, path: str) -> dict[str, Any]:
        arguments = (
            call.raw_arguments
            if call.raw_arguments is not None
            else _dump_arguments(call.arguments)
        )
        return {
            "id": self.call_id(call.id, path),
            "type": "function",
            "function": {"name": self.name(call.name, path), "arguments": arguments},
        }

    def result(self, result: ToolResult, path: str) -> dict[str, Any]:
        if result.structured is not None:
            self.w.add(
                "structured_content_dropped",
                path,
                "OpenAI Chat tool messages carry only content; structured content dropped",
            )
        texts: list[str] | None = None
        if not isinstance(result.content, str):
            texts = []
            for k, item in enumerate(result.content):
                match item:
                    case Text():
                        texts.append(item.text)
                    case Image():
                        # The tool message's content accepts only text parts.
                        self.w.add(
                            "image_in_result_dropped",
                            f"{path}.content[{k}]",
                            "OpenAI Chat tool messages accept only text; image dropped",
                        )
                    case _:
                        assert_never(item)
        content: str | list[dict[str, Any]]
        if result.is_error:
            # No error flag in OpenAI Chat: the error travels as {"error": "<text>"}.
            text = result.content if texts is None else "\n".join(texts)
            content = json.dumps({"error": text})
        elif texts is None:
            content = result.content  # type: ignore[assignment]
        else:
            content = [{"type": "text", "text": t} for t in texts] or ""
        return {
            "role": "tool",
            "tool_call_id": self.call_id(result.call_id, path),
            "content": content,
        }

    def messages(self, msg: Message, path: str) -> list[dict[str, Any]]:
        """The wire messages for one canonical message (a tool batch becomes several)."""
        parts = self.parts(msg, path)
        extra = (
            {"name": _own(msg.provider_details)["name"]}
            if "name" in _own(msg.provider_details)
            else {}
        )
        match msg.role:
            case "assistant":
                content: Any = _content(parts.content)
                if content == "" and (parts.calls or parts.refusal):
                    content = None  # content may be null when the turn is only calls
                wire: dict[str, Any] = {"role": "assistant", **extra, "content": content}
                if parts.refusal:
                    wire["refusal"] = "".join(parts.refusal)
                if parts.calls:
                    wire["tool_calls"] = parts.calls
                # One tool message per call, right after the assistant message.
                return [wire, *parts.results]
            case "system":
                role = (
                    "developer"
                    if _own(msg.provider_details).get("role") == "developer"
                    else "system"
                )
                return [*parts.results, {"role": role, **extra, "content": _content(parts.content)}]
            case "user":
                return [
                    *parts.results,
                    {"role": "user", **extra, "content": _content(parts.content)},
                ]
            case "tool":
                # Text next to results has no place in a tool message: it follows as a user turn.
                rest = (
                    [{"role": "user", "content": _content(parts.content)}] if parts.content else []
                )
                return [*parts.results, *rest]
            case _:
                assert_never(msg.role)

    def completion(self, resp: ModelResponse) -> dict[str, Any]:
        own = _own(resp.provider_details)
        for j, part in enumerate(resp.message.parts):
            if isinstance(part, ToolResult):
                self.w.add("part_dropped", f"message.parts[{j}]", "a model turn has no results")
        parts = self.parts(resp.message.model_copy(update={"role": "assistant"}), "message")
        text = "".join(p["text"] for p in parts.content if p["type"] == "text")
        message: dict[str, Any] = {
            "role": "assistant",
            "content": text if parts.content else None,
            "refusal": "".join(parts.refusal) if parts.refusal else None,
            "annotations": [],
        }
        if parts.calls:
            message["tool_calls"] = parts.calls
        if resp.stop_reason is not None:
            finish = _STOP_TO_FINISH[resp.stop_reason]
        else:
            finish = "tool_calls" if parts.calls else "stop"
        created = own.get("created")
        completion: dict[str, Any] = {
            "id": resp.id if resp.id and resp.id.startswith("chatcmpl-") else _completion_id(resp),
            "object": "chat.completion",
            "created": created if isinstance(created, int) else CREATED,
            "model": resp.model or DEFAULT_MODEL,
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
            ],
        }
        if resp.usage is not None:
            prompt = resp.usage.get("input_tokens", 0)
            output = resp.usage.get("output_tokens", 0)
            completion["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": output,
                "total_tokens": prompt + output,
            }
        for key in ("service_tier", "system_fingerprint"):
            if key in own:
                completion[key] = own[key]
        return completion

    def request(self, conv: Conversation) -> dict[str, Any]:
        own = _own(conv.provider_details)
        # Declarations first, so a renamed tool is reported where it is declared.
        tools = [self.tool(t, f"tools[{k}]") for k, t in enumerate(conv.tools)]
        messages: list[dict[str, Any]] = []
        if conv.system is not None:
            role = "developer" if own.get("system_role") == "developer" else "system"
            messages.append({"role": role, "content": conv.system})
        for i, msg in enumerate(conv.messages):
            messages += self.messages(msg, f"messages[{i}]")
        body: dict[str, Any] = {"model": conv.model or DEFAULT_MODEL, "messages": messages}
        if tools:
            body["tools"] = tools
        if conv.tool_choice is not None:
            self.tool_choice(conv.tool_choice, body)
        if conv.max_tokens is not None:
            body["max_completion_tokens"] = conv.max_tokens
        if conv.temperature is not None:
            body["temperature"] = conv.temperature
        # Fields decode_request could not map come back verbatim.
        extra = own.get("body")
        for key, value in (extra if isinstance(extra, dict) else {}).items():
            body.setdefault(key, value)
        return body


def _content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """A lone text part is sent as a plain string, as the SDKs and the reference do."""
    if not parts:
        return ""
    if len(parts) == 1 and parts[0]["type"] == "text":
        return parts[0]["text"]
    return parts


def _completion_id(resp: ModelResponse) -> str:
    digest = hashlib.sha1(json.dumps(dump(resp.message), sort_keys=True).encode()).hexdigest()
    return f"chatcmpl-{digest[:29]}"
