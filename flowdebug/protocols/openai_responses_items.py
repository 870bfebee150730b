"""OpenAI Responses items: canonical messages <-> the flat ``input`` / ``output`` item list.

A Responses conversation is a list of items, not of turns: messages (``role`` + content),
``reasoning``, ``function_call`` and ``function_call_output``. Calls and outputs pair on
``call_id``; the item ``id`` (``fc_…``, ``msg_…``, ``rs_…``) is a separate handle the API
keeps for stored items.

Item ids ride in ``provider_details["openai-responses"]["id"]``. A part without one gets an
id derived from its content, and the decoder leaves out an id equal to that derivation, so
``decode(encode(x)) == x`` and a call converted from another vendor comes back without
Responses-only baggage.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, assert_never

from flowdebug.errors import CodecError
from flowdebug.model import Image, Message, Part, Text, Thinking, ToolCall, ToolResult
from flowdebug.protocols.base import (
    Warnings,
    expect,
    foreign_signature,
    require,
    safe_call_id,
    safe_name,
)

PROTOCOL = "openai-responses"

# Keys an item decoder maps to canonical fields; anything else on an item survives in
# provider_details.
_CALL_KEYS = {"type", "id", "call_id", "name", "arguments", "status"}
_OUTPUT_KEYS = {"type", "call_id", "output", "name"}
_REASONING_KEYS = {"type", "id", "summary", "encrypted_content"}


def own(obj: Any) -> dict[str, Any]:
    """A copy of ``obj``'s provider_details under our own key (``{}`` when none)."""
    mine = (obj.provider_details or {}).get(PROTOCOL)
    return dict(mine) if isinstance(mine, dict) else {}


def details(values: dict[str, Any]) -> dict[str, Any] | None:
    """provider_details holding ``values`` under our key, or None when there is nothing."""
    return {PROTOCOL: values} if values else None


def extras(obj: dict[str, Any], known: set[str] | tuple[str, ...]) -> dict[str, Any]:
    """The fields of ``obj`` we do not map, to keep in provider_details. A null optional
    field means the same as an absent one (SDK dumps are full of them), so it is not kept."""
    return {k: v for k, v in obj.items() if k not in known and v is not None}


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:32]


def derived_id(prefix: str, basis: str) -> str:
    """The item id we make up for content that arrived without one."""
    return f"{prefix}_{_digest(basis)}"


def call_item_id(call_id: str) -> str:
    """The ``fc_`` item id of a call that carries none: readable when the call id allows."""
    if re.fullmatch(r"[A-Za-z0-9_-]{1,60}", call_id):
        return f"fc_{call_id}"
    return derived_id("fc", call_id)


def reasoning_basis(summary: list[str], encrypted: str | None) -> str:
    return f"{encrypted or ''}\x00" + "\n\n".join(summary)


def arguments_text(call: ToolCall) -> str:
    """What the model sent: the raw string when it was not a JSON object, else compact JSON."""
    if call.raw_arguments is not None:
        return call.raw_arguments
    return json.dumps(call.arguments, separators=(",", ":"), ensure_ascii=False)


def parse_arguments(text: str) -> tuple[dict[str, Any], str | None]:
    """(arguments, raw_arguments): a string that is not a JSON object is kept raw; ``""``
    (a call whose argument deltas have not arrived) means ``{}``."""
    if text == "":
        return {}, None
    try:
        value = json.loads(text)
    except ValueError:
        return {}, text
    return (value, None) if isinstance(value, dict) else ({}, text)


def error_text(output: str) -> str | None:
    """The message of an error result: Responses has no error flag, so we send (and
    recognise) a content that is exactly ``{"error": "<text>"}``."""
    if not output.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(output)
    except ValueError:
        return None
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get("error"), str):
        return value["error"]
    return None


def image_url(image: Image) -> str | None:
    if image.data is not None:
        return f"data:{image.media_type};base64,{image.data}"
    return image.url


