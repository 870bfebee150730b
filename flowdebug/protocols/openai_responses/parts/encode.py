"""OpenAI Responses items: canonical messages -> the flat ``input`` / ``output`` item list
(decoding is in :mod:`.decode`, the field helpers both share in the package, vendor-run items
in :mod:`flowdebug.protocols.openai_responses.hosted`).

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

import re
from typing import Any, assert_never

from flowdebug.model import (
    HostedCall,
    HostedResult,
    Image,
    Message,
    Text,
    Thinking,
    ToolCall,
    ToolResult,
)
from flowdebug.protocols.base import Warnings, foreign_thinking, safe_call_id, safe_name
from flowdebug.protocols.error_results import error_output, warn_if_read_as_error
from flowdebug.protocols.openai_responses.hosted import HostedEncoder
from flowdebug.protocols.openai_responses.parts import (
    CALL_KEYS,
    OUTPUT_KEYS,
    PROTOCOL,
    REASONING_KEYS,
    DerivedIds,
    arguments_text,
    call_item_id,
    image_url,
    joined,
    own,
    reasoning_basis,
)
from flowdebug.protocols.warning_codes import WarningCode


class ItemEncoder:
    """Turns canonical parts into items, renaming tools and ids consistently across a whole
    request (a declaration, its calls and their results must keep matching)."""

    def __init__(self, warnings: Warnings):
        self.w = warnings
        self._names: dict[str, str] = {}
        self._call_ids: dict[str, str] = {}
        self._ids = DerivedIds()

    def tool_name(self, name: str, path: str) -> str:
        """The legal spelling of ``name``, named at every path where it changes (each path
        decodes to the new name)."""
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
        """``explicit`` when given (even "", which the SDK's types take), else an id derived
        from ``basis`` not yet used here."""
        if isinstance(explicit, str):
            self._ids.add(explicit)
            return explicit
        candidate = self._ids.next(prefix, basis)
        self._ids.add(candidate)
        return candidate

    # -- messages -------------------------------------------------------------------------

    def message(self, msg: Message, path: str, *, output: bool = False) -> list[dict[str, Any]]:
        """The items of one canonical message. ``output`` restricts them to what a Response's
        ``output`` can hold (reasoning, assistant messages, function calls)."""
        self.foreign(msg, path)
        if not msg.parts and not output and msg.role in ("user", "system"):
            # An empty message keeps its place: an empty content list reads back as no parts.
            return [{"role": own(msg).get("role", msg.role), "content": []}]
        if not output and any(_misplaced(part, msg.role) for part in msg.parts):
            # Items carry no turns: each reads back in the turn its kind belongs to.
            self.w.add("messages_regrouped", "messages", f"{path} holds parts of another turn")
        first_warning = len(self.w.items)
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
                case HostedCall() | HostedResult():
                    items += self._hosted(part, p, msg.parts)
                case _:
                    assert_never(part)
        items += self._content(msg, pending, output)
        # After the content: an image the assistant message cannot carry is left out there.
        self._shifted(msg, path, first_warning)
        return items

    def _shifted(self, msg: Message, path: str, first_warning: int) -> None:
        """Name the message when a part left out (a hosted part, redacted reasoning of another
        vendor) moves the parts after it up."""
        dropped = [
            k
            for w in self.w.items[first_warning:]
            if (m := re.fullmatch(re.escape(path) + r"\.parts\[(\d+)\]", w.path))
            and _left_out(w.code, msg.parts[k := int(m[1])])
        ]
        if dropped and any(k > min(dropped) for k in set(range(len(msg.parts))) - set(dropped)):
            self.w.add(
                "parts_shifted",
                path,
                "hosted parts were left out, so the parts after them move up in this message",
            )

    def _hosted(
        self, part: HostedCall | HostedResult, path: str, parts: list[Any]
    ) -> list[dict[str, Any]]:
        self.foreign(part, path)
        return HostedEncoder(self.w).items(part, path, parts)

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
            if part.refusal:
                self.w.add(
                    "refusal_flattened",
                    path,
                    "only assistant messages carry refusals; sent as input_text",
                )
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

    def _image(self, image: Image, path: str, code: WarningCode) -> dict[str, Any] | None:
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
        unsourced = (
            "reasoning from {source} is sent as a Responses reasoning item; which protocol "
            "issued it is not kept"
        )
        if (sent := foreign_thinking(PROTOCOL, thinking, path, self.w, unsourced)) is None:
            return None
        thinking = sent
        if thinking.redacted:
            self.w.add(
                "redacted_flag_lost",
                path,
                "redacted thinking sent as a reasoning item holding only "
                "encrypted_content; it decodes as thinking with an empty summary",
            )
            summary: list[str] = []
            encrypted: str | None = thinking.text
        else:
            summary, encrypted = _summary(thinking, mine), thinking.signature
        item: dict[str, Any] = {
            "type": "reasoning",
            "id": self.unique(mine.get("id"), "rs", reasoning_basis(summary, encrypted)),
            "summary": [{"type": "summary_text", "text": s} for s in summary],
        }
        if encrypted is not None:
            item["encrypted_content"] = encrypted
        item |= {k: v for k, v in mine.items() if k not in REASONING_KEYS}
        return item

    def function_call(self, call: ToolCall, path: str) -> dict[str, Any]:
        self.foreign(call, path)
        mine = own(call)
        call_id = self.call_id(call.id, path)
        item_id = mine.get("id")
        if mine.get("type") == "custom_tool_call":
            # A custom (free-form) tool: the model's raw text is the whole input.
            custom: dict[str, Any] = {"type": "custom_tool_call", "call_id": call_id}
            if isinstance(item_id, str):
                custom["id"] = item_id
            custom |= {"name": self.tool_name(call.name, path), "input": arguments_text(call)}
            if "status" in mine:
                custom["status"] = mine["status"]
            return custom | {k: v for k, v in mine.items() if k not in CALL_KEYS}
        item = {
            "type": "function_call",
            "id": item_id if isinstance(item_id, str) and item_id else call_item_id(call_id),
            "call_id": call_id,
            "name": self.tool_name(call.name, path),
            "arguments": arguments_text(call),
            "status": mine.get("status", "completed"),
        }
        return item | {k: v for k, v in mine.items() if k not in CALL_KEYS}

    def function_call_output(self, result: ToolResult, path: str) -> dict[str, Any]:
        self.foreign(result, path)
        custom = own(result).get("type") == "custom_tool_call_output"
        if result.name is not None:
            # Not sent (outputs pair by call_id), but it decodes as the call's new name.
            self.tool_name(result.name, f"{path}.name")
        item: dict[str, Any] = {
            "type": "custom_tool_call_output" if custom else "function_call_output",
            "call_id": self.call_id(result.call_id, path),
            "output": self._output(result, path),
        }
        if result.structured is not None:
            self.w.add(
                "structured_content_dropped",
                path,
                "function_call_output has no structured content; only the text is sent",
            )
        return item | {k: v for k, v in own(result).items() if k not in OUTPUT_KEYS}

    def _output(self, result: ToolResult, path: str) -> str | list[dict[str, Any]]:
        if result.is_error:
            # No error flag on Responses: the convention every flowdebug codec shares.
            if isinstance(result.content, str):
                return error_output(result.content)
            texts = [p.text for p in result.content if isinstance(p, Text)]
            if len(texts) != len(result.content):
                self.w.add(
                    "image_in_result_dropped",
                    path,
                    'an error result is sent as {"error": text}; its images are dropped',
                )
            else:
                self.w.add(
                    "result_content_flattened",
                    f"{path}.content",
                    'an error result is sent as {"error": text}; its text parts read back as '
                    "one string",
                )
            return error_output("\n".join(texts))
        if isinstance(result.content, str):
            warn_if_read_as_error(self.w, result.content, path, "OpenAI Responses")
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
    if isinstance(content, list) and joined(content) == thinking.text and thinking.text:
        return []  # the text came from raw reasoning content, which travels verbatim
    return [thinking.text] if thinking.text else []


def _output_part(text: Text) -> dict[str, Any]:
    mine = own(text)
    if text.refusal or mine.get("refusal") is True:
        return {"type": "refusal", "refusal": text.text}
    part: dict[str, Any] = {
        "type": "output_text",
        "text": text.text,
        "annotations": mine.get("annotations", []),
    }
    if "logprobs" in mine:
        part["logprobs"] = mine["logprobs"]
    return part


def _misplaced(part: Any, role: str) -> bool:
    """Whether ``part`` reads back in another message than a ``role`` one."""
    if isinstance(part, ToolResult):
        return role != "tool"
    if isinstance(part, ToolCall | Thinking):
        return role != "assistant"
    return role == "tool" and isinstance(part, Text | Image)


def _left_out(code: str, part: Any) -> bool:
    """Whether the warning ``code`` on ``part`` means the part is not in the output."""
    if code in ("hosted_call_dropped", "hosted_result_dropped", "tool_result_dropped"):
        return True
    if code == "image_dropped" and isinstance(part, Image):
        return True
    # Another vendor's redacted reasoning is opaque: nothing of it can be sent.
    return code == "thinking_signature_dropped" and getattr(part, "redacted", False)
