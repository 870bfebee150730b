"""MCP ``tools/call`` requests <-> canonical calls, and JSON-RPC messages read in wire order into
a canonical conversation (what decoding a transcript regroups is warned before it happens).

Calls and results pair by the ``tools/call`` JSON-RPC id. A task-augmented call (MCP
2025-11-25 "tasks" utility: ``params.task``) is answered at once with a ``CreateTaskResult``
(``{"task": {"taskId", "status", ...}}``) and its ``CallToolResult`` comes later, as the answer
to a ``tasks/result`` request with another JSON-RPC id. The replay links the two by ``taskId``
(from the ``tasks/result`` params, or the result's ``_meta``
``io.modelcontextprotocol/related-task``) so the result pairs with the ORIGINATING call, and
keeps the task exchange in the result's ``provider_details["mcp"]["task"]`` so that encoding
writes it back (see :mod:`flowdebug.protocols.mcp.tasks`).
"""

from __future__ import annotations

from typing import Any

from flowdebug.errors import CodecError
from flowdebug.model import Conversation, Message, Tool, ToolCall, ToolResult
from flowdebug.protocols.base import Warnings, expect, require
from flowdebug.protocols.mcp.parts import (
    PROTOCOL,
    extra_details,
    optional,
    own_details,
    rpc_id,
    safe_rpc_id,
    safe_tool_name,
    warn_foreign,
    without_keys,
)
from flowdebug.protocols.mcp.response import error_from_mcp, result_from_mcp
from flowdebug.protocols.mcp.tasks import (
    TASK_BOOKKEEPING,
    TERMINAL,
    is_create_task_result,
    related_task,
    with_task,
)
from flowdebug.protocols.mcp.tools import tool_from_mcp

CLIENT, SERVER = "client->server", "server->client"
# Methods outside the tool cycle that every session has; skipped without a warning.
HANDSHAKE = frozenset({"initialize", "server/discover", "ping"})


def rpc_message(msg: Any, path: str) -> dict[str, Any]:
    """``msg`` checked to be a JSON-RPC 2.0 request, notification or response."""
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


def messages(payload: Any, path: str = "$") -> list[tuple[str, dict[str, Any]]]:
    """(path, message) pairs of a transcript, a bare message array or one message."""
    if isinstance(payload, dict):
        return [(path, rpc_message(payload, path))]
    expect(PROTOCOL, payload, path, (list, dict))
    out = []
    for i, item in enumerate(payload):
        where = f"{path}[{i}]"
        if isinstance(item, dict) and "msg" in item:
            if item.get("dir", CLIENT) not in (CLIENT, SERVER):
                raise CodecError(PROTOCOL, f"{where}.dir", f'expected "{CLIENT}" or "{SERVER}"')
            where += ".msg"
            item = item["msg"]
        out.append((where, rpc_message(item, where)))
    return out


def tools_of(result: dict[str, Any], path: str) -> list[Tool]:
    tools = require(PROTOCOL, result, "tools", path, list)
    return [tool_from_mcp(t, f"{path}.tools[{i}]") for i, t in enumerate(tools)]


