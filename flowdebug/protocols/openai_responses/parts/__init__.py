"""OpenAI Responses items <-> canonical parts (:mod:`.encode`, :mod:`.decode`), and the wire
fields they share with the hosted, request and response modules: where our
own details ride, the ids we make up (and recognise) and call arguments (error results:
:mod:`flowdebug.protocols.error_results`)."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from flowdebug.model import Image, ToolCall

PROTOCOL = "openai-responses"
DEFAULT_MODEL = "gpt-4.1"

# Keys an item decoder maps to canonical fields; anything else on an item survives in
# provider_details.
CALL_KEYS = {"type", "id", "call_id", "name", "arguments", "input", "status"}
OUTPUT_KEYS = {"type", "call_id", "output", "name"}
REASONING_KEYS = {"type", "id", "summary", "encrypted_content"}


def own(obj: Any) -> dict[str, Any]:
    """A copy of ``obj``'s provider_details under our own key (``{}`` when none)."""
    mine = (obj.provider_details or {}).get(PROTOCOL)
    return dict(mine) if isinstance(mine, dict) else {}


def details(values: dict[str, Any]) -> dict[str, Any] | None:
    """provider_details holding ``values`` under our key, or None when there is nothing."""
    return {PROTOCOL: values} if values else None


def extras(obj: dict[str, Any], known: set[str] | tuple[str, ...]) -> dict[str, Any]:
    """The fields of ``obj`` we do not map, to keep in provider_details. A null optional
    field means the same as an absent one (SDK dumps are full of them), so it is not kept."""
    return {k: v for k, v in obj.items() if k not in known and v is not None}


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:32]


def derived_id(prefix: str, basis: str) -> str:
    """The item id we make up for content that arrived without one."""
    return f"{prefix}_{_digest(basis)}"


class DerivedIds:
    """The item ids one payload has used so far, and the derived ids it makes up for content
    that arrived without one: equal contents (two "ok" messages) get distinct ids,
    ``derived_id(prefix, basis)``, then ``basis`` with ``#1``, ``#2``... appended, the first
    not used yet, and the decoder recognises them. Ids are only ever added, so the search
    for a basis starts where its last one ended: linear in the payload, not quadratic in the
    number of equal contents."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        self._tried: dict[tuple[str, str], int] = {}  # (prefix, basis) -> its n last returned

    def add(self, item_id: str) -> None:
        self.used.add(item_id)

    def next(self, prefix: str, basis: str) -> str:
        """The derived id of ``basis`` that is not used yet (not added: the caller adds)."""
        n = self._tried.get((prefix, basis), 0)
        candidate = derived_id(prefix, f"{basis}\x00#{n}" if n else basis)
        while candidate in self.used:
            n += 1
            candidate = derived_id(prefix, f"{basis}\x00#{n}")
        self._tried[(prefix, basis)] = n
        return candidate


def call_item_id(call_id: str) -> str:
    """The ``fc_`` item id of a call that carries none: readable when the call id allows."""
    if re.fullmatch(r"[A-Za-z0-9_-]{1,60}", call_id):
        return f"fc_{call_id}"
    return derived_id("fc", call_id)


def reasoning_basis(summary: list[str], encrypted: str | None) -> str:
    return f"{encrypted or ''}\x00" + "\n\n".join(summary)


def arguments_text(call: ToolCall) -> str:
    """What the model sent: the raw string when it was not a JSON object, else compact JSON."""
    if call.raw_arguments is not None:
        return call.raw_arguments
    return json.dumps(call.arguments, separators=(",", ":"), ensure_ascii=False)


def image_url(image: Image) -> str | None:
    if image.data is not None:
        return f"data:{image.media_type};base64,{image.data}"
    return image.url


def joined(parts: list[Any]) -> str:
    return "\n\n".join(
        p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
    )
