"""Walking a tool's JSON Schema, for the rules that look at every node of it (the linter's
quality rules and each vendor's schema rules in ``protocols/<vendor>/rules.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

SchemaPath = tuple[str | int, ...]


def walk(schema: Any, path: SchemaPath = ()) -> Iterator[tuple[SchemaPath, dict[str, Any]]]:
    """Every subschema of ``schema`` with its path of keys, the root first."""
    if not isinstance(schema, dict):
        return
    yield path, schema
    for key in ("properties", "$defs", "defs", "definitions", "patternProperties"):
        sub = schema.get(key)
        if isinstance(sub, dict):
            for name, s in sub.items():
                yield from walk(s, (*path, key, name))
    for key in ("items", "additionalProperties", "not", "if", "then", "else"):
        yield from walk(schema.get(key), (*path, key))
    for key in ("anyOf", "oneOf", "allOf", "prefixItems", "items"):
        sub = schema.get(key)
        if isinstance(sub, list):
            for k, s in enumerate(sub):
                yield from walk(s, (*path, key, k))


def tool_path(i: int, path: SchemaPath) -> str:
    """Where a schema node sits in the canonical tools: ``tools[0].parameters.properties.x``."""
    keys = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    return f"tools[{i}].parameters{keys}"


def is_object(node: dict[str, Any]) -> bool:
    """The node describes an object (by its type, or by having properties)."""
    t = node.get("type")
    return t == "object" or (isinstance(t, list) and "object" in t) or "properties" in node


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is an object, else an empty one."""
    return value if isinstance(value, dict) else {}
