"""A task API. The store lives in the session's state (``ctx.state["tasks"]``), so two
sessions never share tasks and a saved session keeps its own."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from flowdebug.engine.execution.handler_io import ToolContext, ToolError
from flowdebug.engine.execution.handlers import Toolset
from flowdebug.engine.execution.python_tools import python_tool


class CreateTask(BaseModel):
    title: str = Field(description="What needs doing")
    notes: str = Field("", description="Details")


class UpdateTask(BaseModel):
    task_id: str = Field(description="The task's id, e.g. T-1")
    title: str | None = Field(None, description="New title")
    notes: str | None = Field(None, description="New details")


class TaskId(BaseModel):
    task_id: str = Field(description="The task's id, e.g. T-1")


class ListTasks(BaseModel):
    status: Literal["open", "done", "all"] = Field("all", description="Which tasks to list")


def _store(ctx: ToolContext) -> dict[str, Any]:
    return ctx.state.setdefault("tasks", {"next_id": 1, "items": {}})


def _task(ctx: ToolContext, task_id: str) -> dict[str, Any]:
    items = _store(ctx)["items"]
    if task_id not in items:
        existing = ", ".join(items) or "none"
        raise ToolError(f"no task {task_id!r}; existing tasks: {existing}")
    return items[task_id]


def create_task(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Create a task and return it with its id."""
    with ctx.lock:
        store = _store(ctx)
        task_id = f"T-{store['next_id']}"
        store["next_id"] += 1
        task = {
            "id": task_id,
            "title": args["title"],
            "notes": args.get("notes", ""),
            "done": False,
        }
        store["items"][task_id] = task
        return dict(task)


def update_task(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Change a task's title or notes."""
    with ctx.lock:
        task = _task(ctx, args["task_id"])
        task.update({k: args[k] for k in ("title", "notes") if args.get(k) is not None})
        return dict(task)


def complete_task(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Mark a task done."""
    with ctx.lock:
        task = _task(ctx, args["task_id"])
        task["done"] = True
        return dict(task)


def delete_task(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Delete a task for good."""
    with ctx.lock:
        _task(ctx, args["task_id"])
        del _store(ctx)["items"][args["task_id"]]
        return {"deleted": args["task_id"]}


def list_tasks(args: dict[str, Any], ctx: ToolContext) -> list[dict[str, Any]]:
    """List tasks, optionally only open or done ones."""
    status = args.get("status", "all")
    with ctx.lock:
        tasks = list(_store(ctx)["items"].values())
    wanted = {"open": [False], "done": [True], "all": [False, True]}[status]
    return [dict(t) for t in tasks if t["done"] in wanted]


TOOLSET = Toolset(
    entries=[
        python_tool(create_task, CreateTask),
        python_tool(update_task, UpdateTask, annotations={"idempotentHint": True}),
        python_tool(complete_task, TaskId, annotations={"idempotentHint": True}),
        python_tool(delete_task, TaskId, annotations={"destructiveHint": True}),
        python_tool(list_tasks, ListTasks, annotations={"readOnlyHint": True}),
    ]
)
