"""Helpers the codecs share for a vendor's wire objects: its own provider_details in and out,
vendor-only fields stashed and put back, optional fields read with their type checked.

Each takes the protocol's name; a codec binds it once (``anthropic/parts.py``,
``bedrock/parts.py``).
"""

from __future__ import annotations

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