class Transcript:
    """Replays JSON-RPC messages in wire order into tools and grouped messages.

    A run of ``tools/call`` requests becomes one assistant message and the responses that
    follow one tool message, as a client running parallel calls concurrently sends them.
    """

    def __init__(self, w: Warnings):
        self.w = w
        self.tools: dict[str, Tool] = {}
        self.methods: dict[str, str] = {}
        self.names: dict[str, str] = {}
        self.messages: list[Message] = []
        self.calls: list[ToolCall] = []
        self.results: list[ToolResult] = []
        self.task_calls: dict[str, str] = {}  # taskId -> the originating call id
        self.task_created: dict[str, Any] = {}  # taskId -> its CreateTaskResult
        self.task_requests: dict[str, dict[str, Any]] = {}  # tasks/result id -> the request
        self.task_status: dict[str, str] = {}  # taskId -> the last status seen
        self.answered: set[str] = set()

    def feed(self, path: str, msg: dict[str, Any]) -> None:
        if "method" in msg:
            self._request(path, msg)
        else:
            self._response(path, msg)

    def conversation(self) -> Conversation:
        self._flush()
        for task_id, call_id in self.task_calls.items():
            if call_id not in self.answered and call_id in self.names:
                status = self.task_status.get(task_id, "working")
                self.w.add(
                    "task_without_result",
                    "$",
                    f"call {call_id} became task {task_id} (last status {status}); no "
                    "tasks/result answer is in the payload, so the call has no result",
                )
        return Conversation(tools=list(self.tools.values()), messages=self.messages)

    def _request(self, path: str, msg: dict[str, Any]) -> None:
        method = require(PROTOCOL, msg, "method", path, str)
        if "id" not in msg and method not in ("tools/call", "tools/list"):
            params = msg.get("params")
            if method == "notifications/tasks/status" and isinstance(params, dict):
                self._status(params)
            return  # a notification: nothing answers it, nothing in the cycle depends on it
        msg_id = rpc_id(msg, path)
        self.methods[msg_id] = method
        if method == "tools/call":
            call = call_from_mcp(msg, path)
            self.names[call.id] = call.name
            if self.results:
                self._flush()
            self.calls.append(call)
        elif method == "tasks/result":
            params = require(PROTOCOL, msg, "params", path, dict)
            require(PROTOCOL, params, "taskId", f"{path}.params", str)
            self.task_requests[msg_id] = msg
        elif method not in TASK_BOOKKEEPING and method != "tools/list" and method not in HANDSHAKE:
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
            for tool in tools_of(expect(PROTOCOL, result, result_path, dict), result_path):
                self.tools[tool.name] = tool
        elif method == "tools/call" and is_create_task_result(result):
            created = expect(PROTOCOL, result, f"{path}.result", dict)
            self._created(msg_id, created, f"{path}.result")
        elif method in ("tools/call", "tasks/result"):
            self._result(path, msg_id, msg)
        elif method in TASK_BOOKKEEPING:
            if isinstance(result, dict) and isinstance(result.get("taskId"), str):
                self._status(result)  # tasks/get and tasks/cancel answer with the Task
        elif method is None:
            self.w.add("message_ignored", path, "a response to no known request")

    def _created(self, call_id: str, result: dict[str, Any], path: str) -> None:
        task = require(PROTOCOL, result, "task", path, dict)
        task_id = require(PROTOCOL, task, "taskId", f"{path}.task", str)
        self.task_calls[task_id] = call_id
        self.task_created[task_id] = result
        self._status(task)
        if call_id not in self.names:
            self.w.add(
                "task_pending",
                path,
                f"a CreateTaskResult: task {task_id} runs; its CallToolResult comes as the "
                "answer to a tasks/result request",
            )

    def _result(self, path: str, msg_id: str, msg: dict[str, Any]) -> None:
        request = self.task_requests.get(msg_id)
        task_id = (
            request["params"]["taskId"] if request is not None else related_task(msg.get("result"))
        )
        # MCP tasks: the payload answers tasks/result, but belongs to the call that made the
        # task (linked by taskId); without that call in the payload, the JSON-RPC id stands.
        call_id = self.task_calls.get(task_id, msg_id) if task_id is not None else msg_id
        name = self.names.get(call_id)
        if "error" in msg:
            result = error_from_mcp(call_id, name, msg["error"], f"{path}.error")
        else:
            result = result_from_mcp(call_id, name, msg.get("result"), f"{path}.result")
        if task_id is not None and task_id in self.task_calls:
            result = with_task(result, self.task_created[task_id], request)
        self.answered.add(call_id)
        self.results.append(result)

    def _status(self, task: dict[str, Any]) -> None:
        task_id, status = task.get("taskId"), task.get("status")
        if not isinstance(task_id, str) or not isinstance(status, str):
            return
        if self.task_status.get(task_id) not in TERMINAL:  # terminal states never change
            self.task_status[task_id] = status

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
    if is_create_task_result(result):
        return "tools/call"  # tools/call is the one server request tasks augment
    if "error" in msg or (isinstance(result, dict) and "content" in result):
        return "tools/call"
    if isinstance(result, dict) and ("protocolVersion" in result or "supportedVersions" in result):
        return "initialize"
    if isinstance(result, dict) and ("tasks" in result or "taskId" in result):
        return "tasks/get"
    return None


_PARAM_KEYS = frozenset({"name", "arguments"})


