"""OpenAI Responses items -> canonical messages: the decoding half of :mod:`.encode` (whose
docstring tells how items, ids and pairing work)."""

from __future__ import annotations

import re
from typing import Any

from flowdebug.errors import CodecError
from flowdebug.model import Image, Message, Part, Text, Thinking, ToolCall, ToolResult
from flowdebug.protocols.base import Warnings, expect, require
from flowdebug.protocols.error_results import error_message
from flowdebug.protocols.openai_responses.hosted import HOSTED_NAMES, HOSTED_REPLIES, decode_hosted
from flowdebug.protocols.openai_responses.parts import (
    CALL_KEYS,
    OUTPUT_KEYS,
    PROTOCOL,
    REASONING_KEYS,
    DerivedIds,
    call_item_id,
    details,
    extras,
    joined,
    reasoning_basis,
)
from flowdebug.protocols.wire_helpers import arguments_from_text


class ItemDecoder:
    """Builds canonical messages from items. Consecutive assistant items (reasoning,
    messages, calls) form one assistant turn; consecutive outputs one ``tool`` message."""

    def __init__(self, warnings: Warnings):
        self.w = warnings
        self.turns: list[tuple[str, dict[str, Any] | None, list[Part]]] = []
        self.call_names: dict[str, str] = {}
        self.unanswered: list[str] = []  # call ids in order, until a result names them
        self._ids = DerivedIds()  # item ids so far, as the encoder's ``unique`` sees them

    def _derived(self, item_id: str, prefix: str, basis: str) -> bool:
        """Whether ``item_id`` is the one the encoder would have made up here."""
        candidate = self._ids.next(prefix, basis)
        self._ids.add(item_id)
        return item_id == candidate

    def messages(self) -> list[Message]:
        return [
            Message(role=role, parts=parts, provider_details=pd)  # type: ignore[arg-type]
            for role, pd, parts in self.turns
        ]

    def _add(self, role: str, part: Part) -> None:
        if self.turns and self.turns[-1][0] == role and role in ("assistant", "tool"):
            self.turns[-1][2].append(part)
        else:
            self.turns.append((role, None, [part]))

    def item(self, item: Any, path: str, *, output: bool = False) -> None:
        expect(PROTOCOL, item, path, dict)
        kind = item.get("type", "message" if "role" in item else None)
        if kind is None and "id" in item:
            kind = "item_reference"  # the SDK's ItemReference: its type may be left out
        if kind is None:
            raise CodecError(PROTOCOL, f"{path}.type", "required field is missing")
        expect(PROTOCOL, kind, f"{path}.type", str)
        if output and kind in ("function_call_output", "custom_tool_call_output"):
            self.w.add("item_dropped", path, f"a Response's output cannot hold {kind} items")
            return
        match kind:
            case "message":
                self._message(item, path, output)
            case "function_call" | "custom_tool_call":
                self._function_call(item, path)
            case "function_call_output" | "custom_tool_call_output":
                self._function_call_output(item, path)
            case _ if kind in HOSTED_NAMES:
                for part in decode_hosted(item, path):
                    self._add("assistant", part)
            case _ if kind in HOSTED_REPLIES:
                self.turns.append(("user", None, [*decode_hosted(item, path)]))
            case "reasoning":
                self._reasoning(item, path)
            case "item_reference":
                item_id = require(PROTOCOL, item, "id", path, str)
                self.w.add(
                    "item_reference_dropped",
                    path,
                    f"item {item_id!r} is stored server-side (store: true) and only named "
                    "here: its content is not in the payload",
                )
            case _:
                self.w.add(
                    "item_dropped", path, f"{kind} items are not part of the canonical model"
                )

    def _message(self, item: dict[str, Any], path: str, output: bool) -> None:
        role = require(PROTOCOL, item, "role", path, str)
        allowed = ("assistant",) if output else ("user", "assistant", "system", "developer")
        if role not in allowed:
            raise CodecError(
                PROTOCOL,
                f"{path}.role",
                f"unknown role {role!r}; expected one of {', '.join(allowed)}",
            )
        content = require(PROTOCOL, item, "content", path, (str, list))
        if role == "assistant":
            for part in self._assistant_content(item, content, path):
                self._add("assistant", part)
            return
        parts: list[Part] = []
        if isinstance(content, str):
            parts.append(Text(text=content))
        for k, c in enumerate(content if isinstance(content, list) else []):
            got = self._input_part(c, f"{path}.content[{k}]", ("input_text",))
            if got is not None:
                parts.append(got)
        if role == "user":
            self.turns.append(("user", None, parts))
        else:
            pd = details({"role": role} if role == "developer" else {})
            self.turns.append(("system", pd, parts))

    def _assistant_content(
        self, item: dict[str, Any], content: str | list[Any], path: str
    ) -> list[Text]:
        if isinstance(content, str):
            return [Text(text=content)]
        texts: list[tuple[str, dict[str, Any]]] = []
        for k, c in enumerate(content):
            p = f"{path}.content[{k}]"
            expect(PROTOCOL, c, p, dict)
            kind = require(PROTOCOL, c, "type", p, str)
            if kind in ("output_text", "input_text"):
                mine = {k2: c[k2] for k2 in ("annotations", "logprobs") if c.get(k2)}
                texts.append((require(PROTOCOL, c, "text", p, str), mine))
            elif kind == "refusal":
                texts.append((require(PROTOCOL, c, "refusal", p, str), {"refusal": True}))
            else:
                self.w.add("content_dropped", p, f"{kind} content is not part of the model")
        shared: dict[str, Any] = {}
        item_id = item.get("id")
        if item_id is not None:
            expect(PROTOCOL, item_id, f"{path}.id", str)
            if not self._derived(item_id, "msg", "\x00".join(t for t, _ in texts)):
                shared["id"] = item_id
        if item.get("phase") is not None:
            shared["phase"] = item["phase"]
        if item.get("status") not in (None, "completed"):
            shared["status"] = item["status"]
        return [
            Text(
                text=t,
                refusal=mine.pop("refusal", None),
                provider_details=details(shared | mine),
            )
            for t, mine in texts
        ]

    def _input_part(self, c: Any, path: str, text_kinds: tuple[str, ...]) -> Text | Image | None:
        expect(PROTOCOL, c, path, dict)
        kind = require(PROTOCOL, c, "type", path, str)
        if kind in text_kinds:
            return Text(text=require(PROTOCOL, c, "text", path, str))
        if kind == "input_image":
            return _image(c, path)
        self.w.add("content_dropped", path, f"{kind} content is not part of the model")
        return None

    def _function_call(self, item: dict[str, Any], path: str) -> None:
        call_id = require(PROTOCOL, item, "call_id", path, str)
        name = require(PROTOCOL, item, "name", path, str)
        mine: dict[str, Any] = {}
        arguments: dict[str, Any]
        item_id = item.get("id")
        if item["type"] == "custom_tool_call":
            # A custom tool is the caller's to run, like a function, but the model writes
            # free text (the tool's grammar, not JSON): it stays raw, never parsed.
            arguments, raw = {}, require(PROTOCOL, item, "input", path, str)
            mine["type"] = "custom_tool_call"
            if item.get("status") is not None:
                mine["status"] = item["status"]
        else:
            arguments, raw = arguments_from_text(require(PROTOCOL, item, "arguments", path, str))
        if item_id is not None:
            expect(PROTOCOL, item_id, f"{path}.id", str)
            if item_id != call_item_id(call_id) or mine:
                mine["id"] = item_id
        if item.get("status") not in (None, "completed"):
            mine["status"] = item["status"]
        mine |= extras(item, CALL_KEYS)
        self.call_names[call_id] = name
        self.unanswered.append(call_id)
        self._add(
            "assistant",
            ToolCall(
                id=call_id,
                name=name,
                arguments=arguments,
                raw_arguments=raw,
                provider_details=details(mine),
            ),
        )

    def _function_call_output(self, item: dict[str, Any], path: str) -> None:
        output = require(PROTOCOL, item, "output", path, (str, list))
        name = item.get("name")
        call_id = self._answered(item, path, name if isinstance(name, str) else None)
        if not isinstance(name, str):
            name = self.call_names.get(call_id)
        mine = extras(item, OUTPUT_KEYS)
        if item["type"] == "custom_tool_call_output":
            mine["type"] = item["type"]
        if isinstance(output, str):
            error = error_message(output)
            result = ToolResult(
                call_id=call_id,
                name=name,
                content=output if error is None else error,
                is_error=error is not None,
                provider_details=details(mine),
            )
        else:
            parts = [
                self._input_part(c, f"{path}.output[{k}]", ("input_text", "output_text"))
                for k, c in enumerate(output)
            ]
            result = ToolResult(
                call_id=call_id,
                name=name,
                content=[p for p in parts if p is not None],
                provider_details=details(mine),
            )
        self._add("tool", result)

    def _answered(self, item: dict[str, Any], path: str, name: str | None) -> str:
        """The id of the call an output answers. The SDK marks ``call_id`` optional: an
        output without one answers the earliest unanswered call (of its name, when it names
        one), and says so."""
        if item.get("call_id") is not None:
            call_id = expect(PROTOCOL, item["call_id"], f"{path}.call_id", str)
        else:
            waiting = [c for c in self.unanswered if name is None or self.call_names[c] == name]
            if not waiting:
                raise CodecError(
                    PROTOCOL,
                    f"{path}.call_id",
                    "required to pair the output: no earlier call is unanswered"
                    + ("" if name is None else f" of {name!r}"),
                )
            call_id = waiting[0]
            self.w.add(
                "tool_call_id_missing",
                path,
                f"an output without call_id, paired with the earliest unanswered call {call_id}",
            )
        if call_id in self.unanswered:
            self.unanswered.remove(call_id)
        return call_id

    def _reasoning(self, item: dict[str, Any], path: str) -> None:
        summary = require(PROTOCOL, item, "summary", path, list)
        texts = []
        for k, s in enumerate(summary):
            expect(PROTOCOL, s, f"{path}.summary[{k}]", dict)
            texts.append(require(PROTOCOL, s, "text", f"{path}.summary[{k}]", str))
        encrypted = item.get("encrypted_content")
        if encrypted is not None:
            expect(PROTOCOL, encrypted, f"{path}.encrypted_content", str)
        mine: dict[str, Any] = {}
        item_id = require(PROTOCOL, item, "id", path, str)
        if not self._derived(item_id, "rs", reasoning_basis(texts, encrypted)):
            mine["id"] = item_id
        if len(texts) > 1:
            mine["summary"] = texts
        mine |= extras(item, REASONING_KEYS)
        text = "\n\n".join(texts)
        content = mine.get("content")
        if not text and isinstance(content, list):
            # Open-weight models return raw reasoning_text content and no summary.
            text = joined(content)
        self._add(
            "assistant",
            Thinking(
                text=text,
                signature=encrypted,
                source=PROTOCOL if encrypted is not None else None,
                provider_details=details(mine),
            ),
        )


def _image(part: dict[str, Any], path: str) -> Image:
    mine: dict[str, Any] = {}
    if part.get("detail") not in (None, "auto"):
        mine["detail"] = part["detail"]
    url = part.get("image_url")
    if isinstance(url, str) and (url or not isinstance(part.get("file_id"), str)):
        match = re.fullmatch(r"data:([^;,]*);base64,(.*)", url, re.S)  # an empty type stays
        if match:
            return Image(media_type=match[1], data=match[2], provider_details=details(mine))
        return Image(url=url, provider_details=details(mine))
    if isinstance(part.get("file_id"), str):
        return Image(provider_details=details(mine | {"file_id": part["file_id"]}))
    raise CodecError(PROTOCOL, f"{path}.image_url", "input_image needs image_url or file_id")
