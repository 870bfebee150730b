"""MCP (JSON-RPC 2.0): the declaration and execution phases of the cycle on the wire.

MCP is not a model API: it carries what the runtime and a tool server say to each other,
``tools/list`` (declaration) and ``tools/call`` -> ``CallToolResult`` (execution). The Codec
interface maps onto it as follows.

Kinds (``detect``):

- ``transcript``: a JSON array of ``{"dir": "client->server" | "server->client", "msg": <JSON-RPC
  message>}``, or a bare array of JSON-RPC messages.
- ``tools_list``: a ``tools/list`` request or its response, or a bare ``{"tools": [...]}`` result.
- ``tools_call``: one ``tools/call`` request.
- ``call_result``: one JSON-RPC response whose result is a ``CallToolResult``, or a JSON-RPC
  error response.
- ``response``: an array of ``tools/call`` requests (what ``encode_response`` writes).
- ``stream``: an array of SSE event objects ``{"event": "message", "data": <JSON-RPC message>}``.

The first four kinds are read with ``decode_request``; ``response`` and ``stream`` with
``decode_response`` and ``decode_stream``.

``encode_request(conv)`` writes a transcript: the ``tools/list`` request (JSON-RPC id 1) and its
result, then, message by message, a ``tools/call`` request for every call and a response for
every result. The JSON-RPC id of a call is its canonical call id, so pairing is by id; the
requests of one assistant message all go out before their responses, as a client running
parallel calls concurrently sends them, and ``decode_request`` regroups a run of requests and
the responses that follow into one assistant message and one tool message (a sequential
transcript such as the reference gives one call and one result per turn).

``encode_response(resp)`` writes the ``tools/call`` requests of the turn's calls, and
``decode_response`` reads that array or one request. ``encode_stream`` gives the same requests
as streamable-HTTP SSE events ``{"event": "message", "data": <msg>}`` (``decode_stream`` also
takes ``data`` as JSON text), so ``decode_stream(encode_stream(r)) ==
decode_response(encode_response(r))``.

What MCP cannot carry is warned: ``system_dropped`` (the system prompt), ``text_dropped`` (user
and assistant text), ``thinking_dropped``, ``image_dropped`` (images outside tool results),
``tool_choice_dropped`` (even ``auto``: it does not come back),
``model_settings_dropped`` (model, max_tokens, temperature), ``strict_dropped``,
``raw_arguments_dropped``, ``provider_details_dropped``, ``tool_name_renamed`` and
``call_id_renamed`` (``safe_name``/``safe_call_id``), and for a protocol error
``image_in_result_dropped`` and ``structured_content_dropped``.

Errors: a tool failure is a normal ``CallToolResult`` with ``isError: true`` (the model sees it),
and so are argument validation failures (``error_type`` ``validation`` or
``malformed_arguments``), as the MCP SDK's server does. A failure to find the tool
(``error_type`` ``unknown_tool``) is a JSON-RPC protocol error, code -32602, like the reference
capture ``{"code": -32602, "message": "Unknown tool: get_wether"}``. Decoding a JSON-RPC error
gives an error result with ``error_type="protocol"`` and the wire error in
``provider_details["mcp"]["error"]``, which encodes back to the same JSON-RPC error.

Ids: JSON-RPC ids that are integers become string call ids (``3`` -> ``"3"``) and are written
back as strings. Handshake messages (``initialize``, ``server/discover``, notifications, ``ping``)
are not part of the tool cycle and are skipped when decoding, as is the ``tools/list`` envelope
(``nextCursor``, ``ttlMs``, ``cacheScope``, its ``_meta``: several pages add up to one tool
list); any other method is skipped with a ``message_ignored`` warning. Fields of a tool, a
call's params, a result or a content block that have no canonical home (``_meta``, ``icons``,
``execution``, ``resultType``, block ``annotations`` ...) ride in ``provider_details["mcp"]``
and are written back on encode.
Content blocks other than text and images (audio, resources) decode to a placeholder text part
that keeps the original block and writes it back unchanged; an image given by URL travels as a
``resource_link`` block.
"""

from __future__ import annotations

import json
from typing import Any, assert_never

