"""Converse request bodies <-> canonical conversations.

The request is the JSON body of ``POST /model/{modelId}/converse``: ``system``, ``messages``,
``toolConfig``, ``inferenceConfig`` (the model id is in the URL; a ``modelId`` key means boto3
parameters rather than an HTTP body). Unknown keys never vanish: vendor-only fields ride in
``provider_details["bedrock"]``, so a Bedrock -> canonical -> Bedrock trip is exact.
"""

from __future__ import annotations

from typing import Any, Literal, assert_never

from flowdebug.errors import CodecError
from flowdebug.model import Conversation, Message, Part, ToolResult
from flowdebug.protocols.base import Renamer, Warnings, expect, require
from flowdebug.protocols.bedrock.parts import (
    PROTOCOL,
    optional,
    own,
    with_extra,
)
from flowdebug.protocols.bedrock.parts.decode import decode_block
from flowdebug.protocols.bedrock.parts.encode import encode_blocks
from flowdebug.protocols.bedrock.tools import (
    decode_choice,
    decode_tool,
    encode_choice,
    encode_tool,
    merge_tools,
)
from flowdebug.protocols.models import own_model
from flowdebug.protocols.wire_helpers import empty_user_joined


def _split_user_turn(parts: list[Part], kept: list[list[Any]]) -> list[Message]:
    """Runs of tool results become tool messages, everything else user messages; a kept
    block stays in the run it was written in, at its place there."""
    runs: list[tuple[Literal["user", "tool"], list[Part], list[list[Any]]]] = []
    index = 0  # position in the wire content
    pending = sorted(kept, key=lambda e: e[0])
    queue = list(parts)
    while queue or pending:
        if pending and pending[0][0] == index:
            if not runs:
                runs.append(("user", [], []))
            run = runs[-1]
            run[2].append([len(run[1]) + len(run[2]), pending.pop(0)[1]])
        else:
            part = queue.pop(0)
            role: Literal["user", "tool"] = "tool" if isinstance(part, ToolResult) else "user"
            if not runs or runs[-1][0] != role:
                runs.append((role, [], []))
            runs[-1][1].append(part)
        index += 1
    return [
        Message(role=r, parts=run, provider_details={PROTOCOL: {"blocks": k}} if k else None)
        for r, run, k in runs
    ] or [Message(role="user")]


def decode_messages(messages: list[Any], w: Warnings) -> list[Message]:
    names = call_names(messages)
    out: list[Message] = []
    for i, raw in enumerate(messages):
        path = f"$.messages[{i}]"
        msg = expect(PROTOCOL, raw, path, dict)
        role = require(PROTOCOL, msg, "role", path, str)
        if role not in ("user", "assistant"):
            raise CodecError(
                PROTOCOL, f"{path}.role", f"role must be user or assistant, got {role!r}"
            )
        content = require(PROTOCOL, msg, "content", path, list)
        parts, kept = message_parts(content, path, w, names)
        if role == "user":
            out += _split_user_turn(parts, kept)
        else:
            details = {PROTOCOL: {"blocks": kept}} if kept else None
            out.append(Message(role="assistant", parts=parts, provider_details=details))
    return out


def decode_system(value: Any, extra: dict[str, Any]) -> str | None:
    if value is None:
        return None
    blocks = expect(PROTOCOL, value, "$.system", list)
    texts = []
    for j, block in enumerate(blocks):
        expect(PROTOCOL, block, f"$.system[{j}]", dict)
        if "text" in block:
            texts.append(expect(PROTOCOL, block["text"], f"$.system[{j}].text", str))
    if len(blocks) != 1 or set(blocks[0]) != {"text"}:
        extra["system"] = blocks  # cache points, guard content, several texts: kept as sent
    return "\n\n".join(texts) if texts else None


