"""A conversation as one OpenAI chat fine-tuning example (one line of a supervised JSONL file).

The documented shape (API reference "The chat input format": the per-line training example of
a fine-tuning input file for chat models using the supervised method; guide "Fine-tuning",
section on tool calling): ``{"messages": [...], "tools": [...], "parallel_tool_calls": bool}``,
where an assistant message may carry ``tool_calls`` (``arguments`` a JSON string) and a
``weight`` of 0 or 1, and each result is a ``{"role": "tool", "tool_call_id", "content"}``
message. Input messages hold text or images only; the line names no model.

The messages are the Chat encoding of the conversation (its warnings kept: thinking, images in
tool results, hosted tool calls...), minus what a training line has no place for: a field
no message of the format holds is left out and named (``finetune_field_dropped``), a tool
result's image or non-text part too, and a line without an assistant message to learn from
is said to be one (``finetune_no_assistant``).
"""

from __future__ import annotations

from typing import Any

from flowdebug.model import Conversation
from flowdebug.protocols.base import Converted, Warnings
from flowdebug.protocols.openai_chat.request import encode_request

PROTOCOL = "openai-chat"
FORMAT = "openai-finetune"
# What each message of the format may hold [DOC API reference, fine-tuning chat input].
FIELDS = {
    "system": {"role", "content", "name"},
    "developer": {"role", "content", "name"},
    "user": {"role", "content", "name"},
    "assistant": {"role", "content", "name", "refusal", "tool_calls", "function_call", "weight"},
    "tool": {"role", "content", "tool_call_id"},
}
TOP = ("messages", "tools", "parallel_tool_calls", "functions")
# The request's own envelope (the model, sampling): a training line has none, nothing is lost.
_ENVELOPE = {"model", "max_tokens", "max_completion_tokens", "temperature", "tool_choice"}
_NOT_LOST = ("model_filled_in", "model_replaced")


def finetune_example(conv: Conversation) -> Converted[dict[str, Any]]:
    """The training line for ``conv`` (a dict: ``json.dumps`` it on one line) and what it
    could not hold."""
    body, encoded = encode_request(conv)
    w = Warnings(PROTOCOL)
    w.items = [x for x in encoded.items if x.code not in _NOT_LOST]
    for key in body:
        if key not in TOP and key not in _ENVELOPE:
            w.add("finetune_field_dropped", key, f"a training line has no {key!r}: left out")
    messages = []
    for i, message in enumerate(body.get("messages", [])):
        role = message.get("role")
        allowed = FIELDS.get(role, set())
        kept = {k: v for k, v in message.items() if k in allowed}
        for key in message.keys() - allowed:
            w.add(
                "finetune_field_dropped",
                f"messages[{i}].{key}",
                f"a {role} message of a training line has no {key!r}: left out",
            )
        content = kept.get("content")
        if role == "tool" and isinstance(content, list):
            texts = [p for p in content if isinstance(p, dict) and p.get("type") == "text"]
            if len(texts) < len(content):
                w.add(
                    "finetune_field_dropped",
                    f"messages[{i}].content",
                    "a tool message of a training line holds text only: its other parts "
                    "were left out",
                )
            kept["content"] = "".join(str(p.get("text", "")) for p in texts)
        messages.append(kept)
    if not any(m.get("role") == "assistant" for m in messages):
        w.add(
            "finetune_no_assistant",
            "messages",
            "the conversation has no assistant message: the line has nothing to train on",
        )
    line: dict[str, Any] = {"messages": messages}
    line |= {k: body[k] for k in TOP[1:] if k in body}
    return w.wrap(line)