from flowdebug.errors import CodecError
from flowdebug.model import (
    Conversation,
    Image,
    Message,
    ModelResponse,
    Text,
    Thinking,
    Tool,
    ToolCall,
    ToolResult,
)
from flowdebug.protocols.base import Converted, Kind, Warnings, expect, require
from flowdebug.protocols.mcp_convert import (
    PROTOCOL,
    call_from_mcp,
    call_to_mcp,
    error_from_mcp,
    response_to_mcp,
    result_from_mcp,
    result_to_mcp,
    rpc_id,
    tool_from_mcp,
    tool_to_mcp,
    warn_foreign,
)

__all__ = [
    "CODEC",
    "McpCodec",
    "call_from_mcp",
    "call_to_mcp",
    "error_from_mcp",
    "response_to_mcp",
    "result_from_mcp",
    "result_to_mcp",
    "tool_from_mcp",
    "tool_to_mcp",
]

CLIENT, SERVER = "client->server", "server->client"
# The tools/list exchange is numbered; calls use their (string) canonical ids, never an int.
LIST_ID = 1
# Methods outside the tool cycle that every session has; skipped without a warning.
HANDSHAKE = frozenset({"initialize", "server/discover", "ping"})


# --- framing --------------------------------------------------------------------------------


def _entry(direction: str, msg: dict[str, Any]) -> dict[str, Any]:
    return {"dir": direction, "msg": msg}


def _message(msg: Any, path: str) -> dict[str, Any]:
    expect(PROTOCOL, msg, path, dict)
    if msg.get("jsonrpc") != "2.0":
        raise CodecError(PROTOCOL, f"{path}.jsonrpc", 'expected "2.0" (a JSON-RPC 2.0 message)')
    if not any(k in msg for k in ("method", "result", "error")):
        raise CodecError(
            PROTOCOL,
            path,
            "not a JSON-RPC request, notification or response: "
            "it has none of method, result, error",
        )
    return msg


def _messages(payload: Any, path: str = "$") -> list[tuple[str, dict[str, Any]]]:
    """(path, message) pairs of a transcript, a bare message array or one message."""
    if isinstance(payload, dict):
        return [(path, _message(payload, path))]
    expect(PROTOCOL, payload, path, (list, dict))
    out = []
    for i, item in enumerate(payload):
        where = f"{path}[{i}]"
        if isinstance(item, dict) and "msg" in item:
            if item.get("dir", CLIENT) not in (CLIENT, SERVER):
                raise CodecError(PROTOCOL, f"{where}.dir", f'expected "{CLIENT}" or "{SERVER}"')
            where += ".msg"
            item = item["msg"]
        out.append((where, _message(item, where)))
    return out


class _Transcript:
    """Replays JSON-RPC messages in wire order into tools and grouped messages."""

    def __init__(self, w: Warnings):
        self.w = w
        self.tools: dict[str, Tool] = {}
        self.methods: dict[str, str] = {}
        self.names: dict[str, str] = {}
        self.messages: list[Message] = []
        self.calls: list[ToolCall] = []
        self.results: list[ToolResult] = []

    def feed(self, path: str, msg: dict[str, Any]) -> None:
        if "method" in msg:
            self._request(path, msg)
        else:
            self._response(path, msg)

    def conversation(self) -> Conversation:
        self._flush()
        return Conversation(tools=list(self.tools.values()), messages=self.messages)

    def _request(self, path: str, msg: dict[str, Any]) -> None:
        method = require(PROTOCOL, msg, "method", path, str)
        if "id" not in msg and method not in ("tools/call", "tools/list"):
            return  # a notification: nothing answers it, nothing in the cycle depends on it
        self.methods[rpc_id(msg, path)] = method
        if method == "tools/call":
            call = call_from_mcp(msg, path)
            self.names[call.id] = call.name
            if self.results:
                self._flush()
            self.calls.append(call)
        elif method != "tools/list" and method not in HANDSHAKE:
            self.w.add("message_ignored", path, f"{method} is not part of the tool cycle")

    def _response(self, path: str, msg: dict[str, Any]) -> None:
        if msg.get("id") is None and "error" in msg:
            self.w.add(
                "message_ignored", path, "a JSON-RPC error with a null id pairs with no request"
            )
            return
        msg_id = rpc_id(msg, path)
        result = msg.get("result")
        method = self.methods.get(msg_id) or _guess_method(msg)
        if method == "tools/list":
            if "error" in msg:
                self.w.add("message_ignored", path, "tools/list failed; no tools declared")
                return
            result_path = f"{path}.result"
            expect(PROTOCOL, result, result_path, dict)
            for tool in _tools(result, result_path):
                self.tools[tool.name] = tool
        elif method == "tools/call":
            name = self.names.get(msg_id)
            if "error" in msg:
                self.results.append(error_from_mcp(msg_id, name, msg["error"], f"{path}.error"))
            else:
                self.results.append(result_from_mcp(msg_id, name, result, f"{path}.result"))
        elif method is None:
            self.w.add("message_ignored", path, "a response to no known request")

    def _flush(self) -> None:
        if self.calls:
            self.messages.append(Message(role="assistant", parts=list(self.calls)))
        if self.results:
            self.messages.append(Message(role="tool", parts=list(self.results)))
        self.calls, self.results = [], []


