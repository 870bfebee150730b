"""What every codec shares: the interface, the one registry of vendors, conversion warnings
and naming helpers.

A codec is pure: JSON-compatible dicts in, dicts out, no network. Each protocol module
exposes one ``CODEC`` object satisfying :class:`Codec`; ``protocols/__init__.py`` registers
the six vendors' codecs (one line each) in :data:`PROTOCOLS`, which everything that lists,
counts or looks up vendors reads (directly or through ``flowdebug.protocols``).
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

from flowdebug.errors import CodecError
from flowdebug.model import Conversation, ModelResponse, Thinking
from flowdebug.protocols.facts import Facts
from flowdebug.protocols.warning_codes import WarningCode

T = TypeVar("T")

# request: what the runtime sends the model API; response: one model turn; stream: the JSON
# array of SSE event objects (the ``data:`` payloads, in wire order). MCP adds its own kinds.
Kind = Literal[
    "request", "response", "stream", "tools_list", "tools_call", "call_result", "transcript"
]


@dataclass(frozen=True)
class ConversionWarning:
    """Something the target protocol cannot carry, and what was done about it.

    ``code`` is stable for tests and filtering: one of the closed set
    :data:`~flowdebug.protocols.warning_codes.WarningCode`, each explained there. ``path`` points
    into the canonical object (``messages[2].parts[0]``, ``message.parts[1]`` in a response,
    ``usage.reasoning_tokens``, ``model``): every canonical path a conversion changes is that
    path or lies below it (``tests/protocols/test_no_silent_change.py``). ``$`` names the whole
    payload.
    """

    protocol: str
    code: WarningCode
    path: str
    message: str

    def __str__(self) -> str:
        return f"warning {self.protocol} {self.path}: {self.message} [{self.code}]"


@dataclass
class Converted(Generic[T]):
    """A conversion's value plus everything it could not carry."""

    value: T
    warnings: list[ConversionWarning] = field(default_factory=list)


class Codec(Protocol):
    """The shape of every protocol module's ``CODEC``."""

    name: str  # CLI spelling: anthropic, openai-chat, openai-responses, gemini, mcp, bedrock
    title: str  # what the UI shows
    facts: Facts  # everything else the code outside the codec needs to know

    def encode_request(self, conv: Conversation) -> Converted[Any]: ...
    def decode_request(self, payload: Any) -> Converted[Conversation]: ...
    def encode_response(self, resp: ModelResponse) -> Converted[Any]: ...
    def decode_response(self, payload: Any) -> Converted[ModelResponse]: ...
    def encode_stream(self, resp: ModelResponse) -> Converted[list[Any]]: ...
    def decode_stream(self, events: list[Any]) -> Converted[ModelResponse]: ...
    def detect(self, payload: Any) -> Kind | None: ...
    def fragment(self, payload: Any) -> tuple[Any, str] | None:
        """When ``payload`` is a fragment of this protocol (one message, item or content
        entry as pasted from docs and logs, or a response's bare content array): the whole
        request or response payload it stands for, and one line saying what was assumed
        (``"one Anthropic assistant message: read as a request holding only it"``). Else None.
        """
        ...


PROTOCOLS: dict[str, Codec] = {}  # codec by CLI name, in registration order


def register(codec: Codec) -> Codec:
    """Adds ``codec`` (a new vendor: its folder's ``CODEC``) under its name; a codec of the
    same name is replaced."""
    PROTOCOLS[codec.name] = codec
    return codec


def unregister(name: str) -> None:
    """Removes the vendor called ``name`` (a test's toy vendor); nothing when it is absent."""
    PROTOCOLS.pop(name, None)


def known(name: str) -> Facts:
    """The facts of the vendor called ``name`` (KeyError for one never registered)."""
    return PROTOCOLS[name].facts


class Warnings:
    """Collects warnings for one conversion; codecs call ``add`` where they lose something."""

    def __init__(self, protocol: str):
        self.protocol = protocol
        self.items: list[ConversionWarning] = []

    def add(self, code: WarningCode, path: str, message: str) -> None:
        self.items.append(ConversionWarning(self.protocol, code, path, message))

    def wrap(self, value: T) -> Converted[T]:
        return Converted(value, self.items)


def foreign_signature(protocol: str, part: Thinking, path: str, w: Warnings) -> bool:
    """True, with a warning, when ``part``'s signature was issued by another vendor.

    Reasoning signatures are opaque tokens one vendor verifies; sending another vendor's
    token gets the request rejected, so encoders leave it out.
    """
    if part.source in (None, protocol) or (part.signature is None and not part.redacted):
        return False
    w.add(
        "thinking_signature_dropped",
        path,
        f"the reasoning signature was issued by {part.source}; {protocol} would reject it, "
        "so it was left out",
    )
    return True


