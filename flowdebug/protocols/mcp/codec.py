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

What MCP cannot carry is warned, at the canonical path of what changes: ``system_dropped``
(the system prompt), ``text_dropped`` (user and assistant text, refusals included),
``thinking_dropped``, ``image_dropped`` (images outside tool results), ``hosted_call_dropped``
and ``hosted_result_dropped`` (vendor-run tools: MCP has none), ``tool_choice_dropped`` (even
``auto``: it does not come back), ``model_settings_dropped`` (model, max_tokens, temperature),
``strict_dropped``, ``raw_arguments_dropped``, ``provider_details_dropped``,
``tool_name_renamed`` and ``call_id_renamed`` (``safe_name``/``safe_call_id``, at every path
they change), ``messages_regrouped`` (the history read back is rebuilt from calls and results:
:mod:`.request`), ``result_name_changed``, ``error_type_dropped``, ``content_flattened``
(one text block reads back as a string), ``refusal_flattened``, ``result_sent_as_protocol_error``
(:mod:`.response`), for a protocol error ``image_in_result_dropped`` and
``structured_content_dropped``, and for a model turn ``stop_reason_dropped``,
``response_id_dropped`` and ``usage_dropped``.

Tasks (2025-11-25): a task-augmented ``tools/call`` is answered with a ``CreateTaskResult`` and
its ``CallToolResult`` arrives as the answer to ``tasks/result``; the result pairs with the
originating call (:mod:`.request`, :mod:`.tasks`) and the exchange is written back.
A ``CreateTaskResult`` alone is a ``call_result`` (warning ``task_pending``); ``tasks/get``,
``tasks/list``, ``tasks/cancel`` and ``notifications/tasks/status`` alone are a ``transcript``
with nothing of the cycle; a call whose task never delivers warns ``task_without_result``.

Fragments (:mod:`.fragment`): a bare ``CallToolResult`` or a bare ``Tool``.

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

from typing import Any, assert_never

from flowdebug import jsontext
from flowdebug.errors import CodecError
from flowdebug.model import (
    Conversation,
    HostedCall,
    HostedResult,
    Image,
    Message,
    ModelResponse,
    Text,
    Thinking,
    ToolCall,
    ToolResult,
)
from flowdebug.protocols.base import Converted, Kind, Warnings, expect, require, safe_call_id
from flowdebug.protocols.mcp.facts import FACTS
from flowdebug.protocols.mcp.fragment import fragment
from flowdebug.protocols.mcp.parts import PROTOCOL
from flowdebug.protocols.mcp.request import (
    CLIENT,
    SERVER,
    Slot,
    Transcript,
    call_from_mcp,
    call_to_mcp,
    messages,
    rpc_message,
    tools_of,
    warn_regrouped,
)
from flowdebug.protocols.mcp.response import (
    check_result,
    error_from_mcp,
    hosted_type,
    response_to_mcp,
    result_from_mcp,
    result_to_mcp,
    warn_response_shape,
)
from flowdebug.protocols.mcp.tasks import is_create_task_result, task_messages
from flowdebug.protocols.mcp.tools import tool_from_mcp, tool_to_mcp

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

# The tools/list exchange is numbered; calls use their (string) canonical ids, never an int.
LIST_ID = 1


def _entry(direction: str, msg: dict[str, Any]) -> dict[str, Any]:
    return {"dir": direction, "msg": msg}


def _calls(msgs: list[tuple[str, dict[str, Any]]]) -> list[ToolCall]:
    calls = []
    for path, msg in msgs:
        if msg.get("method") != "tools/call":
            raise CodecError(PROTOCOL, f"{path}.method", "expected a tools/call request")
        calls.append(call_from_mcp(msg, path))
    return calls


def _model_response(calls: list[ToolCall], w: Warnings) -> Converted[ModelResponse]:
    message = Message(role="assistant", parts=list(calls))
    return w.wrap(ModelResponse(message=message, stop_reason="tool_use" if calls else None))


def _warn_details(w: Warnings, details: Any, path: str, what: str) -> None:
    # Decoding MCP gives conversations and messages no provider_details, not even ours.
    if details:
        w.add(
            "provider_details_dropped",
            path,
            f"{', '.join(sorted(details))} details of the {what} cannot be carried by MCP",
        )


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
        return "tools_call"  # task-augmented (params.task) or not
    result = msg.get("result")
    # A CallToolResult (also as the answer to tasks/result), a JSON-RPC error, or the
    # CreateTaskResult a task-augmented tools/call is answered with.
    if "error" in msg or (isinstance(result, dict) and "content" in result):
        return "call_result"
    if is_create_task_result(result):
        return "call_result"
    # tasks/get, tasks/list, tasks/cancel, notifications/tasks/status, handshake...
    return "transcript"


# --- the codec ------------------------------------------------------------------------------