def call_to_mcp(call: ToolCall, w: Warnings | None = None, path: str = "call") -> dict[str, Any]:
    """A canonical call as a ``tools/call`` JSON-RPC request whose id is the call id."""
    w = w if w is not None else Warnings(PROTOCOL)
    warn_foreign(w, call.provider_details, path)
    if call.raw_arguments is not None:
        w.add(
            "raw_arguments_dropped",
            path,
            "MCP arguments are an object; the unparsed "
            f"arguments {call.raw_arguments!r} are not sent",
        )
    params = {
        **without_keys(own_details(call.provider_details), _PARAM_KEYS),
        "name": safe_tool_name(w, call.name, f"{path}.name"),
        "arguments": call.arguments,
    }
    return {
        "jsonrpc": "2.0",
        "id": safe_rpc_id(w, call.id, f"{path}.id"),
        "method": "tools/call",
        "params": params,
    }


def call_from_mcp(msg: Any, path: str = "$") -> ToolCall:
    """A ``tools/call`` JSON-RPC request as a canonical call (id: the JSON-RPC id as text)."""
    expect(PROTOCOL, msg, path, dict)
    params = require(PROTOCOL, msg, "params", path, dict)
    return ToolCall(
        id=rpc_id(msg, path),
        name=require(PROTOCOL, params, "name", f"{path}.params", str),
        arguments=optional(params, "arguments", f"{path}.params", dict) or {},
        provider_details=extra_details(params, _PARAM_KEYS),
    )


Slot = tuple[int, int]  # (message index, part index) in the conversation being encoded


def regroup(carried: list[tuple[str, Slot]]) -> list[tuple[str, list[Slot]]]:
    """The messages (role, parts) decoding gives for ``carried`` ("call"/"result", slot)."""
    out: list[tuple[str, list[Slot]]] = []
    calls: list[Slot] = []
    results: list[Slot] = []
    for what, slot in carried:
        if what == "call":
            if results:
                out += _flush(calls, results)
                calls, results = [], []
            calls.append(slot)
        else:
            results.append(slot)
    return out + _flush(calls, results)


def _flush(calls: list[Slot], results: list[Slot]) -> list[tuple[str, list[Slot]]]:
    return [("assistant", calls)] * bool(calls) + [("tool", results)] * bool(results)


def warn_regrouped(conv: Conversation, carried: list[tuple[str, Slot]], w: Warnings) -> None:
    """``messages_regrouped`` for what decoding will not give back in place: the whole
    ``messages`` list when the number of messages changes (everything after the first change
    moves), else each message whose role or parts change."""
    back = regroup(carried)
    n = len(conv.messages)
    broken = [i for i, m in enumerate(conv.messages) if not _intact(i, len(m.parts), m.role, back)]
    if not broken and len(back) == n:
        return
    if len(back) != n:
        kept = {i for _, (i, _) in carried}
        empty = [i for i in broken if i not in kept]
        named = ", ".join(f"messages[{i}] ({conv.messages[i].role})" for i in empty[:4])
        more = f" and {len(empty) - 4} more" if len(empty) > 4 else ""
        w.add(
            "messages_regrouped",
            "messages",
            f"MCP rebuilds the history from tool calls and results: {n} messages read back as "
            f"{len(back)}" + (f"; nothing of {named}{more} is carried" if empty else ""),
        )
        return
    for i in broken:
        roles = " and ".join(sorted({back[k][0] for k in _targets(i, back)})) or "nothing"
        w.add(
            "messages_regrouped",
            f"messages[{i}]",
            f"MCP rebuilds the history from tool calls and results: this "
            f"{conv.messages[i].role} message reads back as {roles}",
        )


def _intact(i: int, n_parts: int, role: str, back: list[tuple[str, list[Slot]]]) -> bool:
    # Slots come in emission order, so first, last and count pin the whole list.
    if i >= len(back) or not n_parts:
        return False
    got_role, slots = back[i]
    return (
        got_role == role
        and len(slots) == n_parts
        and slots[0] == (i, 0)
        and slots[-1] == (i, n_parts - 1)
    )


def _targets(i: int, back: list[tuple[str, list[Slot]]]) -> list[int]:
    return [k for k, (_, slots) in enumerate(back) if any(m == i for m, _ in slots)]
