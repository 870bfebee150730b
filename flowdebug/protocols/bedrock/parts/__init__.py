"""Canonical parts <-> Bedrock content blocks (``{"text"}``, ``{"toolUse"}``, ``{"toolResult"}``,
``{"reasoningContent"}``, ``{"image"}``; :mod:`.encode`, :mod:`.decode`): one key per block,
named by its type, and the small helpers every Bedrock module shares (provider_details in and
out, optional fields).

Unknown keys never vanish: vendor-only fields ride in ``provider_details["bedrock"]`` and
blocks with no canonical form (``cachePoint``, ``document``, ``guardContent`` ...) keep their
place in the message's ``provider_details``. Tool names and call ids are kept legal by
``base.Renamer`` (Bedrock's rules in its facts).

Blobs (image bytes, redacted reasoning) travel as base64 strings, as in the JSON body the
service receives; boto3 callers pass bytes instead.
"""

from __future__ import annotations

from typing import Any

from flowdebug.errors import CodecError
from flowdebug.model import Details
from flowdebug.protocols import wire_helpers
from flowdebug.protocols.base import Warnings, expect

# with_extra: every Bedrock module puts extras back with it, beside the helpers here.
from flowdebug.protocols.wire_helpers import with_extra as with_extra

# A Text part in a tool result that came from a {"json": ...} block goes back as one.
JSON_MARK = "json"
PROTOCOL = "bedrock"
# botocore ContentBlock members (a union: one key per block, no "type").
BLOCK_NAMES = frozenset(
    {"text", "image", "document", "video", "audio", "toolUse", "toolResult", "guardContent",
     "cachePoint", "reasoningContent", "citationsContent", "searchResult", "toolAddition",
     "toolRemoval"}
)  # fmt: skip
# Blocks no other vendor spells this way (Gemini parts also have a bare "text").
OWN_BLOCKS = BLOCK_NAMES - {"text"}
# botocore ToolResultContentBlock members.
RESULT_BLOCK_NAMES = frozenset({"json", "text", "image", "document", "video", "searchResult"})
# botocore ImageFormat.
IMAGE_FORMATS = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}
MEDIA_FORMATS = {media: fmt for fmt, media in IMAGE_FORMATS.items()}


def own(details: Details, w: Warnings, path: str) -> dict[str, Any]:
    """Bedrock's own provider_details (:func:`flowdebug.protocols.wire_helpers.own`)."""
    return wire_helpers.own(PROTOCOL, details, w, path)


def stash(obj: dict[str, Any], handled: tuple[str, ...] | frozenset[str]) -> Details:
    """The vendor-only fields of ``obj`` (those outside ``handled``), nulls included."""
    return wire_helpers.stash(PROTOCOL, obj, handled, keep_null=True)


def optional(obj: dict[str, Any], key: str, path: str, typ: type | tuple[type, ...]) -> Any:
    """``obj[key]`` checked against ``typ``, or None when the key is absent or null."""
    return wire_helpers.optional(PROTOCOL, obj, key, path, typ)


def mine(details: Details) -> dict[str, Any]:
    """Bedrock's own entry of ``details`` (empty when there is none)."""
    mine = (details or {}).get(PROTOCOL)
    return mine if isinstance(mine, dict) else {}


def one_key(block: Any, path: str, allowed: frozenset[str], what: str) -> tuple[str, Any]:
    """A union member: exactly one key, named by its type (``{"toolUse": {...}}``)."""
    expect(PROTOCOL, block, path, dict)
    if "type" in block and "type" not in allowed:
        raise CodecError(
            PROTOCOL,
            f"{path}.type",
            f"Bedrock {what}s have no type field; a block is one key such as "
            f"{{'text': ...}} or {{'toolUse': ...}} (this looks like another vendor's block)",
        )
    keys = [k for k in block if block[k] is not None]
    if len(keys) != 1:
        raise CodecError(
            PROTOCOL, path, f"a {what} has exactly one member, got {sorted(block) or 'none'}"
        )
    return keys[0], block[keys[0]]
