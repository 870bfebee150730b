"""Checking a call before its handler runs: its arguments against the tool's JSON Schema
(Draft 2020-12), and the texts that tell a model why its call was refused (a tool that does not
exist, arguments that could not be read), written so that it can retry."""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator

from flowdebug.errors import json_path


def argument_errors(schema: dict[str, Any], arguments: Any) -> list[str]:
    """Every way ``arguments`` fails ``schema`` (Draft 2020-12, formats checked), as lines
    such as ``arguments.unit: 'kelvin' is not one of ['c', 'f']``; empty when valid.
    Raises jsonschema's SchemaError when the schema itself is invalid."""
    validator = _validator(json.dumps(schema, sort_keys=True))
    errors = sorted(
        validator.iter_errors(arguments),
        key=lambda e: ([str(p) for p in e.absolute_path], e.message),
    )
    return [f"{json_path(e.absolute_path, 'arguments')}: {e.message}" for e in errors]


@lru_cache(maxsize=512)
def _validator(schema_json: str) -> Draft202012Validator:
    schema = json.loads(schema_json)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def unknown_tool_text(name: str, known: Sequence[str]) -> str:
    """What a model needs to retry after calling a tool that does not exist."""
    if not known:
        return f"unknown tool {name!r}: no tools are declared"
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return f"unknown tool {name!r}.{hint} Available tools: {', '.join(known)}"


def malformed_text(raw: str) -> str:
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        problem = f"they are not valid JSON ({exc})"
    else:
        problem = f"they must be a JSON object, not {type(value).__name__}"
    shown = raw if len(raw) <= 200 else raw[:200] + "..."
    return f"the arguments could not be read: {problem}. Received: {shown}"
