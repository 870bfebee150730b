"""Hypothesis strategies for payloads built from the vendors' own types (issue 31 item 3).

``schema_of`` takes an SDK type's JSON Schema (pydantic's, or a botocore shape's) and cuts it
to the tool-calling subset: union branches whose ``type`` tag is not kept are removed, the
optional fields named in ``drop`` too, and ``$ref`` is inlined to a bounded depth (deeper
recursion is cut). ``strategy`` draws JSON values from such a schema. hypothesis-jsonschema
would do this, but its 0.23 does not run on this hypothesis (``'many' object has no
attribute 'more'``).
"""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import strategies as st
from pydantic import TypeAdapter

Schema = dict[str, Any] | bool

# A small PNG's bytes, so image data is what a reader can take for an image.
PNG = base64.b64encode(bytes.fromhex("89504e470d0a1a0a0000000d49484452")).decode()
BASE64_FIELDS = frozenset({"data", "bytes"})
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def _tags(branch: Any) -> set[Any] | None:
    tag = branch.get("properties", {}).get("type") if isinstance(branch, dict) else None
    if not isinstance(tag, dict):
        return None
    if "const" in tag:
        return {tag["const"]}
    return set(tag["enum"]) if "enum" in tag else None


def cut(schema: dict[str, Any], keep: frozenset[str], drop: frozenset[str], depth: int = 10) -> Any:
    """``schema`` without the union branches whose tag is not in ``keep``, the optional
    properties in ``drop`` and annotations; ``$ref`` inlined ``depth`` deep."""
    defs = schema.get("$defs", {})

    def walk(s: Any, d: int) -> Any:
        if isinstance(s, list):
            return [walk(v, d) for v in s]
        if not isinstance(s, dict):
            return s
        if "$ref" in s:
            if d <= 0:
                return False
            rest = {k: v for k, v in s.items() if k != "$ref"}
            return walk(defs[s["$ref"].split("/")[-1]] | rest, d - 1)
        out: dict[str, Any] = {}
        for k, v in s.items():
            if k in ("anyOf", "oneOf"):
                branches = [b for b in (walk(b, d) for b in v) if b is not False]
                out["anyOf"] = [b for b in branches if _tags(b) is None or _tags(b) & keep]
                if not out["anyOf"]:
                    return False
            elif k == "properties":
                required = set(s.get("required", []))
                out[k] = {p: walk(ps, d) for p, ps in v.items() if p in required or p not in drop}
            elif k not in ("$defs", "title", "description", "examples", "default"):
                out[k] = walk(v, d)
        props = out.get("properties", {})
        if any(props.get(p) is False for p in out.get("required", [])):
            return False
        out["properties"] = {p: ps for p, ps in props.items() if ps is not False}
        return out

    return walk(schema, depth)


def schema_of(tp: Any, keep: set[str], drop: set[str] = frozenset()) -> Any:  # type: ignore[assignment]
    """The JSON Schema of an SDK type (a pydantic model, TypedDict or union), cut."""
    return cut(TypeAdapter(tp).json_schema(), frozenset(keep), frozenset(drop))


def _string(s: dict[str, Any], name: str) -> st.SearchStrategy[Any]:
    if name in BASE64_FIELDS or s.get("contentEncoding") == "base64":
        return st.just(PNG)
    if "pattern" in s:
        return st.from_regex(s["pattern"], fullmatch=True).filter(lambda t: len(t) < 60)
    low, high = s.get("minLength", 0), min(s.get("maxLength", 12), 12)
    return st.text(st.characters(codec="utf-8"), min_size=low, max_size=max(low, high))


def strategy(s: Any, name: str = "") -> st.SearchStrategy[Any]:
    """JSON values valid for the cut schema ``s`` (small: lists of at most 3)."""
    if s is False:
        return st.nothing()
    if (
        s is True
        or s == {}
        or (isinstance(s, dict) and set(s) <= {"properties"} and not s["properties"])
    ):
        return JSON
    if "const" in s:
        return st.just(s["const"])
    if "enum" in s:
        return st.sampled_from(s["enum"])
    if "anyOf" in s:
        return st.one_of([strategy(b, name) for b in s["anyOf"]])
    kind = s.get("type")
    if isinstance(kind, list):
        return st.one_of([strategy(s | {"type": k}, name) for k in kind])
    match kind:
        case "object":
            props = s.get("properties", {})
            if not props:
                extra = s.get("additionalProperties", True)
                values = JSON if extra in (True, {}) else strategy(extra)
                return st.dictionaries(st.text(min_size=1, max_size=8), values, max_size=3)
            required = set(s.get("required", []))
            return st.fixed_dictionaries(
                {p: strategy(ps, p) for p, ps in props.items() if p in required},
                optional={p: strategy(ps, p) for p, ps in props.items() if p not in required},
            )
        case "array":
            items = s.get("items", True)
            low = s.get("minItems", 0)
            if items is False:  # every element type was cut: only the empty list is left
                return st.just([])
            return st.lists(strategy(items, name), min_size=low, max_size=max(low, 3))
        case "string":
            return _string(s, name)
        case "integer":
            return st.integers(s.get("minimum", 0), s.get("maximum", 10_000))
        case "number":
            return st.floats(s.get("minimum", 0), s.get("maximum", 2), allow_nan=False)
        case "boolean":
            return st.booleans()
        case "null":
            return st.none()
    return JSON