class McpCodec:
    """MCP over JSON-RPC 2.0; see the module docstring for how the interface maps."""

    name = PROTOCOL
    title = FACTS.title
    facts = FACTS

    def encode_request(self, conv: Conversation) -> Converted[list[dict[str, Any]]]:
        """The conversation as a transcript: tools/list, then every call and its response."""
        w = Warnings(PROTOCOL)
        if conv.system is not None:
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
        _warn_details(w, conv.provider_details, "provider_details", "conversation")
        tools = [tool_to_mcp(t, w, f"tools[{i}]") for i, t in enumerate(conv.tools)]
        for i, tool in enumerate(tools):
            if any(t["name"] == tool["name"] for t in tools[:i]):
                # MCP: a tool name is unique in a server's list; read back, the last one holds it.
                w.add("tool_dropped", f"tools[{i}]", f"a tool named {tool['name']!r} comes before")
                w.add("tool_dropped", "tools", "tools with a name declared twice read back as one")
        out = [
            _entry(CLIENT, {"jsonrpc": "2.0", "id": LIST_ID, "method": "tools/list", "params": {}}),
            _entry(SERVER, {"jsonrpc": "2.0", "id": LIST_ID, "result": {"tools": tools}}),
        ]
        carried: list[tuple[str, Slot]] = []
        names: dict[str, str] = {}  # JSON-RPC id -> tool name, as the decoder will see them
        for i, message in enumerate(conv.messages):
            where = f"messages[{i}].provider_details"
            _warn_details(w, message.provider_details, where, "message")
            for j, part in enumerate(message.parts):
                path = f"messages[{i}].parts[{j}]"
                match part:
                    case ToolCall():
                        request = call_to_mcp(part, w, path)
                        names[request["id"]] = request["params"]["name"]
                        out.append(_entry(CLIENT, request))
                        carried.append(("call", (i, j)))
                    case ToolResult():
                        check_result(part, names, w, path)
                        response = response_to_mcp(part, w, path)
                        if part.provider_details is None:
                            out.append(_entry(SERVER, response))
                        else:
                            call_id = safe_call_id(PROTOCOL, part.call_id)
                            out += [_entry(d, m) for d, m in task_messages(part, call_id, response)]
                        carried.append(("result", (i, j)))
                    case Text() if message.role == "system":
                        w.add("system_dropped", path, "MCP carries no system prompt")
                    case Text():
                        w.add("text_dropped", path, f"MCP carries no {message.role} text")
                    case Thinking():
                        w.add("thinking_dropped", path, "MCP carries no model reasoning")
                    case Image():
                        w.add("image_dropped", path, "MCP carries images only in tool results")
                    case HostedCall():
                        w.add(
                            "hosted_call_dropped",
                            path,
                            f"{hosted_type(part)}: MCP has no vendor-run tools; the call is "
                            "left out",
                        )
                    case HostedResult():
                        w.add(
                            "hosted_result_dropped",
                            path,
                            f"{hosted_type(part)}: MCP has no vendor-run tools; the result "
                            "is left out",
                        )
                    case _:
                        assert_never(part)
        warn_regrouped(conv, carried, w)
        return w.wrap(out)

    def decode_request(self, payload: Any) -> Converted[Conversation]:
        """A transcript, a tools/list message or result, a tools/call or a call result."""
        w = Warnings(PROTOCOL)
        if isinstance(payload, dict) and "jsonrpc" not in payload and "tools" in payload:
            return w.wrap(Conversation(tools=tools_of(payload, "$")))
        replay = Transcript(w)
        for path, msg in messages(payload):
            replay.feed(path, msg)
        return w.wrap(replay.conversation())

    def encode_response(self, resp: ModelResponse) -> Converted[list[dict[str, Any]]]:
        """The ``tools/call`` requests for the calls of one model turn."""
        w = Warnings(PROTOCOL)
        warn_response_shape(resp, w)
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
                case HostedCall():
                    w.add(
                        "hosted_call_dropped",
                        path,
                        f"{hosted_type(part)}: MCP has no vendor-run tools; the call is left out",
                    )
                case HostedResult():
                    w.add(
                        "hosted_result_dropped",
                        path,
                        f"{hosted_type(part)}: MCP has no vendor-run tools; the result is left out",
                    )
                case _:
                    assert_never(part)
        return w.wrap(out)

    def decode_response(self, payload: Any) -> Converted[ModelResponse]:
        """An array of ``tools/call`` requests, or one."""
        return _model_response(_calls(messages(payload)), Warnings(PROTOCOL))

    def encode_stream(self, resp: ModelResponse) -> Converted[list[dict[str, Any]]]:
        """The requests of ``encode_response`` as streamable-HTTP SSE ``message`` events."""
        requests = self.encode_response(resp)
        events = [{"event": "message", "data": msg} for msg in requests.value]
        return Converted(events, requests.warnings)

    def decode_stream(self, events: list[Any]) -> Converted[ModelResponse]:
        """SSE ``message`` events carrying ``tools/call`` requests (``data`` parsed or text)."""
        w = Warnings(PROTOCOL)
        expect(PROTOCOL, events, "$", list)
        msgs = []
        for i, event in enumerate(events):
            path = f"$[{i}]"
            expect(PROTOCOL, event, path, dict)
            if event.get("event", "message") != "message":
                w.add("message_ignored", f"{path}.event", f"SSE event {event['event']!r}")
                continue
            data = require(PROTOCOL, event, "data", path, (dict, str))
            if isinstance(data, str):
                try:
                    data = jsontext.loads(data, PROTOCOL)
                except CodecError as exc:
                    where = f"{path}.data" + exc.path.removeprefix("$")
                    raise CodecError(PROTOCOL, where, exc.reason) from None
            msgs.append((f"{path}.data", rpc_message(data, f"{path}.data")))
        return _model_response(_calls(msgs), w)

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

    def fragment(self, payload: Any) -> tuple[Any, str] | None:
        """A bare ``CallToolResult`` or a bare ``Tool`` (see :mod:`.fragment`)."""
        return fragment(payload)


CODEC = McpCodec()
