"""Small helpers every Bedrock module shares: provider_details in and out, optional fields.
Tool names and call ids are kept legal by ``base.Renamer`` (Bedrock's rules in its facts)."""

from __future__ import annotations

from typing import Any

from flowdebug.model import Details
from flowdebug.protocols import wire_helpers
from flowdebug.protocols.base import Warnings
from flowdebug.protocols.bedrock.facts import PROTOCOL
from flowdebug.protocols.wire_helpers import with_extra

__all__ = ["optional", "own", "stash", "with_extra"]


def own(details: Details, w: Warnings, path: str) -> dict[str, Any]:
    """Bedrock's own provider_details (:func:`flowdebug.protocols.wire_helpers.own`)."""
    return wire_helpers.own(PROTOCOL, details, w, path)


def stash(obj: dict[str, Any], handled: tuple[str, ...] | frozenset[str]) -> Details:
    """The vendor-only fields of ``obj`` (those outside ``handled``), nulls included."""
    return wire_helpers.stash(PROTOCOL, obj, handled, keep_null=True)


def optional(obj: dict[str, Any], key: str, path: str, typ: type | tuple[type, ...]) -> Any:
    """``obj[key]`` checked against ``typ``, or None when the key is absent or null."""
    return wire_helpers.optional(PROTOCOL, obj, key, path, typ)