def _guess_method(msg: dict[str, Any]) -> str | None:
    """The method a response answers when its request is not in the payload."""
    result = msg.get("result")
    if isinstance(result, dict) and "tools" in result:
        return "tools/list"
    if "error" in msg or (isinstance(result, dict) and "content" in result):
        return "tools/call"
    if isinstance(result, dict) and ("protocolVersion" in result or "supportedVersions" in result):
        return "initialize"
    return None


def _tools(result: dict[str, Any], path: str) -> list[Tool]:
    tools = require(PROTOCOL, result, "tools", path, list)
    return [tool_from_mcp(t, f"{path}.tools[{i}]") for i, t in enumerate(tools)]


def _calls(messages: list[tuple[str, dict[str, Any]]]) -> list[ToolCall]:
    calls = []
    for path, msg in messages:
        if msg.get("method") != "tools/call":
            raise CodecError(PROTOCOL, f"{path}.method", "expected a tools/call request")
        calls.append(call_from_mcp(msg, path))
    return calls


def _model_response(calls: list[ToolCall], w: Warnings) -> Converted[ModelResponse]:
    message = Message(role="assistant", parts=list(calls))
    return w.wrap(ModelResponse(message=message, stop_reason="tool_use" if calls else None))


# --- detection ------------------------------------------------------------------------------


def _is_rpc(msg: Any) -> bool:
    return isinstance(msg, dict) and msg.get("jsonrpc") == "2.0"


def _is_call(msg: Any) -> bool:
    return _is_rpc(msg) and msg.get("method") == "tools/call" and "id" in msg


def _is_tools_result(obj: Any) -> bool:
    tools = obj.get("tools") if isinstance(obj, dict) else None
    return (
        isinstance(tools, list)
        and bool(tools)
        and all(isinstance(t, dict) and "name" in t and "inputSchema" in t for t in tools)
    )


def _detect_message(msg: dict[str, Any]) -> Kind:
    method = msg.get("method")
    if method == "tools/list" or _is_tools_result(msg.get("result")):
        return "tools_list"
    if method == "tools/call":
        return "tools_call"
    result = msg.get("result")
    if "error" in msg or (isinstance(result, dict) and "content" in result):
        return "call_result"
    return "transcript"


# --- the codec ------------------------------------------------------------------------------


