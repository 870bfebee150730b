"""Google Gemini ``generateContent`` (REST JSON, camelCase).

Requests: ``systemInstruction``, ``contents`` (roles ``user`` / ``model``), ``tools``
(``functionDeclarations``), ``toolConfig.functionCallingConfig``, ``generationConfig``. The
model is named in the URL (``models/{model}:generateContent``), never in the body.

Pairing: a canonical ``tool`` message becomes ONE ``user`` Content with one
``functionResponse`` per result in call order (Gemini rejects a turn whose number of
function responses differs from the calls'). ``functionCall.id`` is optional (Gemini <= 2.5
often omits it): a call without one gets the canonical id ``gemini_call_<content>_<part>``
(its indexes in ``contents`` and ``parts``), marked ``syntheticId`` so it is not sent back, and
results pair by ``id`` when present, else by name and order within the preceding model turn.

``provider_details["gemini"]`` keeps what has no canonical home, so a Gemini payload survives
decode + encode unchanged: on a conversation the unknown top-level fields (``safetySettings``,
``cachedContent``...), ``tools`` (built-in tool entries such as ``googleSearch``),
``toolConfig`` and ``generationConfig`` (their extra fields; ``functionCallingConfig`` holds
what the canonical tool choice cannot say, e.g. mode ``VALIDATED``); on a tool the extra
declaration fields (``behavior``). Parts: see :mod:`flowdebug.protocols.gemini.parts`.
"""

from __future__ import annotations

from typing import Any, assert_never

from flowdebug.model import (
    Conversation,
    Message,
    ModelResponse,
    Part,
    Text,
    Tool,
    ToolCall,
    ToolChoice,
    ToolResult,
)
from flowdebug.protocols.base import Converted, Kind, Warnings
from flowdebug.protocols.gemini import fragment as gemini_fragment
from flowdebug.protocols.gemini import response as gemini_response
from flowdebug.protocols.gemini import stream as gemini_stream
from flowdebug.protocols.gemini.decode import REQUEST_KEYS, decode_request
from flowdebug.protocols.gemini.facts import FACTS
from flowdebug.protocols.gemini.parts import (
    PROTOCOL,
    Encoder,
    check_foreign,
    own,
    renumbered,
    wire_extras,
)
from flowdebug.protocols.gemini.schema import EMPTY_OBJECT, to_parameters
from flowdebug.protocols.models import own_model

_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY", "tool": "ANY"}


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
    tools = _encode_tools(conv.tools, enc)
    extra_tools = details.get("tools")
    tools += extra_tools if isinstance(extra_tools, list) else []
    if tools:
        body["tools"] = tools
    if tool_config := _encode_tool_choice(conv.tool_choice, enc, details.get("toolConfig")):
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
        elif not items:
            enc.w.add("message_dropped", path, "Gemini rejects a turn without parts")
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


def _encode_tools(tools: list[Tool], enc: Encoder) -> list[dict[str, Any]]:
    decls = []
    for i, tool in enumerate(tools):
        path = f"tools[{i}]"
        check_foreign(tool.provider_details, path, enc.w)
        decl: dict[str, Any] = {"name": enc.name(tool.name, f"{path}.name")}
        if tool.description is not None:
            decl["description"] = tool.description
        # A function without parameters sends none (see EMPTY_OBJECT); a schema that fits
        # Gemini's OpenAPI subset goes as ``parameters``, anything richer verbatim as
        # ``parametersJsonSchema`` so no keyword is dropped.
        if tool.parameters != EMPTY_OBJECT:
            params = to_parameters(tool.parameters)
            if params is not None:
                decl["parameters"] = params
            else:
                decl["parametersJsonSchema"] = tool.parameters
        if tool.output_schema is not None:
            decl["responseJsonSchema"] = tool.output_schema
        for field in ("title", "annotations", "strict"):
            if getattr(tool, field) is not None:
                enc.w.add(
                    "tool_field_dropped",
                    f"{path}.{field}",
                    f"a Gemini function declaration has no {field}",
                )
        decl.update(wire_extras(tool.provider_details))
        decls.append(decl)
    return [{"functionDeclarations": decls}] if decls else []


def _encode_tool_choice(choice: ToolChoice | None, enc: Encoder, stored: Any) -> dict[str, Any]:
    config = dict(stored) if isinstance(stored, dict) else {}
    if choice is None:
        return config
    fcc: dict[str, Any] = {"mode": _MODES[choice.mode]}
    if choice.mode == "tool" and choice.name is not None:
        fcc["allowedFunctionNames"] = [enc.name(choice.name, "tool_choice.name")]
    if choice.parallel is False:
        enc.w.add(
            "tool_choice_dropped",
            "tool_choice.parallel",
            "Gemini has no switch to disable parallel function calls",
        )
    overrides = config.pop("functionCallingConfig", None)
    fcc.update(overrides if isinstance(overrides, dict) else {})
    return {"functionCallingConfig": fcc, **config}


class GeminiCodec:
    """The Gemini ``generateContent`` codec (CLI name ``gemini``)."""

    name = PROTOCOL
    title = FACTS.title
    facts = FACTS

    def encode_request(self, conv: Conversation) -> Converted[Any]:
        return encode_request(conv)

    def decode_request(self, payload: Any) -> Converted[Conversation]:
        return decode_request(payload)

    def encode_response(self, resp: ModelResponse) -> Converted[Any]:
        return gemini_response.encode_response(resp)

    def decode_response(self, payload: Any) -> Converted[ModelResponse]:
        return gemini_response.decode_response(payload)

    def encode_stream(self, resp: ModelResponse) -> Converted[list[Any]]:
        return gemini_stream.encode_stream(resp)

    def decode_stream(self, events: list[Any]) -> Converted[ModelResponse]:
        return gemini_stream.decode_stream(events)

    def detect(self, payload: Any) -> Kind | None:
        """``contents`` makes a request, ``candidates`` a response, a list of those a stream.

        ``contents`` may be one Content object (whose ``parts`` may be one Part) and keys may
        be snake_case (proto JSON): a request whose only tool-related field is ``toolConfig``
        is still a request.
        """
        if isinstance(payload, dict):
            contents = payload.get("contents")
            if isinstance(contents, list) or (
                isinstance(contents, dict) and isinstance(contents.get("parts"), list | dict)
            ):
                return "request"
            if isinstance(payload.get("candidates"), list):
                return "response"
            return None
        if (
            isinstance(payload, list)
            and payload
            and all(
                isinstance(c, dict)
                and (
                    isinstance(c.get("candidates"), list)
                    or "usageMetadata" in c
                    or "usage_metadata" in c
                )
                for c in payload
            )
            and any("candidates" in c for c in payload)
        ):
            return "stream"
        return None

    def fragment(self, payload: Any) -> tuple[Any, str] | None:
        return gemini_fragment.fragment(payload)


CODEC = GeminiCodec()
