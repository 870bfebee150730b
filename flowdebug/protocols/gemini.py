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
declaration fields (``behavior``). Parts: see :mod:`flowdebug.protocols.gemini_parts`.
"""

from __future__ import annotations

from typing import Any, assert_never

from flowdebug.errors import CodecError
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
from flowdebug.protocols import gemini_response, gemini_stream
from flowdebug.protocols.base import Converted, Kind, Warnings, expect, require
from flowdebug.protocols.gemini_parts import (
    PROTOCOL,
    Decoder,
    Encoder,
    check_foreign,
    own,
    wire_extras,
    with_details,
)
from flowdebug.protocols.gemini_schema import EMPTY_OBJECT, from_schema, to_parameters

_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY", "tool": "ANY"}
# Top-level request keys with a canonical home; anything else rides in provider_details.
_REQUEST_KEYS = {"systemInstruction", "contents", "tools", "toolConfig", "generationConfig"}
_DECL_KEYS = {
    "name",
    "description",
    "parameters",
    "parametersJsonSchema",
    "parameters_json_schema",
    "response",
    "responseJsonSchema",
    "response_json_schema",
}


def encode_request(conv: Conversation) -> Converted[dict[str, Any]]:
    """A ``generateContent`` body for ``conv``."""
    w = Warnings(PROTOCOL)
    enc = Encoder(w)
    check_foreign(conv.provider_details, "provider_details", w)
    details = own(conv.provider_details)
    if conv.model is not None:
        w.add(
            "model_dropped",
            "model",
            "Gemini names the model in the URL "
            f"(models/{conv.model}:generateContent), not in the request body",
        )
    system = [{"text": conv.system}] if conv.system is not None else []
    body: dict[str, Any] = {}
    contents = _encode_messages(conv.messages, enc, system)
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
    body.update({k: v for k, v in details.items() if k not in _REQUEST_KEYS})
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
        parts = [wire for p_path, part in items if (wire := enc.part(part, p_path, calls))]
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


def decode_request(payload: Any) -> Converted[Conversation]:
    """A ``generateContent`` body as a canonical conversation."""
    w = Warnings(PROTOCOL)
    body = expect(PROTOCOL, payload, "$", dict)
    contents = require(PROTOCOL, body, "contents", "$", list)
    details = {k: v for k, v in body.items() if k not in _REQUEST_KEYS}
    system = _decode_system(body.get("systemInstruction"), w)
    tools, extra_tools = _decode_tools(body.get("tools"))
    if extra_tools:
        details["tools"] = extra_tools
    tool_choice, config_extras = _decode_tool_config(body.get("toolConfig"))
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


def _decode_tools(raw: Any) -> tuple[list[Tool], list[Any]]:
    tools: list[Tool] = []
    others: list[Any] = []
    for i, entry in enumerate(expect(PROTOCOL, raw or [], "$.tools", list)):
        path = f"$.tools[{i}]"
        entry = expect(PROTOCOL, entry, path, dict)
        key = (
            "functionDeclarations" if "functionDeclarations" in entry else ("function_declarations")
        )
        # Built-in tools (googleSearch, codeExecution...) ride along untouched.
        if rest := {k: v for k, v in entry.items() if k != key}:
            others.append(rest)
        for j, decl in enumerate(expect(PROTOCOL, entry.get(key, []), f"{path}.{key}", list)):
            tools.append(_decode_declaration(decl, f"{path}.{key}[{j}]"))
    return tools, others


def _decode_declaration(raw: Any, path: str) -> Tool:
    decl = expect(PROTOCOL, raw, path, dict)
    name = require(PROTOCOL, decl, "name", path, str)
    description = decl.get("description")
    if description is not None:
        expect(PROTOCOL, description, f"{path}.description", str)
    schemas = [
        k for k in ("parameters", "parametersJsonSchema", "parameters_json_schema") if k in decl
    ]
    if len(schemas) > 1:
        raise CodecError(
            PROTOCOL,
            f"{path}.{schemas[1]}",
            "parameters and parametersJsonSchema are mutually exclusive",
        )
    parameters = EMPTY_OBJECT
    if schemas == ["parameters"]:
        parameters = from_schema(decl["parameters"], f"{path}.parameters")
    elif schemas:
        parameters = expect(PROTOCOL, decl[schemas[0]], f"{path}.{schemas[0]}", dict)
    output = None
    if "response" in decl:
        output = from_schema(decl["response"], f"{path}.response")
    for key in ("responseJsonSchema", "response_json_schema"):
        if key in decl:
            output = expect(PROTOCOL, decl[key], f"{path}.{key}", dict)
    extras = {k: v for k, v in decl.items() if k not in _DECL_KEYS}
    return Tool(
        name=name,
        description=description,
        parameters=parameters,
        output_schema=output,
        provider_details=with_details(extras),
    )


def _decode_tool_config(raw: Any) -> tuple[ToolChoice | None, dict[str, Any]]:
    if raw is None:
        return None, {}
    config = dict(expect(PROTOCOL, raw, "$.toolConfig", dict))
    if "functionCallingConfig" not in config:
        return None, config
    path = "$.toolConfig.functionCallingConfig"
    fcc = dict(expect(PROTOCOL, config.pop("functionCallingConfig"), path, dict))
    mode = expect(PROTOCOL, fcc.pop("mode", "AUTO"), f"{path}.mode", str)
    names = expect(
        PROTOCOL, fcc.pop("allowedFunctionNames", []), f"{path}.allowedFunctionNames", list
    )
    for i, name in enumerate(names):
        expect(PROTOCOL, name, f"{path}.allowedFunctionNames[{i}]", str)
    if mode == "ANY" and len(names) == 1:
        choice = ToolChoice(mode="tool", name=names[0])
        names = []
    elif mode == "ANY":
        choice = ToolChoice(mode="required")
    elif mode == "NONE":
        choice = ToolChoice(mode="none")
    else:
        # AUTO, or VALIDATED / MODE_UNSPECIFIED, which canonical "auto" approximates.
        choice = ToolChoice(mode="auto")
        if mode != "AUTO":
            fcc["mode"] = mode
    if names:
        fcc["allowedFunctionNames"] = names
    if fcc:
        config["functionCallingConfig"] = fcc
    return choice, config


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


class GeminiCodec:
    """The Gemini ``generateContent`` codec (CLI name ``gemini``)."""

    name = PROTOCOL
    title = "Google Gemini"

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
        """``contents`` makes a request, ``candidates`` a response, a list of those a stream."""
        if isinstance(payload, dict):
            if isinstance(payload.get("contents"), list):
                return "request"
            if isinstance(payload.get("candidates"), list):
                return "response"
            return None
        if (
            isinstance(payload, list)
            and payload
            and all(
                isinstance(c, dict)
                and (isinstance(c.get("candidates"), list) or "usageMetadata" in c)
                for c in payload
            )
            and any("candidates" in c for c in payload)
        ):
            return "stream"
        return None


CODEC = GeminiCodec()