def _messages(
    messages: list[Message], w: Warnings, names: Renamer, system: list[str]
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    open_results: dict[str, Any] | None = None  # the user turn holding the last result batch
    for i, msg in enumerate(messages):
        path = f"messages[{i}]"
        blocks = encode_blocks(msg, path, w, names)
        match msg.role:
            case "system":
                # Converse has one top-level system list; a system message in the history joins
                # it and loses its place.
                # The messages after it move up one place: the warning covers them all.
                w.add(
                    "system_moved",
                    "messages" if i + 1 < len(messages) else path,
                    f"the system message messages[{i}] was appended to the top-level system "
                    "prompt; its position is lost and the messages after it move up",
                )
                w.add(
                    "system_moved",
                    "system",
                    f"the top-level system prompt also holds the text of messages[{i}]",
                )
                dropped = [next(iter(b)) for b in blocks if "text" not in b]
                if dropped:
                    w.add(
                        "part_dropped",
                        path,
                        f"{', '.join(dropped)} blocks cannot go in the system prompt",
                    )
                # Bedrock: a SystemContentBlock's text is at least 1 character long.
                text = "".join(b["text"] for b in blocks if "text" in b)
                if text:
                    system.append(text)
                continue
            case "tool":
                # Bedrock: the results of a parallel batch go back in one user message, and
                # roles alternate, so text the user wrote just before them shares that turn.
                if i and messages[i - 1].role == "user" and out and out[-1]["role"] == "user":
                    if not out[-1]["content"]:
                        empty_user_joined(f"messages[{i - 1}]", w)
                    out[-1]["content"] = out[-1]["content"] + blocks
                    open_results = out[-1]
                    continue
                open_results = {"role": "user", "content": blocks}
                out.append(open_results)
                continue
            case "user" if open_results is not None:
                if not blocks:
                    empty_user_joined(path, w)
                open_results["content"].extend(blocks)
            case "user" | "assistant":
                out.append({"role": msg.role, "content": blocks})
            case _:
                assert_never(msg.role)
        open_results = None
    return out


def encode_request(conv: Conversation, w: Warnings) -> dict[str, Any]:
    """The Converse request body for ``conv``."""
    names = Renamer(PROTOCOL, w)
    extra = own(conv.provider_details, w, "provider_details")
    system_texts = [conv.system] if conv.system else []
    if conv.system == "":
        # Converse: a system text block has at least one character.
        w.add("system_dropped", "system", "an empty system prompt is not sent")
    tools = [encode_tool(t, f"tools[{i}]", w, names) for i, t in enumerate(conv.tools)]
    choice = encode_choice(conv.tool_choice, w, names) if conv.tool_choice else None
    messages = _messages(conv.messages, w, names, system_texts)
    body: dict[str, Any] = {}
    model_in_body = extra.pop("modelId", None)
    model = own_model(conv.model, w, where=" in the URL (/model/{model}/converse)")
    if model is not None and model_in_body is not None:
        body["modelId"] = model  # read from boto3 parameters: they go back the same way
    elif model is not None and model == conv.model:
        w.add(
            "model_dropped",
            "model",
            f"Bedrock takes the model id in the URL (/model/{model}/converse), not in the "
            "body; it was not sent",
        )
    stashed_system = extra.pop("system", None)
    if system_texts:
        text = "\n\n".join(system_texts)
        same = isinstance(stashed_system, list) and text == "\n\n".join(
            str(b["text"]) for b in stashed_system if isinstance(b, dict) and "text" in b
        )
        body["system"] = stashed_system if same else [{"text": text}]
    elif isinstance(stashed_system, list) and not any(
        isinstance(b, dict) and "text" in b for b in stashed_system
    ):
        body["system"] = stashed_system  # [] or only cache points: kept as sent
    body["messages"] = messages
    config: dict[str, Any] = dict(extra.pop("toolConfig", None) or {})
    tools = merge_tools(tools, config.pop("tools", None))
    if tools:
        config = {"tools": tools} | config
        if choice is not None:
            config["toolChoice"] = choice
        body["toolConfig"] = config
    elif choice is not None:
        w.add(
            "tool_choice_dropped",
            "tool_choice",
            "Bedrock sends toolChoice inside toolConfig, which needs at least one tool; "
            "there is none, so it was not sent",
        )
    stashed_inference = extra.pop("inferenceConfig", None)
    inference = dict(stashed_inference or {})
    if conv.max_tokens is not None:
        inference["maxTokens"] = conv.max_tokens
    if conv.temperature is not None:
        inference["temperature"] = conv.temperature
    if inference or isinstance(stashed_inference, dict):
        body["inferenceConfig"] = inference
    return with_extra(body, extra)


REQUEST_FIELDS = ("modelId", "system", "messages", "toolConfig", "inferenceConfig")


def message_parts(
    content: list[Any], path: str, w: Warnings, names: dict[str, str]
) -> tuple[list[Part], list[list[Any]]]:
    """The parts of one message and the blocks with no canonical form, with their places."""
    parts: list[Part] = []
    kept: list[list[Any]] = []
    hosted: set[str] = set()
    for j, block in enumerate(content):
        part = decode_block(block, f"{path}.content[{j}]", w, names, hosted)
        if part is None:
            kept.append([j, block])
        else:
            parts.append(part)
    return parts, kept


def call_names(messages: list[Any]) -> dict[str, str]:
    """toolUseId -> tool name: Bedrock results carry no name, their calls do."""
    out: dict[str, str] = {}
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        for b in content if isinstance(content, list) else []:
            use = b.get("toolUse") if isinstance(b, dict) else None
            if (
                isinstance(use, dict)
                and isinstance(use.get("toolUseId"), str)
                and isinstance(use.get("name"), str)
            ):
                out[use["toolUseId"]] = use["name"]
    return out


def decode_request(payload: Any, w: Warnings) -> Conversation:
    """The canonical conversation a Converse request body holds."""
    body = expect(PROTOCOL, payload, "$", dict)
    messages = require(PROTOCOL, body, "messages", "$", list)
    extra = {k: v for k, v in body.items() if k not in REQUEST_FIELDS}
    if "modelId" in body:
        extra["modelId"] = True  # boto3 parameters rather than an HTTP body
    system = decode_system(body.get("system"), extra)
    config = optional(body, "toolConfig", "$", dict) or {}
    raw_tools = (
        require(PROTOCOL, config, "tools", "$.toolConfig", list) if "toolConfig" in body else []
    )
    tools = [decode_tool(t, f"$.toolConfig.tools[{i}]") for i, t in enumerate(raw_tools)]
    rest = {k: v for k, v in config.items() if k not in ("tools", "toolChoice")}
    if any(t is None for t in tools):
        rest["tools"] = raw_tools  # cachePoint / systemTool entries keep their places
    if rest:
        extra["toolConfig"] = rest
    choice = config.get("toolChoice")
    inference = optional(body, "inferenceConfig", "$", dict)
    settings = {}
    if inference is not None:
        settings = {
            "max_tokens": optional(inference, "maxTokens", "$.inferenceConfig", int),
            "temperature": optional(inference, "temperature", "$.inferenceConfig", (int, float)),
        }
        # The rest (topP, stopSequences) rides along, and so does an empty {}.
        kept = {k: v for k, v in inference.items() if k not in ("maxTokens", "temperature")}
        if kept or not inference:
            extra["inferenceConfig"] = kept
    return Conversation(
        system=system,
        tools=[t for t in tools if t is not None],
        tool_choice=None if choice is None else decode_choice(choice, "$.toolConfig.toolChoice"),
        messages=decode_messages(messages, w),
        model=optional(body, "modelId", "$", str),
        provider_details={PROTOCOL: extra} if extra else None,
        **settings,
    )
