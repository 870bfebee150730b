"""A vendor's own words for one event, read from the payload its codec encodes.

Nothing here knows a vendor: the words come from the JSON each codec produces for the step
(``flowdebug.views.encodings``). A call, a result or a declared tool is found by a value it
must carry (the call's id, the tool's name, the answer's text); the fragment around that value
names the event: the key that wraps it (``functionResponse``, ``toolResult``), its ``type``
(``tool_result``, ``function_call_output``), its ``role`` (``"tool"``), its JSON-RPC method
(``tools/call``), or the list that holds it (``tool_calls[1]``); the key that holds the value
is the linking field (``tool_use_id``, ``tool_call_id``, ``call_id``, ``toolUseId``, ``id``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from flowdebug import jsontext

Path = tuple[str | int, ...]


def at(value: Any, path: Path) -> Any:
    for step in path:
        value = value[step]
    return value


def dotted(path: Path) -> str:
    """``response.error``, ``tools[0].function.name``."""
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


@dataclass(frozen=True)
class Found:
    """Where a value sits in a payload: the fragment that holds it and what that fragment is."""

    payload: Any
    path: Path  # to the value itself

    @property
    def key(self) -> str:
        """The field holding the value (``tool_use_id``)."""
        return str(self.path[-1])

    @property
    def holder(self) -> dict[str, Any]:
        return at(self.payload, self.path[:-1])

    @property
    def value(self) -> Any:
        return at(self.payload, self.path)

    def _rpc(self) -> dict[str, Any] | None:
        """The JSON-RPC message around the value, when it is in one."""
        for n in range(len(self.path) - 1, -1, -1):
            node = at(self.payload, self.path[:n])
            if isinstance(node, dict) and "jsonrpc" in node:
                return node
        return None

    def _method(self, message: dict[str, Any]) -> str:
        if "method" in message:
            return str(message["method"])
        asked = next(
            (
                m
                for m in _messages(self.payload)
                if m.get("id") == message.get("id") and "method" in m
            ),
            None,
        )
        name = str(asked["method"]) if asked else "response"
        return f"{name} {'error' if 'error' in message else 'result'}"

    @property
    def fragment(self) -> Any:
        """What a reader is shown of the wire: the wrapped object, or the holder itself."""
        rpc = self._rpc()
        if rpc is not None:
            return rpc
        parent = self.path[:-2]
        outer = at(self.payload, parent) if len(self.path) >= 2 else None
        if isinstance(outer, dict) and len(outer) == 1:
            return outer
        return self.holder

    @property
    def kind(self) -> str:
        """What the fragment is called on the wire."""
        holder, path = self.holder, self.path
        rpc = self._rpc()
        if rpc is not None:
            return self._method(rpc)
        if len(path) >= 2 and isinstance(path[-2], str):
            outer = at(self.payload, path[:-2])
            if isinstance(outer, dict) and len(outer) == 1:  # {"functionResponse": {...}}
                return str(path[-2])
        tag = holder.get("type")
        # A tag naming the key beside it ({"type": "function", "function": {...}}) says only
        # which member of a union follows: the list that holds it names the event better.
        if isinstance(tag, str) and not isinstance(holder.get(tag), dict):
            return tag
        if len(holder) == 1:  # {"text": "..."}: the key is all there is
            return self.key
        role = holder.get("role")
        if isinstance(role, str):
            return f'role: "{role}"'
        for n in range(len(path) - 2, 0, -1):
            if isinstance(path[n], int) and isinstance(path[n - 1], str):
                return f"{path[n - 1]}[{path[n]}]"
        return self.key

    def error_marks(self) -> list[tuple[str, str]]:
        """How the fragment tells the model this result failed: a true flag whose name says
        error (``is_error: true``, ``isError: true``), a field set to ``"error"``
        (``status: "error"``), or a field called error (``response.error``)."""
        out = []
        for path, v in _leaves(self.fragment):
            key = str(path[-1]) if path else ""
            if (v is True and "error" in key.lower()) or v == "error":
                out.append((key, json.dumps(v)))
            elif key == "error" and v not in (None, False):
                out.append((dotted(self._inside(path)), ""))
        return out

    def _inside(self, path: Path) -> Path:
        """A path inside the fragment, without its wrapping key (``functionResponse``) or the
        JSON-RPC envelope's ``result``."""
        frag = self.fragment
        wrapped = isinstance(frag, dict) and len(frag) == 1 and path and path[0] in frag
        return path[1:] if (wrapped or path[:1] == ("result",)) and len(path) > 1 else path

    def name_field(self, name: str) -> tuple[str, str] | None:
        """The field beside the value naming the tool (``name: "get_weather"``), if any."""
        holder = self.holder
        if holder.get("name") == name and self.key != "name":
            return "name", json.dumps(name)
        return None


def _messages(payload: Any) -> Iterator[dict[str, Any]]:
    """The JSON-RPC messages of a transcript (a list of messages or of ``{"msg": ...}``)."""
    for item in payload if isinstance(payload, list) else []:
        msg = item.get("msg", item) if isinstance(item, dict) else None
        if isinstance(msg, dict) and "jsonrpc" in msg:
            yield msg


def _leaves(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "error" and not isinstance(v, (dict, list)):
                yield (*path, k), v
            else:
                yield from _leaves(v, (*path, k))
        if not value:
            yield path, value
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))
    else:
        yield path, value


