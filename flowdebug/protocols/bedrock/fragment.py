"""Recognising Bedrock Converse payloads and fragments without claiming another vendor's.

Bedrock blocks are one-key objects named by their type (``{"toolUse": {...}}``) and never
have a ``type`` field (Anthropic and OpenAI blocks do). Gemini also has ``toolConfig`` and
bare ``{"text"}`` parts, but holds them in ``contents[].parts``, never in
``messages[].content``; its toolConfig has ``functionCallingConfig``, not ``tools``.
"""

from __future__ import annotations

from typing import Any

from flowdebug.protocols.bedrock.parts import BLOCK_NAMES, OWN_BLOCKS
from flowdebug.protocols.bedrock.stream import EVENT_NAMES

# Top-level keys of a ConverseRequest (botocore) besides messages.
REQUEST_KEYS = frozenset(
    {"modelId", "messages", "system", "inferenceConfig", "toolConfig", "guardrailConfig",
     "additionalModelRequestFields", "promptVariables", "additionalModelResponseFieldPaths",
     "requestMetadata", "performanceConfig", "serviceTier", "outputConfig",
     "projectIdentifier"}
)  # fmt: skip


def is_block(block: Any) -> bool:
    """A Bedrock content block: an object with exactly one ContentBlock member, no type."""
    return (
        isinstance(block, dict)
        and len(block) == 1
        and next(iter(block)) in BLOCK_NAMES
        and "type" not in block
    )


def is_message(msg: Any) -> bool:
    return (
        isinstance(msg, dict)
        and set(msg) == {"role", "content"}
        and msg["role"] in ("user", "assistant")
        and isinstance(msg["content"], list)
        and all(is_block(b) for b in msg["content"])
    )


def _tool_config(config: Any) -> bool:
    tools = config.get("tools") if isinstance(config, dict) else None
    return isinstance(tools, list) and any(isinstance(t, dict) and "toolSpec" in t for t in tools)


def is_request(p: Any) -> bool:
    if not isinstance(p, dict) or not isinstance(p.get("messages"), list):
        return False
    if not set(p) <= REQUEST_KEYS:
        return False  # max_tokens, tools, contents, model ...: another vendor's request
    messages = p["messages"]
    if messages and all(is_message(m) for m in messages):
        return True
    return not messages and (_tool_config(p.get("toolConfig")) or "inferenceConfig" in p)


def is_response(p: Any) -> bool:
    if not isinstance(p, dict) or not isinstance(p.get("output"), dict):
        return False
    message = p["output"].get("message")
    return (
        is_message(message)
        and message["role"] == "assistant"
        and ("stopReason" in p or "usage" in p or "metrics" in p)
    )


# The ConverseStream event a body is, by the members only it has (the service's padding "p"
# aside): loggers and LiteLLM keep the bodies without their event-type keys.
_BARE_EVENTS = (
    ("contentBlockStart", frozenset({"start", "contentBlockIndex"})),
    ("contentBlockDelta", frozenset({"delta", "contentBlockIndex"})),
    ("contentBlockStop", frozenset({"contentBlockIndex"})),
    ("messageStart", frozenset({"role"})),
)
_STOP_KEYS = frozenset({"stopReason", "additionalModelResponseFields"})
_METADATA_KEYS = frozenset({"usage", "metrics", "trace", "performanceConfig", "serviceTier"})


def _event_name(body: Any) -> str | None:
    if not isinstance(body, dict):
        return None
    keys = set(body) - {"p"}
    for name, members in _BARE_EVENTS:
        if keys == members:
            return name
    if "stopReason" in keys and keys <= _STOP_KEYS:
        return "messageStop"
    if keys and keys <= _METADATA_KEYS and ("usage" in keys or "metrics" in keys):
        return "metadata"
    return None


def bare_events(payload: Any) -> list[dict[str, Any]] | None:
    """A list of ConverseStream event bodies without their event-type keys, each wrapped in
    its own (None unless every item is one, or already wrapped, and one is a content block
    event: ``contentBlockIndex`` is Bedrock's alone)."""
    if not isinstance(payload, list) or not payload:
        return None
    names = [_event_name(e) for e in payload]
    if not any(n is not None and n.startswith("contentBlock") for n in names):
        return None
    wrapped = []
    for event, name in zip(payload, names, strict=True):
        if name is not None:
            wrapped.append({name: event})
        elif isinstance(event, dict) and len(event) == 1 and next(iter(event)) in EVENT_NAMES:
            wrapped.append(event)
        else:
            return None
    return wrapped


def fragment(payload: Any) -> tuple[Any, str] | None:
    """The request or response a fragment stands for and what was assumed, else None."""
    events = bare_events(payload)
    if events is not None:
        return events, (
            "Bedrock ConverseStream event bodies without their event-type keys (as loggers and "
            "LiteLLM keep them): each read as the event its members make it"
        )
    if isinstance(payload, list):
        # A bare block list: only Bedrock-only blocks make it Bedrock's (a list of {"text"}
        # objects is also a list of Gemini parts).
        if not payload or not all(is_block(b) for b in payload):
            return None
        if not any(next(iter(b)) in OWN_BLOCKS for b in payload):
            return None
        if any("toolResult" in b for b in payload):
            return (
                {"messages": [{"role": "user", "content": payload}]},
                "a Bedrock content block list with tool results: read as a request whose one "
                "user message holds it",
            )
        return (
            {"output": {"message": {"role": "assistant", "content": payload}}},
            "a Bedrock content block list: read as a ConverseResponse holding only it; its "
            "stopReason, usage and metrics are unknown",
        )
    if not is_message(payload):
        return None
    if payload["role"] == "assistant":
        return (
            {"output": {"message": payload}},
            "one Bedrock assistant message: read as a ConverseResponse holding it; its "
            "stopReason, usage and metrics are unknown",
        )
    return (
        {"messages": [payload]},
        "one Bedrock user message: read as a Converse request holding only it (no system, "
        "toolConfig or inferenceConfig)",
    )