def foreign_thinking(
    protocol: str, part: Thinking, path: str, w: Warnings, unsourced: str
) -> Thinking | None:
    """``part`` as ``protocol`` can send reasoning another vendor produced, or None when it
    must be left out (another vendor's encrypted reasoning, which ``protocol`` would reject).

    Another vendor's signature is dropped (:func:`foreign_signature`). Plain reasoning from
    another vendor goes on, but the wire cannot say who produced it: ``unsourced`` (a template
    over ``{source}``) says what becomes of it.
    """
    if part.source not in (None, protocol) and part.signature is None and not part.redacted:
        w.add("thinking_source_dropped", f"{path}.source", unsourced.format(source=part.source))
    if foreign_signature(protocol, part, path, w):
        if part.redacted:
            return None
        part = part.model_copy(update={"signature": None})
    return part


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:8]


@functools.cache
def _outside(allowed: str) -> re.Pattern[str]:
    """Any character but an ASCII letter, an ASCII digit or one of ``allowed``: one pass of a
    regular expression over a name (a hostile one can be a megabyte), not a Python-level test
    of each character."""
    return re.compile(f"[^A-Za-z0-9{re.escape(allowed)}]")


@functools.lru_cache(maxsize=4096)  # pure, and called for every call and result
def safe_name(protocol: str, name: str) -> str:
    """``name`` if the protocol accepts it, else a deterministic legal rewrite.

    The same input always maps to the same output, so a call and its declaration (and a
    result and its call) stay paired across a conversion.
    """
    facts = known(protocol)
    pattern, limit = facts.name_rule, facts.name_limit
    if pattern.match(name):
        return name
    cleaned = _outside(facts.name_chars).sub("_", name)
    if not pattern.match(cleaned[:1] or "-") and not cleaned[:1].isalpha():
        cleaned = "_" + cleaned  # a rule that wants a letter first (Gemini) gets "_" first
    if not cleaned:
        cleaned = "tool"
    if len(cleaned) > limit or cleaned != name:
        cleaned = cleaned[: limit - 9] + "_" + _digest(name) if len(cleaned) > limit else cleaned
    return cleaned


@functools.lru_cache(maxsize=4096)
def safe_call_id(protocol: str, call_id: str) -> str:
    """``call_id`` if the protocol accepts it, else a deterministic legal rewrite."""
    facts = known(protocol)
    if facts.id_rule.match(call_id):
        return call_id
    cleaned = re.sub(rf"[^a-zA-Z0-9{re.escape(facts.id_chars)}]", "_", call_id)[:55] or "call"
    return f"{cleaned}_{_digest(call_id)}"


class Renamer:
    """Rewrites the tool names and call ids ``protocol`` rejects (the rules of its facts), the
    same way everywhere; every place a rewrite lands is named (a declaration, its calls, their
    results)."""

    def __init__(self, protocol: str, w: Warnings):
        self.protocol = protocol
        self.w = w
        self.facts = known(protocol)
        self.legal: set[str] = set()  # names already seen to need no rewrite

    def name(self, name: str, path: str) -> str:
        if name in self.legal:
            return name
        new = safe_name(self.protocol, name)
        if new == name:
            self.legal.add(name)
        else:
            rule = self.facts.name_rule.pattern
            self.w.add(
                "tool_name_renamed", path, f"tool name {name!r} is not {rule}; sent as {new!r}"
            )
        return new

    def call_id(self, call_id: str, path: str) -> str:
        new = safe_call_id(self.protocol, call_id)  # memoized; each id is seen about twice
        if new != call_id:
            rule = self.facts.id_rule.pattern
            self.w.add(
                "call_id_renamed", path, f"call id {call_id!r} is not {rule}; sent as {new!r}"
            )
        return new


def expect(protocol: str, payload: Any, path: str, typ: type | tuple[type, ...]) -> Any:
    """Return ``payload`` if it has type ``typ``, else raise a CodecError naming ``path``."""
    if not isinstance(payload, typ):
        names = typ.__name__ if isinstance(typ, type) else " or ".join(t.__name__ for t in typ)
        raise CodecError(
            protocol,
            path,
            f"expected {_json_type(names)}, got {_json_type(type(payload).__name__)}",
        )
    return payload


def require(
    protocol: str, obj: dict[str, Any], key: str, path: str, typ: type | tuple[type, ...]
) -> Any:
    """``obj[key]`` checked against ``typ``; a missing key names its path."""
    if key not in obj:
        raise CodecError(protocol, f"{path}.{key}", "required field is missing")
    return expect(protocol, obj[key], f"{path}.{key}", typ)


def dig(obj: Any, *keys: str | int) -> Any:
    """``obj[k1][k2]...`` through objects and lists, or None where a step is missing or of
    another type (for readers that must never raise, such as the argument replay)."""
    for key in keys:
        if isinstance(key, int):
            obj = obj[key] if isinstance(obj, list) and -len(obj) <= key < len(obj) else None
        else:
            obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def _json_type(py: str) -> str:
    return {
        "dict": "an object",
        "list": "an array",
        "str": "a string",
        "int": "an integer",
        "float": "a number",
        "bool": "a boolean",
        "NoneType": "null",
    }.get(py, py)
