"""Small helpers every Bedrock module shares: provider_details in and out, optional fields.
Tool names and call ids are kept legal by ``base.Renamer`` (Bedrock's rules in its facts)."""

from __future__ import annotations

from typing import Any

from flowdebug.model import Details
from flowdebug.protocols.base import Warnings, expect
from flowdebug.protocols.bedrock.facts import PROTOCOL


def own(details: Details, w: Warnings, path: str) -> dict[str, Any]:
    """Our own provider_details; warns once when another protocol's details are left behind."""
    if not details:
        return {}
    others = sorted(k for k in details if k != PROTOCOL)
    if others:
        w.add(
            "provider_details_dropped",
            path,
            f"{', '.join(others)} details have no Bedrock field and were dropped",
        )
    mine = details.get(PROTOCOL)
    return dict(mine) if isinstance(mine, dict) else {}


def stash(obj: dict[str, Any], known: tuple[str, ...] | frozenset[str]) -> Details:
    """The vendor-only fields of ``obj`` (those outside ``known``) as provider_details."""
    extra = {k: v for k, v in obj.items() if k not in known}
    return {PROTOCOL: extra} if extra else None


def with_extra(block: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``block`` plus stashed vendor fields; the canonical values win on a clash."""
    for key, value in extra.items():
        block.setdefault(key, value)
    return block


def optional(obj: dict[str, Any], key: str, path: str, typ: type | tuple[type, ...]) -> Any:
    """``obj[key]`` checked against ``typ``, or None when the key is absent or null."""
    return None if obj.get(key) is None else expect(PROTOCOL, obj[key], f"{path}.{key}", typ)
