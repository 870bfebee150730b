"""Canonical parts -> Gemini ``Part``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, assert_never

from flowdebug.model import (
    HostedCall,
    HostedResult,
    Image,
    Part,
    Text,
    Thinking,
    ToolCall,
    ToolResult,
)
from flowdebug.protocols.base import Warnings, foreign_thinking, safe_call_id, safe_name
from flowdebug.protocols.gemini import hosted as gemini_hosted
from flowdebug.protocols.gemini.parts import (
    PROTOCOL,
    check_foreign,
    is_base64,
    own,
    wire_extras,
)
from flowdebug.protocols.warning_codes import WarningCode
from flowdebug.protocols.wire_helpers import exact_json


class Encoder:
    """Encodes canonical parts for one conversion, renaming names and ids consistently."""

    def __init__(self, w: Warnings):
        self.w = w
        self._renamed: set[tuple[str, str, str]] = set()

    def name(self, name: str, path: str) -> str:
        return self._rewrite("tool_name_renamed", "tool name", safe_name, name, path)

    def call_id(self, call_id: str, path: str) -> str:
        return self._rewrite("call_id_renamed", "call id", safe_call_id, call_id, path)

    def _rewrite(
        self, code: WarningCode, what: str, fix: Callable[[str, str], str], value: str, path: str
    ) -> str:
        new = fix(PROTOCOL, value)
        # Named at every path it lands on: each is a changed canonical path of its own.
        if new != value and (code, value, path) not in self._renamed:
            self._renamed.add((code, value, path))
            self.w.add(code, path, f"{what} {value!r} is not legal in Gemini; sent as {new!r}")
        return new

    def part(self, part: Part, path: str, calls: dict[str, ToolCall]) -> dict[str, Any] | None:
        """One wire part, or None (with a warning) when Gemini cannot carry it.

        ``calls`` maps canonical call ids to the calls seen so far, to name results.
        """
        if not isinstance(part, HostedCall | HostedResult):
            # A hosted part keeps another vendor's wire item whole; it is dropped whole.
            check_foreign(part.provider_details, path, self.w)
        match part:
            case Text():
                if part.refusal:
                    self.w.add(
                        "refusal_flattened",
                        path,
                        "Gemini has no refusal part (it blocks with finishReason SAFETY); "
                        "the refusal was sent as plain text",
                    )
                return {"text": part.text, **wire_extras(part.provider_details)}
            case Thinking():
                return self._thinking(part, path)
            case Image():
                return self._image(part, path)
            case ToolCall():
                return self._call(part, path)
            case ToolResult():
                return self._result(part, path, calls)
            case HostedCall() | HostedResult():
                return gemini_hosted.encode(part, path, self.w)
            case _:
                assert_never(part)

    def _thinking(self, part: Thinking, path: str) -> dict[str, Any] | None:
        unsourced = (
            "a Gemini thought part cannot say that {source} produced the reasoning; it goes as "
            "a thought without a signature"
        )
        if (sent := foreign_thinking(PROTOCOL, part, path, self.w, unsourced)) is None:
            return None
        part = sent
        if part.redacted:
            self.w.add(
                "thinking_dropped",
                path,
                "Gemini has no redacted thinking; the encrypted block was dropped",
            )
            return None
        out: dict[str, Any] = {"text": part.text, "thought": True}
        if part.signature is not None:
            if is_base64(part.signature):
                out["thoughtSignature"] = part.signature
            else:
                self.w.add(
                    "thinking_signature_dropped",
                    path,
                    "the thinking signature is not base64, so it cannot be a Gemini "
                    "thoughtSignature",
                )
        return {**out, **wire_extras(part.provider_details)}

    def _image(self, image: Image, path: str) -> dict[str, Any] | None:
        details = image.provider_details
        if image.data is not None:
            blob = {"mimeType": image.media_type, "data": image.data}
            key = "inlineData"
        elif image.url is not None:
            blob = {"fileUri": image.url, "mimeType": image.media_type}
            key = "fileData"
        else:
            self.w.add("image_dropped", path, "the image has neither data nor a url")
            return None
        return {key: {**blob, **wire_extras(details, key)}, **wire_extras(details)}

    def _call(self, call: ToolCall, path: str) -> dict[str, Any]:
        mine = own(call.provider_details)
        fc: dict[str, Any] = {}
        if not mine.get("syntheticId"):
            fc["id"] = self.call_id(call.id, f"{path}.id")
        fc["name"] = self.name(call.name, f"{path}.name")
        fc["args"] = call.arguments
        if call.raw_arguments is not None:
            self.w.add(
                "raw_arguments_dropped",
                path,
                "Gemini arguments are an object; the unparsable raw text was dropped",
            )
        fc.update(wire_extras(call.provider_details, "functionCall"))
        return {"functionCall": fc, **wire_extras(call.provider_details)}

    def _result(self, result: ToolResult, path: str, calls: dict[str, ToolCall]) -> dict[str, Any]:
        call = calls.get(result.call_id)
        fr: dict[str, Any] = {}
        marked = call.provider_details if call is not None else result.provider_details
        if not own(marked).get("syntheticId"):
            fr["id"] = self.call_id(result.call_id, f"{path}.call_id")
        name = call.name if call is not None else result.name
        if name is None:
            self.w.add(
                "result_name_missing",
                path,
                "Gemini needs the function name on a result and no call or name was "
                "found; sent as 'unknown'",
            )
            name = "unknown"
        fr["name"] = self.name(name, f"{path}.name")
        content = [Text(text=result.content)] if isinstance(result.content, str) else result.content
        # Texts join into the one JSON ``response``; images ride in FunctionResponse.parts
        # (inlineData / fileData in the SDK's FunctionResponsePart), after it.
        text = "\n".join(item.text for item in content if isinstance(item, Text))
        fr["response"] = _response(result, text)
        if result.structured is not None:
            # Gemini has one response value: a structured result (MCP structuredContent)
            # travels only as the JSON in that value, and comes back as text.
            self.w.add(
                "structured_content_dropped",
                path,
                "Gemini carries one response value; the structured content travels only "
                "as its JSON text and is not marked structured on the way back",
            )
        media = []
        for i, item in enumerate(content):
            if isinstance(item, Image):
                check_foreign(item.provider_details, f"{path}.content[{i}]", self.w)
                if blob := self._image(item, f"{path}.content[{i}]"):
                    media.append(blob)
        if media:
            fr["parts"] = media
        images = [item for item in content if isinstance(item, Image)]
        back = [*([Text(text=text)] if text else []), *images] if images else text
        if isinstance(result.content, list) and back != result.content:
            self.w.add(
                "result_content_flattened",
                f"{path}.content",
                "a Gemini function response holds one JSON value: the result's text parts "
                "were joined into it (images follow it in FunctionResponse.parts)",
            )
        fr.update(wire_extras(result.provider_details, "functionResponse"))
        return {"functionResponse": fr, **wire_extras(result.provider_details)}


def _value(text: str) -> Any:
    """The JSON object or array ``text`` spells exactly, else the text itself."""
    value = exact_json(text)
    return text if value is None else value


def _response(result: ToolResult, text: str) -> dict[str, Any]:
    """The ``response`` object: ``{"error": text}`` or ``{"output": value}`` by convention
    (FunctionResponse.response docstring), unless the decoder saw another shape."""
    mine = own(result.provider_details)
    key = mine.get("responseKey", "output")
    if key is None and isinstance(whole := _value(text), dict):
        return whole
    if result.is_error:
        return {"error": text}
    return {key if isinstance(key, str) else "output": _value(text)}
