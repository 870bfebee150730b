"""Gemini ``Part`` <-> canonical parts (:mod:`.encode`, :mod:`.decode`), shared by requests,
responses and streams, with the ``provider_details`` helpers both directions use.

``provider_details["gemini"]`` on a canonical part holds the part's own wire fields that have
no canonical home (``thoughtSignature`` above all), verbatim and merged back on encode. The
nested keys ``functionCall``, ``functionResponse``, ``inlineData``, ``fileData`` hold the
extra fields of that nested object. Two markers are not wire fields:

- ``syntheticId: true`` on a call or result whose wire object had no ``id``. A call then gets
  the invented canonical id ``gemini_call_<content>_<part>`` (its indexes in ``contents`` and
  ``parts``; ``gemini_call_<part>`` in responses), which is never sent back; a result takes its
  call's id (or an invented one when no call matches) and sends an id only when its call has
  a real one.
- ``responseKey`` on a result: the key that wrapped the value in ``response`` when it was not
  ``output`` (``"result"``, as the SDK's automatic function calling writes), or null when the
  whole ``response`` object was the value.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ConfigDict, TypeAdapter, ValidationError

from flowdebug.protocols.base import Warnings

PROTOCOL = "gemini"
_MARKERS = {"syntheticId", "responseKey"}
_NESTED = ("functionCall", "functionResponse", "inlineData", "fileData")

# thoughtSignature is ``bytes`` in the SDK, base64 on the wire (standard or URL-safe alphabet,
# padding optional); validate exactly as the SDK does.
_B64: TypeAdapter[bytes] = TypeAdapter(bytes, config=ConfigDict(val_json_bytes="base64"))


def is_base64(text: str) -> bool:
    try:
        _B64.validate_json(json.dumps(text))
    except ValidationError:
        return False
    return True


def own(details: dict[str, Any] | None) -> dict[str, Any]:
    """This protocol's entry of a ``provider_details`` dict (empty when absent)."""
    mine = (details or {}).get(PROTOCOL)
    return dict(mine) if isinstance(mine, dict) else {}


def wire_extras(details: dict[str, Any] | None, nested: str | None = None) -> dict[str, Any]:
    """Wire fields stored by a decoder: the part-level ones, or those of ``nested``."""
    mine = own(details)
    if nested is not None:
        extra = mine.get(nested)
        return dict(extra) if isinstance(extra, dict) else {}
    return {k: v for k, v in mine.items() if k not in _MARKERS and k not in _NESTED}


def with_details(extras: dict[str, Any]) -> dict[str, Any] | None:
    """``provider_details`` holding ``extras`` under our key, or None when there are none."""
    return {PROTOCOL: extras} if extras else None


def check_foreign(details: dict[str, Any] | None, path: str, w: Warnings) -> None:
    """Warn once when ``details`` carries another protocol's data, which Gemini cannot use."""
    others = sorted(k for k in details or {} if k != PROTOCOL)
    if others:
        w.add(
            "provider_details_dropped",
            path,
            f"Gemini cannot carry {', '.join(others)} provider details",
        )


def renumbered(wires: list[Any], path: str, w: Warnings) -> None:
    """Warn when parts left out of a message (each named by its own warning) make the parts
    after them move up: their canonical paths change too."""
    dropped = [i for i, wire in enumerate(wires) if not wire]
    if dropped and any(wires[dropped[0] :]):
        w.add(
            "parts_renumbered",
            f"{path}.parts",
            f"{len(dropped)} part(s) were left out, so the parts after them moved up",
        )


def extras(obj: dict[str, Any], handled: set[str]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in handled}
