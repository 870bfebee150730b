"""Declaring a module-level Python function as a tool: :func:`python_tool` makes the
:class:`~flowdebug.engine.execution.handlers.ToolEntry` (a ``python`` handler), and
:func:`schema_of`
the JSON Schema of its arguments from a pydantic model."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, JsonValue

from flowdebug.engine.execution.handlers import IN_CODE, PythonHandler, ToolEntry
from flowdebug.model import Tool


def python_tool(
    fn: Callable[..., Any],
    parameters: type[BaseModel] | dict[str, Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    annotations: dict[str, JsonValue] | None = None,
    timeout: float | None = None,
) -> ToolEntry:
    """Declare module-level function ``fn`` as a tool with a ``python`` handler.

    ``parameters`` is a pydantic model (its JSON Schema, without pydantic's titles) or a
    JSON Schema dict; the description defaults to the first paragraph of the docstring.
    """
    doc = inspect.getdoc(fn) or ""
    tool = Tool(
        name=name or fn.__name__,
        description=description or doc.split("\n\n")[0].replace("\n", " ") or None,
        parameters=schema_of(parameters),
        annotations=annotations,
    )
    handler = PythonHandler(function=f"{fn.__module__}:{fn.__qualname__}")
    entry = {"tool": tool, "handler": handler, "timeout": timeout}
    return ToolEntry.model_validate(entry, context=IN_CODE)


def schema_of(parameters: type[BaseModel] | dict[str, Any] | None) -> dict[str, Any]:
    """A JSON Schema for tool arguments from a pydantic model, a schema dict or nothing."""
    if parameters is None:
        return {"type": "object", "properties": {}}
    if isinstance(parameters, dict):
        return parameters
    return _drop_titles(parameters.model_json_schema())


_SCHEMA_MAPS = {"properties", "patternProperties", "$defs", "dependentSchemas"}
_SCHEMA_LISTS = {"allOf", "anyOf", "oneOf", "prefixItems"}
_SCHEMA_ONE = {"items", "additionalProperties", "not", "if", "then", "else", "contains"}


def _drop_titles(schema: Any) -> Any:
    """Remove pydantic's generated ``title`` keywords (keeping properties named "title")."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            value = {k: _drop_titles(v) for k, v in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            value = [_drop_titles(v) for v in value]
        elif key in _SCHEMA_ONE:
            value = _drop_titles(value)
        out[key] = value
    return out
