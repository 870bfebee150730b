"""Decoding a Gemini ``generateContent`` request into a canonical conversation.

Either spelling of the proto JSON mapping is accepted (see
:mod:`flowdebug.protocols.gemini.spelling`); pairing of function responses with the calls of
the preceding model turn is described in :mod:`flowdebug.protocols.gemini.codec`.
"""

from __future__ import annotations

from typing import Any

from flowdebug.errors import CodecError
from flowdebug.model import Conversation, Message, Part, Tool, ToolCall, ToolChoice, ToolResult
from flowdebug.protocols.base import Converted, Warnings, expect, require
from flowdebug.protocols.gemini.part_decode import Decoder
from flowdebug.protocols.gemini.parts import PROTOCOL, own, with_details
from flowdebug.protocols.gemini.schema import EMPTY_OBJECT, from_schema
from flowdebug.protocols.gemini.spelling import normalize_request

# Top-level request keys with a canonical home; anything else rides in provider_details.
REQUEST_KEYS = {"systemInstruction", "contents", "tools", "toolConfig", "generationConfig"}
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


def decode_request(payload: Any) -> Converted[Conversation]:
    """A ``generateContent`` body as a canonical conversation."""
    w = Warnings(PROTOCOL)
    body = normalize_request(expect(PROTOCOL, payload, "$", dict))
    contents = require(PROTOCOL, body, "contents", "$", list)
    details = {k: v for k, v in body.items() if k not in REQUEST_KEYS}
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
