"""Canonical conversation and model turn -> a Converse request body and response body.

The request is the JSON body of ``POST /model/{modelId}/converse``: ``system``, ``messages``,
``toolConfig``, ``inferenceConfig`` (the model id is in the URL). The response is the
ConverseResponse body: ``output.message``, ``stopReason``, ``usage``, ``metrics``.
"""

from __future__ import annotations

from typing import Any, assert_never

from flowdebug.model import Conversation, Message, ModelResponse, Tool, ToolChoice, ToolResult
from flowdebug.protocols.base import Renamer, Warnings
from flowdebug.protocols.bedrock.facts import PROTOCOL, USAGE_WIRE, WIRE_STOP
from flowdebug.protocols.bedrock.parts import encode_blocks
from flowdebug.protocols.bedrock.wire import own, with_extra
from flowdebug.protocols.models import own_model
from flowdebug.protocols.schema_rewrites import OBJECT_ROOT

# -------------------------------------------------------------------------------- request


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
                    out[-1]["content"] = out[-1]["content"] + blocks
                    open_results = out[-1]
                    continue
                open_results = {"role": "user", "content": blocks}
                out.append(open_results)
                continue
            case "user" if open_results is not None:
                open_results["content"].extend(blocks)
            case "user" | "assistant":
                out.append({"role": msg.role, "content": blocks})
            case _:
                assert_never(msg.role)
        open_results = None
    return out


def _tool(tool: Tool, path: str, w: Warnings, names: Renamer) -> dict[str, Any]:
    # Bedrock: the top-level inputSchema.json type must be "object".
    schema = OBJECT_ROOT.apply(tool.parameters, f"{path}.parameters", w, "Bedrock")
    spec: dict[str, Any] = {"name": names.name(tool.name, path)}
    if tool.description:
        spec["description"] = tool.description
    elif tool.description == "":
        w.add(
            "tool_metadata_dropped",
            f"{path}.description",
            "Bedrock rejects an empty description; it was left out",
        )
    spec["inputSchema"] = {"json": schema}
    if tool.strict is not None:
        spec["strict"] = tool.strict
    dropped = [f for f in ("title", "annotations", "output_schema") if getattr(tool, f)]
    if dropped:
        w.add(
            "tool_metadata_dropped", path, f"Bedrock tools have no {', '.join(dropped)}; not sent"
        )
    return {"toolSpec": with_extra(spec, own(tool.provider_details, w, path))}


def _choice(choice: ToolChoice, w: Warnings, names: Renamer) -> dict[str, Any] | None:
    if choice.parallel is not None:
        w.add(
            "tool_choice_dropped",
            "tool_choice.parallel",
            "Bedrock Converse has no switch for parallel tool calls; the setting was not sent",
        )
    match choice.mode:
        case "auto":
            return {"auto": {}}
        case "required":
            return {"any": {}}
        case "tool" if choice.name:
            return {"tool": {"name": names.name(choice.name, "tool_choice")}}
        case "tool":
            w.add(
                "tool_choice_dropped",
                "tool_choice",
                "mode 'tool' without a tool name; sent as any",
            )
            return {"any": {}}
        case "none":
            w.add(
                "tool_choice_dropped",
                "tool_choice",
                "Bedrock toolChoice has no 'none' (only auto, any, tool); toolChoice was left out",
            )
            return None
        case _:
            assert_never(choice.mode)


def _merge_tools(encoded: list[dict[str, Any]], stashed: Any) -> list[dict[str, Any]]:
    """Tools in wire order: entries with no canonical form (cachePoint, systemTool) ride in
    provider_details with their place in the list; toolSpecs come from the canonical tools."""
    if not isinstance(stashed, list):
        return encoded
    rest = iter(encoded)
    out: list[dict[str, Any]] = []
    for entry in stashed:
        if isinstance(entry, dict) and "toolSpec" not in entry:
            out.append(entry)
        elif (spec := next(rest, None)) is not None:
            out.append(spec)
    return out + list(rest)


