"""Hypothesis strategies for payloads built from the vendors' own types (issue 31 item 3).

``schema_of`` takes an SDK type's JSON Schema (pydantic's) and cuts it to the tool-calling
subset: union branches whose ``type`` tag is not kept are removed, the optional fields named
in ``drop`` too, and ``$ref`` is inlined to a bounded depth (deeper recursion is cut: a
recursive type such as google-genai's ``Schema`` needs a small depth). ``shape_schema`` does
the same for a botocore shape (boto3 has no typed models), whose unions are kept by member
name. ``strategy`` draws JSON values from such a schema. hypothesis-jsonschema
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
# A tool's parameters: the SDKs type them as any object, but every vendor's API takes (and
# MCP's spec requires) a JSON Schema object there, so that is what is drawn; its root "type"
# is left out at times, which Anthropic, Bedrock and MCP add with a warning.
_NAMES = st.text(st.characters(codec="utf-8"), min_size=1, max_size=6)
_PROPERTY = st.fixed_dictionaries(
    {"type": st.sampled_from(["string", "integer", "number", "boolean", "array", "object"])},
    optional={"description": st.text(max_size=8)},
)
TOOL_SCHEMA = st.dictionaries(_NAMES, _PROPERTY, max_size=3).flatmap(
    lambda props: st.fixed_dictionaries(
        {"properties": st.just(props)},
        optional={
            "type": st.just("object"),
            "required": st.lists(st.sampled_from(sorted(props)), unique=True)
            if props
            else st.just([]),
        },
    )
)
TOOL_SCHEMA_FIELDS = frozenset({"input_schema", "parameters", "inputSchema"})
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


def cut(
    schema: dict[str, Any],
    keep: frozenset[str],
    drop: frozenset[str],
    depth: int = 10,
    tool_schemas: frozenset[str] = TOOL_SCHEMA_FIELDS,
) -> Any:
    """``schema`` without the union branches whose tag is not in ``keep``, the optional
    properties in ``drop`` and annotations; ``$ref`` inlined ``depth`` deep; the properties
    named in ``tool_schemas`` (a tool's parameters, any object to the SDK) drawn as JSON
    Schemas."""
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
                out[k] = {
                    p: {"x-tool-schema": True} if p in tool_schemas else walk(ps, d)
                    for p, ps in v.items()
                    if p in required or p not in drop
                }
            elif k not in ("$defs", "title", "description", "examples", "default"):
                out[k] = walk(v, d)
        props = out.get("properties", {})
        if any(props.get(p) is False for p in out.get("required", [])):
            return False
        out["properties"] = {p: ps for p, ps in props.items() if ps is not False}
        return out

    return walk(schema, depth)


def schema_of(
    tp: Any,
    keep: set[str],
    drop: set[str] = frozenset(),  # type: ignore[assignment]
    depth: int = 10,
    tool_schemas: frozenset[str] = TOOL_SCHEMA_FIELDS,
) -> Any:
    """The JSON Schema of an SDK type (a pydantic model, TypedDict or union), cut."""
    return cut(TypeAdapter(tp).json_schema(), frozenset(keep), frozenset(drop), depth, tool_schemas)


def shape_schema(shape: Any, keep: set[str], drop: set[str], depth: int = 8) -> Any:
    """A botocore shape as the JSON Schema of its JSON wire form (blobs in base64), cut: a
    union's members not in ``keep`` and a structure's optional members in ``drop`` removed."""
    if depth <= 0:
        return False
    meta = shape.metadata
    if meta.get("document"):
        return True
    kind = shape.type_name
    if shape.name == "ToolInputSchema":  # the tool's JSON Schema, a document to botocore
        return {"anyOf": [{"type": "object", "properties": {"json": {"x-tool-schema": True}}}]}
    if kind == "structure" and meta.get("union"):
        branches = [
            {"type": "object", "properties": {k: sub}, "required": [k]}
            for k, m in shape.members.items()
            if k in keep and (sub := shape_schema(m, keep, drop, depth - 1)) is not False
        ]
        return {"anyOf": branches} if branches else False
    if kind == "structure":
        required = shape.required_members
        props = {
            k: shape_schema(m, keep, drop, depth - 1)
            for k, m in shape.members.items()
            if k in required or k not in drop
        }
        if any(props[k] is False for k in required):
            return False
        return {
            "type": "object",
            "properties": {k: v for k, v in props.items() if v is not False},
            "required": list(required),
        }
    bounds = {"minItems" if kind == "list" else "minLength": meta["min"]} if "min" in meta else {}
    match kind:
        case "list":
            items = shape_schema(shape.member, keep, drop, depth - 1)
            return {"type": "array", "items": items, **bounds}
        case "map":
            return {"type": "object", "additionalProperties": True}
        case "blob":
            return {"type": "string", "contentEncoding": "base64"}
        case "string" if "enum" in meta:
            return {"enum": meta["enum"]}
        case "string":
            pattern = {"pattern": meta["pattern"]} if "pattern" in meta else {}
            high = {"maxLength": meta["max"]} if "max" in meta else {}
            return {"type": "string", **bounds, **high, **pattern}
        case "integer" | "long":
            return {"type": "integer", "minimum": meta.get("min", 0)}
        case "float" | "double":
            return {"type": "number"}
        case "boolean":
            return {"type": "boolean"}
    return {"type": "string"}  # timestamps: the JSON wire's text


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
    if isinstance(s, dict) and s.get("x-tool-schema"):
        return TOOL_SCHEMA
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
