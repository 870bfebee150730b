"""Helpers the codecs share for a vendor's wire objects: its own provider_details in and out,
vendor-only fields stashed and put back, optional fields read with their type checked.

Each takes the protocol's name; a codec binds it once (``anthropic/parts.py``,
``bedrock/parts/``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from flowdebug import jsontext
from flowdebug.model import Details
from flowdebug.protocols.base import Warnings, expect, known


def own(protocol: str, details: Details, w: Warnings, path: str) -> dict[str, Any]:
    """``protocol``'s own provider_details; warns once when another protocol's details are
    left behind."""
    if not details:
        return {}
    others = sorted(k for k in details if k != protocol)
    if others:
        w.add(
            "provider_details_dropped",
            path,
            f"{', '.join(others)} details have no {known(protocol).short} field and were dropped",
        )
    mine = details.get(protocol)
    return dict(mine) if isinstance(mine, dict) else {}


def stash(
    protocol: str, obj: dict[str, Any], handled: Collection[str], *, keep_null: bool = False
) -> Details:
    """The vendor-only fields of ``obj`` (those outside ``handled``) as provider_details;
    null fields are left out unless ``keep_null``."""
    extra = {k: v for k, v in obj.items() if k not in handled and (keep_null or v is not None)}
    return {protocol: extra} if extra else None


def with_extra(block: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``block`` plus stashed vendor fields; the canonical values win on a clash."""
    for key, value in extra.items():
        block.setdefault(key, value)
    return block


def optional(
    protocol: str, obj: dict[str, Any], key: str, path: str, typ: type | tuple[type, ...]
) -> Any:
    """``obj[key]`` checked against ``typ``, or None when the key is absent or null."""
    return None if obj.get(key) is None else expect(protocol, obj[key], f"{path}.{key}", typ)


def exact_json(text: str) -> Any:
    """The JSON object or array ``text`` spells exactly (as ``json.dumps`` writes it), else
    None: a tool result sent as text that a vendor can carry as a JSON value (Bedrock's
    ``{"json": ...}`` block, Gemini's ``response``) and read back as the same text."""
    try:
        value = jsontext.embedded(text)
    except ValueError:
        return None
    if isinstance(value, dict | list) and json.dumps(value, ensure_ascii=False) == text:
        return value
    return None


def arguments_from_text(text: str) -> tuple[dict[str, Any], str | None]:
    """A call's arguments sent as JSON text (OpenAI Chat and Responses): ``(arguments,
    raw_arguments)``. Text that is not a JSON object is kept raw; ``""`` (a streamed call
    whose argument deltas have not arrived) means no arguments."""
    if text == "":
        return {}, None
    try:
        value = jsontext.embedded(text)
    except ValueError:
        return {}, text
    return (value, None) if isinstance(value, dict) else ({}, text)


def results_left_out(parts: list[Any], w: Warnings, why: str) -> None:
    """Warn ``tool_result_dropped`` at each result of a model turn's ``parts`` (a model turn
    holds none), and ``parts_shifted`` when parts after a left-out one move up."""
    gone = [j for j, p in enumerate(parts) if p.kind == "tool_result"]
    for j in gone:
        w.add("tool_result_dropped", f"message.parts[{j}]", why)
    if gone and any(p.kind != "tool_result" for p in parts[gone[0] + 1 :]):
        w.add("parts_shifted", "message", "the parts after a left-out result move up")


def stop_filled_in(resp: Any, w: Warnings, derived: str | None = None) -> str:
    """The stop reason sent for a turn (a ``ModelResponse``) that has none where the target
    requires one: ``derived`` when given, else ``tool_use`` if it holds calls, else
    ``end_turn``; warned, since it reads back where the source had none."""
    derived = derived or ("tool_use" if resp.message.tool_calls else "end_turn")
    w.add(
        "stop_reason_filled_in",
        "stop_reason",
        f"the turn has no stop reason and {known(w.protocol).short} requires one; sent as "
        f"{derived}",
    )
    return derived


def empty_user_joined(path: str, w: Warnings) -> None:
    """The empty user message at ``path`` joined the user turn of results (the target's roles
    alternate): read back, it is gone and the messages after it move up."""
    w.add("messages_merged", path, "an empty user message joins the user turn of the results")
    w.add("messages_renumbered", "messages", f"the messages after {path} move up")


def tool_metadata(tool: Any) -> list[str]:
    """The fields of a canonical ``Tool`` a vendor without them leaves out (set, even when
    empty: an empty ``output_schema`` is still one)."""
    return [f for f in ("title", "annotations", "output_schema") if getattr(tool, f) is not None]


def result_items_shifted(result: Any, path: str, w: Warnings, first: int) -> None:
    """Name a tool result's content (``result`` at ``path``) when images left out of it (warned
    since the warning numbered ``first``) move the items after them up."""
    where = re.compile(re.escape(path) + r"\.content\[(\d+)\]")
    gone = sorted(
        {
            int(m[1])
            for x in w.items[first:]
            if x.code == "image_in_result_dropped" and (m := where.fullmatch(x.path))
        }
    )
    if gone and any(j not in gone for j in range(gone[0] + 1, len(result.content))):
        w.add("parts_shifted", f"{path}.content", "the items after a left-out image move up")
