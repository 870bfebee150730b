"""Shared by the Bedrock tests: loading payloads and checking what conversions keep."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flowdebug.model import Conversation, Message, ToolResult
from flowdebug.protocols.bedrock import CODEC
from tests.paths import REAL, WIRE


def wire(name: str) -> Any:
    return json.loads((WIRE / f"bedrock.{name}.json").read_text())


def real(kind: str) -> list[Path]:
    return sorted(REAL.glob(f"bedrock.{kind}.*.json"))


def codes(converted: Any) -> list[str]:
    return [w.code for w in converted.warnings]


def without_error_type(messages: list[Message]) -> list[Message]:
    """Messages with ``error_type`` cleared: debugger metadata no vendor carries."""
    return [
        m.model_copy(
            update={
                "parts": [
                    p.model_copy(update={"error_type": None}) if isinstance(p, ToolResult) else p
                    for p in m.parts
                ]
            }
        )
        for m in messages
    ]


def through_bedrock(conv: Conversation) -> tuple[Conversation, set[str]]:
    """``conv`` encoded for Bedrock and decoded back, with the codes of every warning."""
    there = CODEC.encode_request(conv)
    back = CODEC.decode_request(there.value)
    return back.value, {w.code for w in [*there.warnings, *back.warnings]}
