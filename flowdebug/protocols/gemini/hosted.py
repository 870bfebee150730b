"""Gemini parts for tools Google runs itself, as canonical hosted calls and results.

- The code execution tool: the model writes ``executableCode`` ({language, code, id?}) and the
  service answers, in the same model turn, with ``codeExecutionResult`` ({outcome, output,
  id?}); a result without an id answers the code part just before it. Canonical:
  ``HostedCall(name="code_execution", arguments={"language", "code"})`` and a
  ``HostedResult`` whose content is the output and whose error flag is an outcome other than
  ``OUTCOME_OK`` (``OUTCOME_FAILED``, ``OUTCOME_DEADLINE_EXCEEDED``).
- Server-side ``toolCall`` ({id, toolType, args}) / ``toolResponse`` ({id, toolType,
  response}) parts: the tool is ``toolType`` in lower case.

The exact wire part rides in ``provider_details["gemini"]`` so a Gemini payload goes back
byte-identical. Other vendors have no equivalent of Gemini's code execution parts, and Gemini
has no part for another vendor's hosted tool (Google Search grounding is response metadata,
not a part), so those are left out with ``hosted_call_dropped`` / ``hosted_result_dropped``.
"""

from __future__ import annotations

import json
from typing import Any

from flowdebug.model import HostedCall, HostedResult
from flowdebug.protocols.base import Warnings, expect

PROTOCOL = "gemini"
KEYS = ("executableCode", "codeExecutionResult", "toolCall", "toolResponse")
CODE_EXECUTION = "code_execution"
_OK = "OUTCOME_OK"


class HostedDecoder:
    """Decodes hosted parts in order, pairing a code result with the code before it."""

    def __init__(self) -> None:
        self._last_code: str | None = None

    def part(self, part: dict[str, Any], path: str, synthetic: str) -> HostedCall | HostedResult:
        details: dict[str, Any] = {PROTOCOL: part}
        if "executableCode" in part:
            here = f"{path}.executableCode"
            code = expect(PROTOCOL, part["executableCode"], here, dict)
            call_id = _id(code, here) or synthetic
            self._last_code = call_id
            args = {k: code[k] for k in ("language", "code") if k in code}
            return HostedCall(
                id=call_id,
                name=CODE_EXECUTION,
                arguments=args,
                source=PROTOCOL,
                provider_details=details,
            )
        if "codeExecutionResult" in part:
            here = f"{path}.codeExecutionResult"
            result = expect(PROTOCOL, part["codeExecutionResult"], here, dict)
            output = expect(PROTOCOL, result.get("output", ""), f"{here}.output", str)
            outcome = result.get("outcome", _OK)
            return HostedResult(
                call_id=_id(result, here) or self._last_code or synthetic,
                name=CODE_EXECUTION,
                content=output,
                is_error=outcome != _OK,
                source=PROTOCOL,
                provider_details=details,
            )
        if "toolCall" in part:
            here = f"{path}.toolCall"
            call = expect(PROTOCOL, part["toolCall"], here, dict)
            args = expect(PROTOCOL, call.get("args") or {}, f"{here}.args", dict)
            return HostedCall(
                id=_id(call, here) or synthetic,
                name=_tool(call, here),
                arguments=args,
                source=PROTOCOL,
                provider_details=details,
            )
        here = f"{path}.toolResponse"
        answer = expect(PROTOCOL, part["toolResponse"], here, dict)
        response = answer.get("response")
        return HostedResult(
            call_id=_id(answer, here) or synthetic,
            name=_tool(answer, here),
            content=json.dumps(response, ensure_ascii=False) if response is not None else "",
            source=PROTOCOL,
            provider_details=details,
        )


def _id(obj: dict[str, Any], path: str) -> str | None:
    value = obj.get("id")
    return None if value is None else expect(PROTOCOL, value, f"{path}.id", str)


def _tool(obj: dict[str, Any], path: str) -> str:
    kind = obj.get("toolType")
    return "tool" if kind is None else expect(PROTOCOL, kind, f"{path}.toolType", str).lower()


def encode(part: HostedCall | HostedResult, path: str, w: Warnings) -> dict[str, Any] | None:
    """The wire part Gemini issued for ``part``, or None with a warning naming the item."""
    wire = (part.provider_details or {}).get(PROTOCOL)
    if part.source == PROTOCOL and isinstance(wire, dict):
        return _updated(part, wire)
    if part.source == PROTOCOL and part.name == CODE_EXECUTION:
        if isinstance(part, HostedCall):
            return {"executableCode": dict(part.arguments)}
        return {"codeExecutionResult": _code_result(part)}
    what = "call" if isinstance(part, HostedCall) else "result"
    w.add(
        "hosted_call_dropped" if isinstance(part, HostedCall) else "hosted_result_dropped",
        path,
        f"Gemini has no part for the {part.source or 'unknown'} hosted {part.name} {what}; "
        "it was left out",
    )
    return None


def _code_result(part: HostedResult) -> dict[str, Any]:
    return {"outcome": "OUTCOME_FAILED" if part.is_error else _OK, "output": part.text}


def _updated(part: HostedCall | HostedResult, wire: dict[str, Any]) -> dict[str, Any]:
    """The stored wire part, with the canonical values written back when they were edited."""
    if isinstance(part, HostedCall) and "executableCode" in wire:
        code = wire["executableCode"]
        if isinstance(code, dict) and any(code.get(k) != v for k, v in part.arguments.items()):
            return {**wire, "executableCode": {**code, **part.arguments}}
    if isinstance(part, HostedResult) and "codeExecutionResult" in wire:
        result = wire["codeExecutionResult"]
        if isinstance(result, dict):
            new = {**result, "output": part.text} if result.get("output", "") != part.text else {}
            if (result.get("outcome", _OK) != _OK) != part.is_error:
                new = {**result, **new, "outcome": _code_result(part)["outcome"]}
            if new:
                return {**wire, "codeExecutionResult": new}
    return dict(wire)
