"""Canonical parts -> Gemini ``Part``, shared by requests, responses and streams, with the
``provider_details`` helpers both directions use (decoding is in
:mod:`flowdebug.protocols.gemini.parts`).

``provider_details["gemini"]`` on a canonical part holds the part's own wire fields that have
no canonical home (``thoughtSignature`` above all), verbatim and merged back on encode. The
nested keys ``functionCall``, ``functionResponse``, ``inlineData``, ``fileData`` hold the
extra fields of that nested object. Two markers are not wire fields:

- ``syntheticId: true`` on a call or result whose wire object had no ``id``. A call then gets
  the invented canonical id ``gemini_call_<content>_<part>`` (its indexes in ``contents`` and
  ``parts``; ``gemini_call_<part>`` in responses), which is never sent back; a result takes its
  call's id (or an invented one when no call matches) and sends an id only when its call has
  a real one.
- ``responseKey`` on a result: the key that wrapped the value in ``response`` when it was not
  ``output`` (``"result"``, as the SDK's automatic function calling writes), or null when the
  whole ``response`` object was the value.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, assert_never

from pydantic import ConfigDict, TypeAdapter, ValidationError

from flowdebug import jsontext
from flowdebug.errors import CodecError
from flowdebug.model import (
    HostedCall,
    HostedResult,
    Image,
    Part,
    ResultContent,
    Text,
    Thinking,
    ToolCall,
    ToolResult,
)
from flowdebug.protocols.base import (
    Warnings,
    expect,
    foreign_thinking,
    require,
    safe_call_id,
    safe_name,
)
from flowdebug.protocols.gemini import hosted as gemini_hosted
from flowdebug.protocols.warning_codes import WarningCode

PROTOCOL = "gemini"
_MARKERS = {"syntheticId", "responseKey"}
_NESTED = ("functionCall", "functionResponse", "inlineData", "fileData")

# thoughtSignature is ``bytes`` in the SDK, base64 on the wire (standard or URL-safe alphabet,
# padding optional); validate exactly as the SDK does.
_B64: TypeAdapter[bytes] = TypeAdapter(bytes, config=ConfigDict(val_json_bytes="base64"))


def is_base64(text: str) -> bool:
    try:
        _B64.validate_json(json.dumps(text))
    except ValidationError:
        return False
    return True


def own(details: dict[str, Any] | None) -> dict[str, Any]:
    """This protocol's entry of a ``provider_details`` dict (empty when absent)."""
    mine = (details or {}).get(PROTOCOL)
    return dict(mine) if isinstance(mine, dict) else {}


def wire_extras(details: dict[str, Any] | None, nested: str | None = None) -> dict[str, Any]:
    """Wire fields stored by a decoder: the part-level ones, or those of ``nested``."""
    mine = own(details)
    if nested is not None:
        extra = mine.get(nested)
        return dict(extra) if isinstance(extra, dict) else {}
    return {k: v for k, v in mine.items() if k not in _MARKERS and k not in _NESTED}


def with_details(extras: dict[str, Any]) -> dict[str, Any] | None:
    """``provider_details`` holding ``extras`` under our key, or None when there are none."""
    return {PROTOCOL: extras} if extras else None


def check_foreign(details: dict[str, Any] | None, path: str, w: Warnings) -> None:
    """Warn once when ``details`` carries another protocol's data, which Gemini cannot use."""
    others = sorted(k for k in details or {} if k != PROTOCOL)
    if others:
        w.add(
            "provider_details_dropped",
            path,
            f"Gemini cannot carry {', '.join(others)} provider details",
        )


def renumbered(wires: list[Any], path: str, w: Warnings) -> None:
    """Warn when parts left out of a message (each named by its own warning) make the parts
    after them move up: their canonical paths change too."""
    dropped = [i for i, wire in enumerate(wires) if not wire]
    if dropped and any(wires[dropped[0] :]):
        w.add(
            "parts_renumbered",
            f"{path}.parts",
            f"{len(dropped)} part(s) were left out, so the parts after them moved up",
        )


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
    """The parsed JSON object/array when ``text`` is exactly its serialization, else text."""
    try:
        parsed = jsontext.embedded(text)
    except ValueError:
        return text
    if isinstance(parsed, dict | list) and json.dumps(parsed, ensure_ascii=False) == text:
        return parsed
    return text


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


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _extras(obj: dict[str, Any], handled: set[str]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in handled}


# pair(wire id, name, path, synthetic id) -> (canonical call id, call name) of the call a
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
                    _extras(part, {"text", "thought", "thoughtSignature"})
                ),
            )
        return Text(text=text, provider_details=with_details(_extras(part, {"text"})))

    def _call(self, part: dict[str, Any], path: str, synthetic: str) -> ToolCall:
        here = f"{path}.functionCall"
        fc = expect(PROTOCOL, part["functionCall"], here, dict)
        name = require(PROTOCOL, fc, "name", here, str)
        args = fc.get("args")
        args = {} if args is None else expect(PROTOCOL, args, f"{here}.args", dict)
        wire_id = fc.get("id")
        details = _extras(part, {"functionCall"})
        if wire_id is None:
            details["syntheticId"] = True
        else:
            expect(PROTOCOL, wire_id, f"{here}.id", str)
        nested = _extras(fc, {"id", "name", "args"})
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
        details = _extras(part, {"functionResponse"})
        if wire_id is None:
            details["syntheticId"] = True
        nested = _extras(fr, {"id", "name", "response", "parts"})
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
            details = _extras(part, {key})
            if nested := _extras(blob, {"mimeType", source}):
                details[key] = nested
            where = {"data": ref} if source == "data" else {"url": ref}
            return Image(media_type=mime, **where, provider_details=with_details(details))
        raise CodecError(PROTOCOL, path, "a media part needs inlineData or fileData")
