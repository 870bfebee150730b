"""Gemini ``Part`` -> canonical parts."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from flowdebug.errors import CodecError
from flowdebug.model import Image, Part, ResultContent, Text, Thinking, ToolCall, ToolResult
from flowdebug.protocols.base import Warnings, expect, require
from flowdebug.protocols.gemini import hosted as gemini_hosted
from flowdebug.protocols.gemini.parts import PROTOCOL, extras, with_details


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


# function response answers.
Pairing = Callable[[str | None, str | None, str, str], tuple[str, str | None]]


class Decoder:
    """Decodes wire parts into canonical ones."""

    def __init__(self, w: Warnings):
        self.w = w
        self.hosted = gemini_hosted.HostedDecoder()

    def part(self, raw: Any, path: str, synthetic: str, pair: Pairing) -> Part | None:
        """One wire part; ``synthetic`` is the canonical id for a call without one."""
        part = expect(PROTOCOL, raw, path, dict)
        if "functionCall" in part:
            return self._call(part, path, synthetic)
        if "functionResponse" in part:
            return self._result(part, path, synthetic, pair)
        if "inlineData" in part or "fileData" in part:
            return self._media(part, path)
        if any(k in part for k in gemini_hosted.KEYS):
            return self.hosted.part(part, path, synthetic)
        if "text" in part or "thoughtSignature" in part:
            return self._text(part, path)
        kinds = sorted(part)
        self.w.add(
            "part_dropped",
            path,
            f"flowdebug has no canonical part for {', '.join(kinds) or 'an empty part'}",
        )
        return None

    def _text(self, part: dict[str, Any], path: str) -> Text | Thinking:
        text = expect(PROTOCOL, part.get("text", ""), f"{path}.text", str)
        if part.get("thought") is True:
            sig = part.get("thoughtSignature")
            if sig is not None:
                expect(PROTOCOL, sig, f"{path}.thoughtSignature", str)
            return Thinking(
                text=text,
                signature=sig,
                source=PROTOCOL if sig is not None else None,
                provider_details=with_details(
                    extras(part, {"text", "thought", "thoughtSignature"})
                ),
            )
        return Text(text=text, provider_details=with_details(extras(part, {"text"})))

    def _call(self, part: dict[str, Any], path: str, synthetic: str) -> ToolCall:
        here = f"{path}.functionCall"
        fc = expect(PROTOCOL, part["functionCall"], here, dict)
        name = require(PROTOCOL, fc, "name", here, str)
        args = fc.get("args")
        args = {} if args is None else expect(PROTOCOL, args, f"{here}.args", dict)
        wire_id = fc.get("id")
        details = extras(part, {"functionCall"})
        if wire_id is None:
            details["syntheticId"] = True
        else:
            expect(PROTOCOL, wire_id, f"{here}.id", str)
        nested = extras(fc, {"id", "name", "args"})
        if nested:
            details["functionCall"] = nested
        return ToolCall(
            id=wire_id or synthetic,
            name=name,
            arguments=args,
            provider_details=with_details(details),
        )

    def _result(self, part: dict[str, Any], path: str, synthetic: str, pair: Pairing) -> ToolResult:
        here = f"{path}.functionResponse"
        fr = expect(PROTOCOL, part["functionResponse"], here, dict)
        wire_id = fr.get("id")
        if wire_id is not None:
            expect(PROTOCOL, wire_id, f"{here}.id", str)
        name = fr.get("name")
        if name is not None:
            expect(PROTOCOL, name, f"{here}.name", str)
        response = expect(PROTOCOL, fr.get("response", {}), f"{here}.response", dict)
        call_id, call_name = pair(wire_id, name, path, synthetic)
        details = extras(part, {"functionResponse"})
        if wire_id is None:
            details["syntheticId"] = True
        nested = extras(fr, {"id", "name", "response", "parts"})
        if nested:
            details["functionResponse"] = nested
        is_error = "error" in response
        if len(response) == 1 and next(iter(response)) in ("output", "result", "error"):
            key, value = next(iter(response.items()))
            text = _text(value)
            if key == "result":
                details["responseKey"] = "result"
        else:
            # Neither convention: the whole object is the output (FunctionResponse docstring).
            text = json.dumps(response, ensure_ascii=False)
            details["responseKey"] = None
        media = expect(PROTOCOL, fr.get("parts", []), f"{here}.parts", list)
        images = [self._media(m, f"{here}.parts[{i}]") for i, m in enumerate(media)]
        content: str | list[ResultContent] = text
        if images:
            content = [*([Text(text=text)] if text else []), *images]
        return ToolResult(
            call_id=call_id,
            name=name or call_name,
            content=content,
            is_error=is_error,
            provider_details=with_details(details),
        )

    def _media(self, raw: Any, path: str) -> Image:
        """An ``inlineData`` or ``fileData`` part (in a turn or in a function response)."""
        part = expect(PROTOCOL, raw, path, dict)
        for key, source in (("inlineData", "data"), ("fileData", "fileUri")):
            if key not in part:
                continue
            here = f"{path}.{key}"
            blob = expect(PROTOCOL, part[key], here, dict)
            mime = require(PROTOCOL, blob, "mimeType", here, str)
            ref = require(PROTOCOL, blob, source, here, str)
            details = extras(part, {key})
            if nested := extras(blob, {"mimeType", source}):
                details[key] = nested
            where = {"data": ref} if source == "data" else {"url": ref}
            return Image(media_type=mime, **where, provider_details=with_details(details))
        raise CodecError(PROTOCOL, path, "a media part needs inlineData or fileData")
