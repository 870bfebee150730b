"""MCP tasks (spec 2025-11-25, "tasks" utility) around a tool call.

A client may augment ``tools/call`` with ``params.task`` (``{"ttl": ms}``). The server then
answers that request at once with a ``CreateTaskResult`` ``{"task": {"taskId", "status",
...}}``; the ``CallToolResult`` (or the JSON-RPC error the call would have given) is the
answer to a later ``tasks/result`` request ``{"params": {"taskId"}}`` with its own JSON-RPC
id, and carries ``_meta["io.modelcontextprotocol/related-task"] = {"taskId"}``. ``tasks/get``,
``tasks/list``, ``tasks/cancel`` and ``notifications/tasks/status`` report the task's status
and have no canonical home.

Canonically the result belongs to the originating call. What is needed to write the exchange
back rides in the result's ``provider_details["mcp"]["task"]``: ``created`` (the
``CreateTaskResult``) and ``request`` (the ``tasks/result`` request, id and params).
``params.task`` stays on the call (its ``provider_details["mcp"]``, like any extra param).
"""

from __future__ import annotations

from typing import Any

from flowdebug.model import ToolResult

RELATED_TASK = "io.modelcontextprotocol/related-task"
TASK_KEY = "task"  # in a result's provider_details["mcp"]; CallToolResult has no such field
# Task bookkeeping requests: they report on a task and carry no call or result.
TASK_BOOKKEEPING = frozenset({"tasks/get", "tasks/list", "tasks/cancel"})
TERMINAL = frozenset({"completed", "failed", "cancelled"})
CLIENT, SERVER = "client->server", "server->client"


def is_create_task_result(result: Any) -> bool:
    """A ``CreateTaskResult``: a ``task`` object with a ``taskId`` and no content."""
    task = result.get("task") if isinstance(result, dict) else None
    return isinstance(task, dict) and "taskId" in task and "content" not in result


def related_task(result: Any) -> str | None:
    """The ``taskId`` a result's ``_meta`` relates it to, if any."""
    meta = result.get("_meta") if isinstance(result, dict) else None
    related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
    task_id = related.get("taskId") if isinstance(related, dict) else None
    return task_id if isinstance(task_id, str) else None


def with_task(result: ToolResult, created: Any, request: dict[str, Any] | None) -> ToolResult:
    """``result`` keeping the task exchange it came through, for :func:`task_messages`."""
    task: dict[str, Any] = {"created": created}
    if request is not None:
        task["request"] = {k: v for k, v in request.items() if k in ("id", "params")}
    details = dict(result.provider_details or {})
    mine = details.get("mcp")
    details["mcp"] = {**(mine if isinstance(mine, dict) else {}), TASK_KEY: task}
    return result.model_copy(update={"provider_details": details})


def task_of(result: ToolResult) -> dict[str, Any] | None:
    """The task exchange a result came through (see :func:`with_task`), if any."""
    mine = (result.provider_details or {}).get("mcp")
    task = mine.get(TASK_KEY) if isinstance(mine, dict) else None
    return task if isinstance(task, dict) and isinstance(task.get("created"), dict) else None


def task_messages(
    result: ToolResult, call_id: str, response: dict[str, Any]
) -> list[tuple[str, dict[str, Any]]]:
    """The wire messages that deliver ``response`` (the JSON-RPC answer built for call
    ``call_id``): itself, or, for a result that came through a task, the ``CreateTaskResult``
    answering the call, the ``tasks/result`` request and ``response`` answering that."""
    task = task_of(result)
    if task is None:
        return [(SERVER, response)]
    created = task["created"]
    request = task.get("request")
    if not isinstance(request, dict):
        task_id = created["task"].get("taskId")
        request = {"id": f"{call_id}-result", "params": {"taskId": task_id}}
    answer = {**response, "id": request.get("id")}
    return [
        (SERVER, {"jsonrpc": "2.0", "id": call_id, "result": created}),
        (
            CLIENT,
            {
                "jsonrpc": "2.0",
                "id": request.get("id"),
                "method": "tasks/result",
                "params": request.get("params", {}),
            },
        ),
        (SERVER, answer),
    ]