class ItemEncoder:
    """Turns canonical parts into items, renaming tools and ids consistently across a whole
    request (a declaration, its calls and their results must keep matching)."""

    def __init__(self, warnings: Warnings):
        self.w = warnings
        self._names: dict[str, str] = {}
        self._call_ids: dict[str, str] = {}
        self._used: set[str] = set()

    def tool_name(self, name: str, path: str) -> str:
        if name not in self._names:
            self._names[name] = safe_name(PROTOCOL, name)
            if self._names[name] != name:
                self.w.add(
                    "tool_name_renamed",
                    path,
                    f"tool name {name!r} is not legal here; sent as {self._names[name]!r}",
                )
        return self._names[name]

    def call_id(self, call_id: str, path: str) -> str:
        if call_id not in self._call_ids:
            self._call_ids[call_id] = safe_call_id(PROTOCOL, call_id)
            if self._call_ids[call_id] != call_id:
                self.w.add(
                    "call_id_renamed",
                    path,
                    f"call id {call_id!r} is not legal here; sent as {self._call_ids[call_id]!r}",
                )
        return self._call_ids[call_id]

    def foreign(self, obj: Any, path: str) -> None:
        """Warn once when ``obj`` carries another protocol's details we cannot send."""
        others = sorted(k for k in (obj.provider_details or {}) if k != PROTOCOL)
        if others:
            self.w.add(
                "provider_details_dropped",
                path,
                f"provider details for {', '.join(others)} have no Responses equivalent",
            )

    def unique(self, explicit: Any, prefix: str, basis: str) -> str:
        """``explicit`` when given, else an id derived from ``basis`` not yet used here."""
        if isinstance(explicit, str) and explicit:
            self._used.add(explicit)
            return explicit
        candidate, n = derived_id(prefix, basis), 0
        while candidate in self._used:
            n += 1
            candidate = derived_id(prefix, f"{basis}\x00#{n}")
        self._used.add(candidate)
        return candidate

    # -- messages -------------------------------------------------------------------------

    def message(self, msg: Message, path: str, *, output: bool = False) -> list[dict[str, Any]]:
        """The items of one canonical message. ``output`` restricts them to what a Response's
        ``output`` can hold (reasoning, assistant messages, function calls)."""
        self.foreign(msg, path)
        items: list[dict[str, Any]] = []
        pending: list[tuple[str, Text | Image]] = []
        for j, part in enumerate(msg.parts):
            p = f"{path}.parts[{j}]"
            if not isinstance(part, Text | Image):
                items += self._content(msg, pending, output)
                pending = []
            match part:
                case Text() | Image():
                    pending.append((p, part))
                case Thinking():
                    if (item := self.reasoning(part, p)) is not None:
                        items.append(item)
                case ToolCall():
                    items.append(self.function_call(part, p))
                case ToolResult() if output:
                    self.w.add(
                        "tool_result_dropped", p, "a model response cannot carry a tool result"
                    )
                case ToolResult():
                    items.append(self.function_call_output(part, p))
                case _:
                    assert_never(part)
        return items + self._content(msg, pending, output)

    def _content(
        self, msg: Message, parts: list[tuple[str, Text | Image]], output: bool
    ) -> list[dict[str, Any]]:
        if not parts:
            return []
        if output or msg.role == "assistant":
            return self._assistant_messages(parts)
        # A tool message has no Responses role; text next to results goes in a user message.
        role = own(msg).get("role", "system") if msg.role == "system" else "user"
        content = [self._input_part(p, part) for p, part in parts]
        kept = [c for c in content if c is not None]
        if len(parts) == 1 and isinstance(parts[0][1], Text) and kept:
            return [{"role": role, "content": parts[0][1].text}]
        return [{"role": role, "content": kept}]

    def _input_part(self, path: str, part: Text | Image) -> dict[str, Any] | None:
        self.foreign(part, path)
        if isinstance(part, Text):
            return {"type": "input_text", "text": part.text}
        out = self._image(part, path, "image_dropped")
        if out is not None:
            # ResponseInputImageParam requires detail in message content.
            out = {
                "type": "input_image",
                "detail": own(part).get("detail", "auto"),
                **{k: v for k, v in out.items() if k not in ("type", "detail")},
            }
        return out

    def _image(self, image: Image, path: str, code: str) -> dict[str, Any] | None:
        mine = own(image)
        out: dict[str, Any] = {"type": "input_image"}
        if "detail" in mine:
            out["detail"] = mine["detail"]
        url = image_url(image)
        if url is not None:
            out["image_url"] = url
        elif isinstance(mine.get("file_id"), str):
            out["file_id"] = mine["file_id"]
        else:
            self.w.add(code, path, "image has neither data, url nor file id")
            return None
        return out

    def _assistant_messages(self, parts: list[tuple[str, Text | Image]]) -> list[dict[str, Any]]:
        """Output message items: consecutive texts sharing an item id, phase and status
        become the content parts of one item."""
        groups: list[tuple[tuple[Any, Any, Any], list[Text]]] = []
        for path, part in parts:
            self.foreign(part, path)
            if isinstance(part, Image):
                self.w.add("image_dropped", path, "an assistant message cannot carry an image")
                continue
            mine = own(part)
            key = (mine.get("id"), mine.get("phase"), mine.get("status"))
            if groups and groups[-1][0] == key:
                groups[-1][1].append(part)
            else:
                groups.append((key, [part]))
        items = []
        for (item_id, phase, status), texts in groups:
            basis = "\x00".join(t.text for t in texts)
            item: dict[str, Any] = {
                "type": "message",
                "id": self.unique(item_id, "msg", basis),
                "status": status or "completed",
                "role": "assistant",
                "content": [_output_part(t) for t in texts],
            }
            if phase is not None:
                item["phase"] = phase
            items.append(item)
        return items

    # -- other items ----------------------------------------------------------------------

    def reasoning(self, thinking: Thinking, path: str) -> dict[str, Any] | None:
        self.foreign(thinking, path)
        mine = own(thinking)
        if foreign_signature(PROTOCOL, thinking, path, self.w):
            if thinking.redacted:
                return None
            thinking = thinking.model_copy(update={"signature": None})
        if thinking.redacted:
            self.w.add(
                "redacted_flag_lost",
                path,
                "redacted thinking sent as a reasoning item holding only "
                "encrypted_content; it decodes as thinking with an empty summary",
            )
            summary, encrypted = [], thinking.text
        else:
            summary, encrypted = _summary(thinking, mine), thinking.signature
        item: dict[str, Any] = {
            "type": "reasoning",
            "id": self.unique(mine.get("id"), "rs", reasoning_basis(summary, encrypted)),
            "summary": [{"type": "summary_text", "text": s} for s in summary],
        }
        if encrypted is not None:
            item["encrypted_content"] = encrypted
        item |= {k: v for k, v in mine.items() if k not in _REASONING_KEYS}
        return item

    def function_call(self, call: ToolCall, path: str) -> dict[str, Any]:
        self.foreign(call, path)
        mine = own(call)
        call_id = self.call_id(call.id, path)
        item_id = mine.get("id")
        item = {
            "type": "function_call",
            "id": item_id if isinstance(item_id, str) and item_id else call_item_id(call_id),
            "call_id": call_id,
            "name": self.tool_name(call.name, path),
            "arguments": arguments_text(call),
            "status": mine.get("status", "completed"),
        }
        return item | {k: v for k, v in mine.items() if k not in _CALL_KEYS}

    def function_call_output(self, result: ToolResult, path: str) -> dict[str, Any]:
        self.foreign(result, path)
        item: dict[str, Any] = {
            "type": "function_call_output",
            "call_id": self.call_id(result.call_id, path),
            "output": self._output(result, path),
        }
        if result.structured is not None:
            self.w.add(
                "structured_content_dropped",
                path,
                "function_call_output has no structured content; only the text is sent",
            )
        return item | {k: v for k, v in own(result).items() if k not in _OUTPUT_KEYS}

    def _output(self, result: ToolResult, path: str) -> str | list[dict[str, Any]]:
        if result.is_error:
            # No error flag on Responses: the convention every flowdebug codec shares.
            if isinstance(result.content, str):
                return json.dumps({"error": result.content})
            texts = [p.text for p in result.content if isinstance(p, Text)]
            if len(texts) != len(result.content):
                self.w.add(
                    "image_in_result_dropped",
                    path,
                    'an error result is sent as {"error": text}; its images are dropped',
                )
            return json.dumps({"error": "\n".join(texts)})
        if isinstance(result.content, str):
            return result.content
        out = []
        for k, part in enumerate(result.content):
            p = f"{path}.content[{k}]"
            self.foreign(part, p)
            if isinstance(part, Text):
                out.append({"type": "input_text", "text": part.text})
            elif (image := self._image(part, p, "image_in_result_dropped")) is not None:
                out.append(image)
        return out