def find(payload: Any, wanted: object, last: bool = False) -> Found | None:
    """The first (or ``last``) place ``wanted`` sits in ``payload`` as a field's value."""
    return Indexed(payload).find(wanted, last)


class Indexed:
    """A payload with every field's value indexed, for many :meth:`find` calls on it: a long
    history's request holds thousands of leaves, and the picture asks it for each event."""

    def __init__(self, value: Any) -> None:
        self.value = value
        self._index: dict[tuple[type, object], list[Path]] | None = None

    def _paths(self) -> dict[tuple[type, object], list[Path]]:
        if self._index is None:
            index: dict[tuple[type, object], list[Path]] = {}
            for path, leaf in _fields(self.value):
                index.setdefault((type(leaf), leaf), []).append(path)
            self._index = index
        return self._index

    def find(self, wanted: object, last: bool = False) -> Found | None:
        """As :func:`find`, by the index."""
        try:
            paths = self._paths().get((type(wanted), wanted))
        except TypeError:  # an unhashable value is no field's leaf
            return None
        if not paths:
            return None
        return Found(self.value, paths[-1] if last else paths[0])


def _fields(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every leaf held by a field (not a list's item directly), with its path, in order."""
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, (dict, list)):
                yield from _fields(v, (*path, k))
            else:
                yield (*path, k), v
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, (dict, list)):
                yield from _fields(v, (*path, i))


def tool_list(found: Found | None) -> tuple[str, str | None] | None:
    """Where a payload declares tools, given where one declared tool's name is (``found``):
    the list's key (``tools``, ``functionDeclarations``) and, relative to that tool, the path
    of its JSON Schema (``input_schema``, ``function.parameters``,
    ``toolSpec.inputSchema.json``)."""
    if found is None:
        return None
    payload, path = found.payload, found.path
    n = max((i for i, s in enumerate(path) if isinstance(s, int)), default=-1)
    if n < 1 or not isinstance(path[n - 1], str):
        return None
    tool = at(payload, path[: n + 1])
    schema = next((p for p, _ in _walk_dicts(tool) if "properties" in at(tool, p) and p), None)
    return str(path[n - 1]), dotted(schema) if schema else None


def _walk_dicts(value: Any, path: Path = ()) -> Iterator[tuple[Path, dict[str, Any]]]:
    if isinstance(value, dict):
        yield path, value
        for k, v in value.items():
            if k != "properties":
                yield from _walk_dicts(v, (*path, k))


def stop_field(payload: Any) -> tuple[str, str] | None:
    """The field saying why the turn ended (``stop_reason: "end_turn"``, ``finishReason``)."""
    for path, v in _leaves(payload):
        key = str(path[-1]) if path else ""
        flat = key.lower().replace("_", "")
        if flat in ("stopreason", "finishreason") and isinstance(v, str):
            return key, json.dumps(v)
    return None


def pretty(fragment: Any, marks: set[str], lines: int = 9) -> tuple[tuple[str, bool], ...]:
    """``fragment`` pretty-printed, at most ``lines`` lines (long strings cut), each with
    whether it holds one of the ``marks`` keys."""
    cut = _cut_strings(fragment)
    text = _lines(cut, flats=_flats(cut))
    if len(text) > lines:
        text = [*text[: lines - 1], "  …"]
    return tuple((line, any(f'"{m}":' in line for m in marks)) for line in text)


def _flats(value: Any, into: dict[int, str] | None = None) -> dict[int, str]:
    """Each container of ``value`` (by id) as ``json.dumps(..., ensure_ascii=False)`` writes
    it, made from its children's once each: asking json.dumps at every level wrote a fragment
    again for each level it is nested in."""
    flats: dict[int, str] = {} if into is None else into
    if isinstance(value, dict):
        for v in value.values():
            _flats(v, flats)
        if all(isinstance(k, str) for k in value):
            parts = (f"{jsontext.shown(k)}: {_flat(v, flats)}"
                     for k, v in value.items())  # fmt: skip
            flats[id(value)] = "{" + ", ".join(parts) + "}"
        else:  # json.dumps writes a number's key as text: let it
            flats[id(value)] = jsontext.shown(value)
    elif isinstance(value, list):
        for v in value:
            _flats(v, flats)
        flats[id(value)] = "[" + ", ".join(_flat(v, flats) for v in value) + "]"
    return flats


def _flat(value: Any, flats: dict[int, str]) -> str:
    if isinstance(value, (dict, list)):
        return flats[id(value)]
    return jsontext.shown(value)


def _lines(
    value: Any, indent: str = "", head: str = "", tail: str = "", *, flats: dict[int, str]
) -> list[str]:
    """JSON on a few lines: a container short enough stays on one line."""
    flat = _flat(value, flats)
    if len(flat) <= 44 or not isinstance(value, (dict, list)) or not value:
        return [f"{indent}{head}{flat}{tail}"]
    items = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
    opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
    out = [f"{indent}{head}{opening}"]
    for i, (k, v) in enumerate(items):
        key = "" if k is None else f"{jsontext.shown(k)}: "
        out += _lines(v, indent + "  ", key, "," if i < len(items) - 1 else "", flats=flats)
    return [*out, f"{indent}{closing}{tail}"]


def _cut_strings(value: Any, n: int = 160) -> Any:
    if isinstance(value, dict):
        return {k: _cut_strings(v, n) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut_strings(v, n) for v in value]
    if isinstance(value, str) and len(value) > n:
        return value[: n - 1] + "…"
    return value