def encode_request(conv: Conversation, w: Warnings) -> dict[str, Any]:
    """The Converse request body for ``conv``."""
    names = Renamer(PROTOCOL, w)
    extra = own(conv.provider_details, w, "provider_details")
    system_texts = [conv.system] if conv.system else []
    tools = [_tool(t, f"tools[{i}]", w, names) for i, t in enumerate(conv.tools)]
    choice = _choice(conv.tool_choice, w, names) if conv.tool_choice else None
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
    tools = _merge_tools(tools, config.pop("tools", None))
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


# ------------------------------------------------------------------------------- response


def _usage(resp: ModelResponse, extra: dict[str, Any], w: Warnings) -> dict[str, Any]:
    have = dict(resp.usage or {})
    if resp.usage is None:
        w.add(
            "usage_rewritten",
            "usage",
            "the response has no usage; Bedrock requires one, so 0 tokens in and out was sent",
        )
    out: dict[str, Any] = {}
    for key in ("input_tokens", "output_tokens"):
        if resp.usage is not None and key not in have:
            w.add(
                "usage_rewritten",
                f"usage.{key}",
                f"the usage has no {key}; Bedrock requires it, so 0 was sent",
            )
        out[USAGE_WIRE[key]] = have.pop(key, 0)
    total = have.pop("total_tokens", None)
    cache = {USAGE_WIRE[k]: have.pop(k) for k in list(have) if k in USAGE_WIRE}
    # totalTokens counts cache reads and writes too.
    counted = sum(out.values()) + sum(cache.values())
    out["totalTokens"] = total if total is not None else counted
    if total == counted:
        w.add(
            "usage_rewritten",
            "usage.total_tokens",
            "totalTokens is the sum of the other counters here, so it reads back as implied",
        )
    out |= cache
    for key in have:
        w.add("usage_dropped", f"usage.{key}", f"Bedrock TokenUsage has no {key}; it was dropped")
    return with_extra(out, extra.pop("usage", None) or {})


def _stop_reason(resp: ModelResponse, raw: Any, w: Warnings) -> str:
    match resp.stop_reason:
        case None:
            return "tool_use" if resp.message.tool_calls else "end_turn"
        case "content_filter" if raw == "guardrail_intervened":
            return raw
        case "other" if isinstance(raw, str):
            return raw
        case "refusal" | "other" as reason:
            w.add(
                "stop_reason_mapped",
                "stop_reason",
                f"stop reason {reason!r} has no Bedrock value; sent as end_turn",
            )
            return "end_turn"
        case reason:
            return WIRE_STOP[reason]


def encode_response(resp: ModelResponse, w: Warnings) -> dict[str, Any]:
    """The ConverseResponse body for ``resp``."""
    names = Renamer(PROTOCOL, w)
    extra = own(resp.provider_details, w, "provider_details")
    parts = resp.message.parts
    for j, part in enumerate(parts):
        if isinstance(part, ToolResult):
            w.add(
                "tool_result_dropped",
                f"message.parts[{j}]",
                "a Bedrock response (an assistant message) cannot hold a tool result",
            )
    kept = resp.message.model_copy(update={"parts": [p for p in parts if p.kind != "tool_result"]})
    if len(kept.parts) != len(parts) and kept.provider_details:
        kept = kept.model_copy(update={"provider_details": None})  # block places moved
    content = encode_blocks(kept, "message", w, names)
    if resp.id is not None:
        w.add("response_id_dropped", "id", "a ConverseResponse has no id; it was not sent")
    if resp.model is not None:
        w.add(
            "model_dropped",
            "model",
            "a ConverseResponse names no model (the model id is in the request URL)",
        )
    metrics = extra.pop("metrics", None)
    if not isinstance(metrics, dict):
        metrics = {"latencyMs": 0}
        w.add(
            "metrics_filled_in",
            "provider_details.bedrock.metrics",
            "a ConverseResponse requires metrics; latencyMs 0 was sent",
        )
    body: dict[str, Any] = {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": _stop_reason(resp, extra.pop("stopReason", None), w),
        "usage": _usage(resp, extra, w),
        "metrics": metrics,
    }
    return with_extra(body, extra)