def _summary(thinking: Thinking, mine: dict[str, Any]) -> list[str]:
    """The summary texts of a thinking part, split back the way they arrived when known."""
    kept = mine.get("summary")
    if (
        isinstance(kept, list)
        and all(isinstance(s, str) for s in kept)
        and "\n\n".join(kept) == thinking.text
    ):
        return kept
    content = mine.get("content")
    if isinstance(content, list) and _joined(content) == thinking.text and thinking.text:
        return []  # the text came from raw reasoning content, which travels verbatim
    return [thinking.text] if thinking.text else []


def _joined(parts: list[Any]) -> str:
    return "\n\n".join(
        p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
    )


def _output_part(text: Text) -> dict[str, Any]:
    mine = own(text)
    if mine.get("refusal") is True:
        return {"type": "refusal", "refusal": text.text}
    part: dict[str, Any] = {
        "type": "output_text",
        "text": text.text,
        "annotations": mine.get("annotations", []),
    }
    if "logprobs" in mine:
        part["logprobs"] = mine["logprobs"]
    return part


class ItemDecoder:
    """Builds canonical messages from items. Consecutive assistant items (reasoning,
    messages, calls) form one assistant turn; consecutive outputs one ``tool`` message."""

    def __init__(self, warnings: Warnings):
        self.w = warnings
        self.turns: list[tuple[str, dict[str, Any] | None, list[Part]]] = []
        self.call_names: dict[str, str] = {}

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
        if kind is None:
            raise CodecError(PROTOCOL, f"{path}.type", "required field is missing")
        expect(PROTOCOL, kind, f"{path}.type", str)
        if output and kind not in ("message", "reasoning", "function_call"):
            self.w.add("item_dropped", path, f"{kind} items are not part of the canonical model")
            return
        match kind:
            case "message":
                self._message(item, path, output)
            case "function_call":
                self._function_call(item, path)
            case "function_call_output":
                self._function_call_output(item, path)
            case "reasoning":
                self._reasoning(item, path)
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
            part = self._input_part(c, f"{path}.content[{k}]", ("input_text",))
            if part is not None:
                parts.append(part)
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
            if item_id != derived_id("msg", "\x00".join(t for t, _ in texts)):
                shared["id"] = item_id
        if item.get("phase") is not None:
            shared["phase"] = item["phase"]
        if item.get("status") not in (None, "completed"):
            shared["status"] = item["status"]
        return [Text(text=t, provider_details=details(shared | mine)) for t, mine in texts]

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
        arguments, raw = parse_arguments(require(PROTOCOL, item, "arguments", path, str))
        mine: dict[str, Any] = {}
        item_id = item.get("id")
        if item_id is not None:
            expect(PROTOCOL, item_id, f"{path}.id", str)
            if item_id != call_item_id(call_id):
                mine["id"] = item_id
        if item.get("status") not in (None, "completed"):
            mine["status"] = item["status"]
        mine |= extras(item, _CALL_KEYS)
        self.call_names[call_id] = name
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
        # The SDK marks call_id optional, but without it a result pairs with nothing.
        call_id = require(PROTOCOL, item, "call_id", path, str)
        output = require(PROTOCOL, item, "output", path, (str, list))
        name = item.get("name")
        if not isinstance(name, str):
            name = self.call_names.get(call_id)
        mine = extras(item, _OUTPUT_KEYS)
        if isinstance(output, str):
            error = error_text(output)
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
        if item_id != derived_id("rs", reasoning_basis(texts, encrypted)):
            mine["id"] = item_id
        if len(texts) > 1:
            mine["summary"] = texts
        mine |= extras(item, _REASONING_KEYS)
        text = "\n\n".join(texts)
        content = mine.get("content")
        if not text and isinstance(content, list):
            # Open-weight models return raw reasoning_text content and no summary.
            text = _joined(content)
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
    if isinstance(url, str) and url:
        match = re.fullmatch(r"data:([^;,]+);base64,(.*)", url, re.S)
        if match:
            return Image(media_type=match[1], data=match[2], provider_details=details(mine))
        return Image(url=url, provider_details=details(mine))
    if isinstance(part.get("file_id"), str):
        return Image(provider_details=details(mine | {"file_id": part["file_id"]}))
    raise CodecError(PROTOCOL, f"{path}.image_url", "input_image needs image_url or file_id")
