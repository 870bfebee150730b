"""Responses fragments: one input item, or a Response's bare ``output`` array, as people
paste them from docs and logs, turned into the whole payload they stand for.

Strict on purpose: an item must say ``"type"`` (or be a message whose content parts are
Responses ``input_text`` / ``output_text`` / ``refusal`` parts), so an OpenAI Chat message,
an Anthropic message (``text`` / ``tool_use`` blocks) or a Gemini content (``parts``) is never
claimed.
"""

from __future__ import annotations

import json
from typing import Any

from flowdebug.protocols.openai_responses.hosted import HOSTED_NAMES, HOSTED_REPLIES
from flowdebug.protocols.openai_responses.parts import DEFAULT_MODEL, derived_id

# Items only a Response's output holds (the model wrote them); everything else is input.
_OUTPUT_ITEMS = {"function_call", "custom_tool_call", "reasoning", *HOSTED_NAMES}
_INPUT_ITEMS = {"function_call_output", "custom_tool_call_output", *HOSTED_REPLIES}
_PART_TYPES = {"input_text", "output_text", "refusal", "input_image", "input_file"}


def _item_type(item: Any) -> str | None:
    """The item's type when ``item`` is unmistakably a Responses item, else None."""
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if isinstance(kind, str) and (kind in _OUTPUT_ITEMS or kind in _INPUT_ITEMS):
        return kind
    if kind not in ("message", None) or not isinstance(item.get("role"), str):
        return None
    content = item.get("content")
    if (
        isinstance(content, list)
        and content
        and all(
            isinstance(c, dict) and isinstance(c.get("type"), str) and c.get("type") in _PART_TYPES
            for c in content
        )
    ):
        return "message"
    # {"type": "message", "role": ..., "content": "text"} is Responses-only too.
    return "message" if kind == "message" and isinstance(content, str) else None


def _is_output(item: dict[str, Any], kind: str) -> bool:
    if kind == "message":
        return item.get("role") == "assistant"
    return isinstance(kind, str) and kind in _OUTPUT_ITEMS


def fragment(payload: Any) -> tuple[dict[str, Any], str] | None:
    """The request (or Response) a Responses fragment stands for, and what was assumed."""
    items = payload if isinstance(payload, list) else [payload]
    kinds = [_item_type(i) for i in items]
    if not items or any(k is None for k in kinds):
        return None
    outputs = [_is_output(i, k) for i, k in zip(items, kinds, strict=True)]  # type: ignore[arg-type]
    if isinstance(payload, list) and all(outputs):
        response = {
            "id": derived_id("resp", json.dumps(items, sort_keys=True, ensure_ascii=False)),
            "object": "response",
            "created_at": 0,
            "status": "completed",
            "model": DEFAULT_MODEL,
            "output": items,
        }
        return response, (
            f"a bare Responses output array of {len(items)} item(s): read as a Response "
            f"(model {DEFAULT_MODEL} assumed)"
        )
    what = f"one Responses {kinds[0]} item" if len(items) == 1 else f"{len(items)} input items"
    return {"model": DEFAULT_MODEL, "input": items}, (
        f"{what}: read as a request whose input holds only it (model {DEFAULT_MODEL} assumed)"
    )
