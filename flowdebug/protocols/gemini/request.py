"""Gemini ``generateContent`` request bodies <-> canonical conversations.

Either spelling of the proto JSON mapping is accepted (see
:mod:`flowdebug.protocols.gemini.spelling`); pairing of function responses with the calls of
the preceding model turn is described in :mod:`flowdebug.protocols.gemini.codec`. A canonical
``tool`` message becomes ONE ``user`` Content with one ``functionResponse`` per result, in
call order.
"""

from __future__ import annotations

from typing import Any, assert_never

from flowdebug.errors import CodecError
from flowdebug.model import Conversation, Message, Part, Text, ToolCall, ToolResult
from flowdebug.protocols.base import Converted, Warnings, expect, require
from flowdebug.protocols.gemini.parts import (
    PROTOCOL,
    check_foreign,
    own,
    renumbered,
    wire_extras,
    with_details,
)
from flowdebug.protocols.gemini.parts.decode import Decoder
from flowdebug.protocols.gemini.parts.encode import Encoder
from flowdebug.protocols.gemini.spelling import normalize_request
from flowdebug.protocols.gemini.tools import (
    decode_tool_config,
    decode_tools,
    encode_tool_choice,
    encode_tools,
)
from flowdebug.protocols.models import own_model

# Top-level request keys with a canonical home; anything else rides in provider_details.
REQUEST_KEYS = {"systemInstruction", "contents", "tools", "toolConfig", "generationConfig"}


def decode_request(payload: Any) -> Converted[Conversation]:
    """A ``generateContent`` body as a canonical conversation."""
    w = Warnings(PROTOCOL)
    body = normalize_request(expect(PROTOCOL, payload, "$", dict))
    contents = require(PROTOCOL, body, "contents", "$", list)
    details = {k: v for k, v in body.items() if k not in REQUEST_KEYS}
    system = _decode_system(body.get("systemInstruction"), w)
    tools, extra_tools = decode_tools(body.get("tools"))
    if extra_tools:
        details["tools"] = extra_tools
    tool_choice, config_extras = decode_tool_config(body.get("toolConfig"))
    if config_extras:
        details["toolConfig"] = config_extras
    gen = expect(PROTOCOL, body.get("generationConfig", {}), "$.generationConfig", dict)
    max_tokens = gen.get("maxOutputTokens")
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int)):
        raise CodecError(PROTOCOL, "$.generationConfig.maxOutputTokens", "expected an integer")
    temperature = gen.get("temperature")
    if temperature is not None and (
        isinstance(temperature, bool) or not isinstance(temperature, int | float)
    ):
        raise CodecError(PROTOCOL, "$.generationConfig.temperature", "expected a number")
    if gen_extras := {k: v for k, v in gen.items() if k not in ("maxOutputTokens", "temperature")}:
        details["generationConfig"] = gen_extras
    conv = Conversation(
        system=system,
        tools=tools,
        tool_choice=tool_choice,
        messages=_decode_contents(contents, Decoder(w)),
        max_tokens=max_tokens,
        temperature=temperature,
        provider_details=with_details(details),
    )
    return w.wrap(conv)


def _decode_system(raw: Any, w: Warnings) -> str | None:
    if raw is None:
        return None
    path = "$.systemInstruction"
    content = expect(PROTOCOL, raw, path, dict)
    texts = []
    for i, part in enumerate(require(PROTOCOL, content, "parts", path, list)):
        part = expect(PROTOCOL, part, f"{path}.parts[{i}]", dict)
        if "text" in part:
            texts.append(expect(PROTOCOL, part["text"], f"{path}.parts[{i}].text", str))
        else:
            w.add(
                "system_dropped", f"{path}.parts[{i}]", "only text system instructions are carried"
            )
    return "\n".join(texts)


class _Batch:
    """The calls of the preceding model turn, for pairing the function responses after it."""

    def __init__(self, w: Warnings, calls: list[ToolCall]):
        self.w = w
        self.calls = calls
        self.used: set[int] = set()

    def __call__(
        self, wire_id: str | None, name: str | None, path: str, synthetic: str
    ) -> tuple[str, str | None]:
        """By id when the wire has one, else by name and order within the batch."""
        for n, call in enumerate(self.calls):
            if n in self.used:
                continue
            if wire_id is not None:
                hit = call.id == wire_id and not own(call.provider_details).get("syntheticId")
            else:
                hit = name is None or call.name == name
            if hit:
                self.used.add(n)
                return call.id, call.name
        self.w.add(
            "result_unpaired",
            path,
            "no call in the preceding model turn matches this function response",
        )
        return wire_id or synthetic, None


def _decode_contents(contents: list[Any], dec: Decoder) -> list[Message]:
    messages: list[Message] = []
    batch = _Batch(dec.w, [])
    for ci, raw in enumerate(contents):
        path = f"$.contents[{ci}]"
        content = expect(PROTOCOL, raw, path, dict)
        role = expect(PROTOCOL, content.get("role", "user"), f"{path}.role", str)
        # "function" is the role older v1beta examples gave function responses.
        if role not in ("user", "model", "function"):
            raise CodecError(PROTOCOL, f"{path}.role", f"expected 'user' or 'model', got {role!r}")
        raw_parts = require(PROTOCOL, content, "parts", path, list)
        parts = [
            p
            for pi, rp in enumerate(raw_parts)
            if (p := dec.part(rp, f"{path}.parts[{pi}]", f"gemini_call_{ci}_{pi}", batch))
        ]
        if role == "model":
            messages.append(Message(role="assistant", parts=parts))
            batch = _Batch(dec.w, [p for p in parts if isinstance(p, ToolCall)])
            continue
        # A user turn: each run of function responses is a canonical tool message.
        runs: list[tuple[str, list[Part]]] = []
        for part in parts:
            kind = "tool" if isinstance(part, ToolResult) else "user"
            if runs and runs[-1][0] == kind:
                runs[-1][1].append(part)
            else:
                runs.append((kind, [part]))
        messages += [Message(role=kind, parts=run) for kind, run in runs or [("user", [])]]
    return messages


