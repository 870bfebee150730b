"""A person's decision on a call: run it as written (:class:`Approve`), with other
arguments (:class:`Edit`) or not at all (:class:`Reject`). A destructive tool's calls wait for
one (:func:`needs_approval`); any call may be given one."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, JsonValue

from flowdebug.engine.execution.handlers import Toolset
from flowdebug.model import ToolCall, _Model


class Approve(_Model):
    """Run the call as the model wrote it."""

    kind: Literal["approve"] = "approve"


class Edit(_Model):
    """Run the call with these arguments instead of the model's."""

    kind: Literal["edit"] = "edit"
    arguments: dict[str, JsonValue]


class Reject(_Model):
    """Do not run the call; the model gets ``reason`` as an error result."""

    kind: Literal["reject"] = "reject"
    reason: str = "no reason given"


Decision = Annotated[Approve | Edit | Reject, Field(discriminator="kind")]


def needs_approval(call: ToolCall, toolset: Toolset) -> bool:
    """Whether ``call`` waits for a person's decision: its tool is annotated destructive."""
    entry = toolset.get(call.name)
    return entry is not None and entry.tool.destructive
