"""A session's wire exchanges as it keeps them in memory (``SessionState.exchanges``).

Each request of a tool loop carries the whole history again, so a session that kept every
exchange as the wire gave it would grow with the square of its turns (a 2,000-exchange
recording, about a gigabyte). A session keeps them shared instead:

- a list of a request (its history, its tools) that starts with the items of the previous
  exchange's list under the same key holds those very objects, so only what a turn adds is
  new (:func:`shared`);
- an exact body text (``raw_request``, ``raw_response``) that is the compact JSON of its parsed
  body beside it (``request``, ``response``), as httpx sends it, is kept as ``{"$json_of":
  "request"}``: :func:`raw_text` gives the text back, and :func:`expanded` the exchange as it
  went, which is what the store saves and exports write, byte for byte.

Exchanges are read, never changed in place: they share their parts.
"""

from __future__ import annotations

import operator
from typing import Any

from pydantic import JsonValue

from flowdebug import jsontext

JSON_OF = "$json_of"
RAW = ("raw_request", "raw_response")


def compact(value: Any) -> str | None:
    """``value``'s compact JSON text, None when it has none (NaN, Infinity)."""
    try:
        return jsontext.compact(value)
    except (ValueError, TypeError, RecursionError):
        return None


def parsed_key(raw: str) -> str:
    """The key of the parsed body a raw text's key stands beside (``raw_request``: request)."""
    return raw.removeprefix("raw_")


def is_reference(value: Any) -> bool:
    """True when ``value`` is a raw text kept as a reference to its parsed body."""
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get(JSON_OF), str)


def raw_text(exchange: dict[str, Any], name: str) -> str | None:
    """The exact text of ``exchange[name]`` (``raw_request``, ``raw_response``), None when the
    exchange keeps none as text."""
    value = exchange.get(name)
    if isinstance(value, dict) and is_reference(value):
        return compact(exchange.get(value[JSON_OF]))
    return value if isinstance(value, str) else None


def expanded(exchange: dict[str, Any]) -> dict[str, Any]:
    """``exchange`` as it went on the wire: every raw text a reference holds written out, the
    keys in their order."""
    if not any(is_reference(exchange.get(name)) for name in RAW):
        return exchange
    return {k: raw_text(exchange, k) if k in RAW else v for k, v in exchange.items()}


def same_json(a: Any, b: Any) -> bool:
    """``a`` and ``b`` have the same JSON text: equal, keys in the same order, numbers of the
    same spelling. Shared parts are the same objects, so this looks at the fresh ones only."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return list(a) == list(b) and all(same_json(a[k], b[k]) for k in a)
    if type(a) is list:
        return len(a) == len(b) and (
            all(map(operator.is_, a, b)) or all(same_json(x, y) for x, y in zip(a, b, strict=True))
        )
    return bool(a == b) and (type(a) is not float or repr(a) == repr(b))


def _extended(new: list[Any], old: list[Any]) -> list[Any]:
    """``new`` holding ``old``'s objects where it starts with the same items."""
    # The same JSON text, not Python's == (True == 1 == 1.0): a kept request shows what was sent.
    if len(new) < len(old) or not same_json(new[: len(old)], old):
        return new
    return [*old, *new[len(old) :]]


def _shared_body(body: Any, before: Any) -> Any:
    if not isinstance(body, dict) or not isinstance(before, dict):
        return body
    return {
        k: _extended(v, before[k]) if isinstance(v, list) and isinstance(before.get(k), list) else v
        for k, v in body.items()
    }


def shared(
    exchange: dict[str, JsonValue], previous: dict[str, JsonValue] | None
) -> dict[str, JsonValue]:
    """``exchange`` as a session keeps it (module doc), given the exchange kept before it of
    the same protocol (None: the first)."""
    out = dict(exchange)
    if previous is not None and previous.get("protocol") == exchange.get("protocol"):
        for key in ("request", "codec_request"):
            if key in out:
                out[key] = _shared_body(out[key], previous.get(key))
    for name in RAW:
        text = out.get(name)
        body = out.get(parsed_key(name))
        if isinstance(text, str) and isinstance(body, dict | list) and compact(body) == text:
            out[name] = {JSON_OF: parsed_key(name)}
    return out


def last_of(exchanges: list[dict[str, JsonValue]], protocol: Any) -> dict[str, JsonValue] | None:
    """The newest of ``exchanges`` of ``protocol``."""
    return next((x for x in reversed(exchanges) if x.get("protocol") == protocol), None)