def encode_request(conv: Conversation) -> Converted[dict[str, Any]]:
    """A ``generateContent`` body for ``conv``."""
    w = Warnings(PROTOCOL)
    enc = Encoder(w)
    check_foreign(conv.provider_details, "provider_details", w)
    details = own(conv.provider_details)
    model = own_model(
        conv.model, w, where=" in the URL (models/{model}:generateContent; the body names none)"
    )
    if model is not None and model == conv.model:
        w.add(
            "model_dropped",
            "model",
            f"Gemini names the model in the URL (models/{model}:generateContent), not in the "
            "request body",
        )
    system = [{"text": conv.system}] if conv.system is not None else []
    body: dict[str, Any] = {}
    contents = _encode_messages(conv.messages, enc, system)
    if moved := sum(m.role == "system" for m in conv.messages):
        # Decoded back, the text is the system prompt and the messages after it move up.
        w.add(
            "system_moved",
            "system",
            f"Gemini has one systemInstruction: the text of {moved} system message(s) joined "
            "the system prompt there",
        )
        w.add(
            "messages_renumbered",
            "messages",
            f"{moved} system message(s) left the message list, so the messages after them moved up",
        )
    if system:
        body["systemInstruction"] = {"parts": system}
    body["contents"] = contents
    tools = encode_tools(conv.tools, enc)
    extra_tools = details.get("tools")
    tools += extra_tools if isinstance(extra_tools, list) else []
    if tools:
        body["tools"] = tools
    if tool_config := encode_tool_choice(conv.tool_choice, enc, details.get("toolConfig")):
        body["toolConfig"] = tool_config
    gen: dict[str, Any] = {}
    if conv.max_tokens is not None:
        gen["maxOutputTokens"] = conv.max_tokens
    if conv.temperature is not None:
        gen["temperature"] = conv.temperature
    gen.update(wire_extras(conv.provider_details, "generationConfig"))
    if gen:
        body["generationConfig"] = gen
    body.update({k: v for k, v in details.items() if k not in REQUEST_KEYS})
    return w.wrap(body)


def _encode_messages(
    messages: list[Message], enc: Encoder, system: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    contents: list[dict[str, Any]] = []
    calls: dict[str, ToolCall] = {}
    batch: list[ToolCall] = []  # the calls of the latest model turn, in order
    i = 0
    while i < len(messages):
        msg = messages[i]
        path = f"messages[{i}]"
        check_foreign(msg.provider_details, path, enc.w)
        items = [(f"{path}.parts[{j}]", p) for j, p in enumerate(msg.parts)]
        i += 1
        match msg.role:
            case "system":
                _encode_system(items, path, enc, system, moved=bool(contents))
                continue
            case "user":
                role = "user"
            case "assistant":
                role = "model"
                batch = msg.tool_calls
            case "tool":
                # Gemini: all results of a parallel batch in one user turn, in call order.
                while i < len(messages) and messages[i].role == "tool":
                    check_foreign(messages[i].provider_details, f"messages[{i}]", enc.w)
                    items += [
                        (f"messages[{i}].parts[{j}]", p) for j, p in enumerate(messages[i].parts)
                    ]
                    i += 1
                    enc.w.add("messages_merged", "messages", f"{path} takes messages[{i - 1}]")
                role = "user"
                items = _in_call_order(items, batch, path, enc.w)
            case _:
                assert_never(msg.role)
        calls.update({c.id: c for c in msg.tool_calls})
        wires = [enc.part(part, p_path, calls) for p_path, part in items]
        if all(wires):
            parts = wires
        else:
            parts = [wire for wire in wires if wire]
            renumbered(wires, path, enc.w)
        if parts:
            contents.append({"role": role, "parts": parts})
            continue
        enc.w.add("message_dropped", path, "Gemini rejects a turn without parts")
        if i < len(messages):
            enc.w.add("messages_renumbered", "messages", f"the messages after {path} move up")
    return contents


def _encode_system(
    items: list[tuple[str, Part]],
    path: str,
    enc: Encoder,
    system: list[dict[str, Any]],
    moved: bool,
) -> None:
    if moved:
        enc.w.add(
            "system_moved",
            path,
            "Gemini has one systemInstruction; this system "
            "message was moved there from the middle of the conversation",
        )
    for p_path, part in items:
        if isinstance(part, Text):
            system.append({"text": part.text})
        else:
            enc.w.add(
                "system_dropped",
                p_path,
                f"a {part.kind} part cannot go into Gemini's systemInstruction",
            )


def _in_call_order(
    items: list[tuple[str, Part]], batch: list[ToolCall], path: str, w: Warnings
) -> list[tuple[str, Part]]:
    """Results first, in the order of the calls they answer; unknown ones keep their order."""
    order = {call.id: n for n, call in enumerate(batch)}

    def rank(item: tuple[str, Part]) -> tuple[int, int]:
        part = item[1]
        if isinstance(part, ToolResult):
            return (0, order[part.call_id]) if part.call_id in order else (1, 0)
        return (2, 0)

    ranked = sorted(items, key=rank)
    if ranked != items:
        w.add(
            "results_reordered",
            path,
            "Gemini pairs results with calls by order: results were sent in call order",
        )
    return ranked
