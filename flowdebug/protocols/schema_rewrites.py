"""What an encoder changes in a tool's JSON Schema, each change written once and each warned.

A vendor that needs a schema other than the one a person wrote gets it rewritten here, never
in its own encoder, and the conversion says so with the rewrite's warning code: a schema that
reaches the model differently from the one declared is a change, and flowdebug makes none
silently. :data:`REWRITES` is the closed set; ``tests/protocols/test_no_silent_change.py``
encodes each rewrite's ``example`` in every vendor and checks which vendors rewrite it and that
each warns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flowdebug.protocols.base import Warnings
from flowdebug.protocols.warning_codes import WarningCode

Schema = dict[str, Any]


@dataclass(frozen=True)
class SchemaRewrite:
    """One rewrite: its warning code, what it does, and a schema it applies to."""

    code: WarningCode
    does: str
    example: Schema
    rewrite: Callable[[Schema], Schema | None]  # the new schema, or None: nothing to change

    def apply(self, schema: Schema, path: str, w: Warnings, why: str) -> Schema:
        """``schema`` rewritten (with a warning at ``path`` saying ``why``), or a copy of it."""
        new = self.rewrite(schema)
        if new is None:
            return dict(schema)
        w.add(self.code, path, f"{why}: {self.does}")
        return new


def _object_root(schema: Schema) -> Schema | None:
    return None if "type" in schema else {"type": "object", **schema}


OBJECT_ROOT = SchemaRewrite(
    code="schema_keyword_added",
    does='the schema got "type": "object" at its root',
    example={"properties": {"city": {"type": "string"}}},
    rewrite=_object_root,
)

REWRITES: tuple[SchemaRewrite, ...] = (OBJECT_ROOT,)