class McpCodec:
    """MCP over JSON-RPC 2.0; see the module docstring for how the interface maps."""

    name = PROTOCOL
    title = "MCP (JSON-RPC)"

    def encode_request(self, conv: Conversation) -> Converted[list[dict[str, Any]]]:
        """The conversation as a transcript: tools/list, then every call and its response."""
        w = Warnings(PROTOCOL)
        if conv.system:
            w.add("system_dropped", "system", "MCP carries no system prompt")
        if conv.tool_choice is not None:
            w.add(
                "tool_choice_dropped",
                "tool_choice",
                f"MCP has no tool choice ({conv.tool_choice.mode}): the client decides which "
                "tools to call",
            )
        for setting in ("model", "max_tokens", "temperature"):
            if getattr(conv, setting) is not None:
                w.add("model_settings_dropped", setting, "MCP does not talk to a model")
        warn_foreign(w, conv.provider_details, "provider_details")
        tools = [tool_to_mcp(t, w, f"tools[{i}]") for i, t in enumerate(conv.tools)]
        out = [
            _entry(CLIENT, {"jsonrpc": "2.0", "id": LIST_ID, "method": "tools/list", "params": {}}),
            _entry(SERVER, {"jsonrpc": "2.0", "id": LIST_ID, "result": {"tools": tools}}),
        ]
        for i, message in enumerate(conv.messages):
            warn_foreign(w, message.provider_details, f"messages[{i}]")
            for j, part in enumerate(message.parts):
                path = f"messages[{i}].parts[{j}]"
                match part:
                    case ToolCall():
                        out.append(_entry(CLIENT, call_to_mcp(part, w, path)))
                    case ToolResult():
                        out.append(_entry(SERVER, response_to_mcp(part, w, path)))
                    case Text() if message.role == "system":
                        w.add("system_dropped", path, "MCP carries no system prompt")
                    case Text():
                        w.add("text_dropped", path, f"MCP carries no {message.role} text")
                    case Thinking():
                        w.add("thinking_dropped", path, "MCP carries no model reasoning")
                    case Image():
                        w.add("image_dropped", path, "MCP carries images only in tool results")
                    case _:
                        assert_never(part)
        return w.wrap(out)

    def decode_request(self, payload: Any) -> Converted[Conversation]:
        """A transcript, a tools/list message or result, a tools/call or a call result."""
        w = Warnings(PROTOCOL)
        if isinstance(payload, dict) and "jsonrpc" not in payload and "tools" in payload:
            return w.wrap(Conversation(tools=_tools(payload, "$")))
        replay = _Transcript(w)
        for path, msg in _messages(payload):
            replay.feed(path, msg)
        return w.wrap(replay.conversation())

    def encode_response(self, resp: ModelResponse) -> Converted[list[dict[str, Any]]]:
        """The ``tools/call`` requests for the calls of one model turn."""
        w = Warnings(PROTOCOL)
        warn_foreign(w, resp.provider_details, "provider_details")
        warn_foreign(w, resp.message.provider_details, "message")
        out = []
        for j, part in enumerate(resp.message.parts):
            path = f"message.parts[{j}]"
            match part:
                case ToolCall():
                    out.append(call_to_mcp(part, w, path))
                case Text():
                    w.add("text_dropped", path, "MCP carries no assistant text")
                case Thinking():
                    w.add("thinking_dropped", path, "MCP carries no model reasoning")
                case Image():
                    w.add("image_dropped", path, "MCP carries images only in tool results")
                case ToolResult():
                    w.add("tool_result_dropped", path, "a model turn holds no tool results")
                case _:
                    assert_never(part)
        return w.wrap(out)

    def decode_response(self, payload: Any) -> Converted[ModelResponse]:
        """An array of ``tools/call`` requests, or one."""
        return _model_response(_calls(_messages(payload)), Warnings(PROTOCOL))

    def encode_stream(self, resp: ModelResponse) -> Converted[list[dict[str, Any]]]:
        """The requests of ``encode_response`` as streamable-HTTP SSE ``message`` events."""
        requests = self.encode_response(resp)
        events = [{"event": "message", "data": msg} for msg in requests.value]
        return Converted(events, requests.warnings)

    def decode_stream(self, events: list[Any]) -> Converted[ModelResponse]:
        """SSE ``message`` events carrying ``tools/call`` requests (``data`` parsed or text)."""
        w = Warnings(PROTOCOL)
        expect(PROTOCOL, events, "$", list)
        messages = []
        for i, event in enumerate(events):
            path = f"$[{i}]"
            expect(PROTOCOL, event, path, dict)
            if event.get("event", "message") != "message":
                w.add("message_ignored", f"{path}.event", f"SSE event {event['event']!r}")
                continue
            data = require(PROTOCOL, event, "data", path, (dict, str))
            if isinstance(data, str):
                try:
                    data = json.loads(data)
                except json.JSONDecodeError as exc:
                    raise CodecError(PROTOCOL, f"{path}.data", f"not JSON: {exc.msg}") from None
            messages.append((f"{path}.data", _message(data, f"{path}.data")))
        return _model_response(_calls(messages), w)

    def detect(self, payload: Any) -> Kind | None:
        """Only JSON-RPC 2.0 shapes, the transcript wrapper and a bare MCP tools result."""
        if isinstance(payload, dict):
            if _is_rpc(payload):
                return _detect_message(payload)
            if "jsonrpc" not in payload and _is_tools_result(payload):
                return "tools_list"
            return None
        if not isinstance(payload, list) or not payload:
            return None
        if all(
            isinstance(e, dict) and set(e) <= {"dir", "msg"} and _is_rpc(e.get("msg"))
            for e in payload
        ):
            return "transcript"
        if all(
            isinstance(e, dict)
            and e.get("event", "message") == "message"
            and _is_rpc(e.get("data"))
            for e in payload
        ):
            return "stream"
        if all(_is_call(m) for m in payload):
            return "response"
        if all(_is_rpc(m) for m in payload):
            return "transcript"
        return None


CODEC = McpCodec()
