"""A read-only file reader over a fake in-memory tree; paths with ``..`` are refused."""

from __future__ import annotations

import posixpath
from typing import Any

from flowdebug.engine.execution.handlers import Toolset
from flowdebug.engine.execution.python_tools import python_tool

TREE = {
    "/README.md": "# Demo project\n\nA tiny project for the file tools.\n",
    "/notes/todo.txt": "- buy milk\n- call Alice\n",
    "/notes/ideas.md": "# Ideas\n\n- a weather bot\n",
    "/src/app.py": 'print("hello")\n',
}
PATH = {"type": "string", "description": "Absolute path in the project, e.g. /notes/todo.txt"}
READ_ONLY = {"readOnlyHint": True}


def _normalize(path: str) -> str:
    if ".." in path.split("/"):
        raise PermissionError(f"path traversal refused: {path!r}")
    return posixpath.normpath("/" + path.lstrip("/"))


def _children(directory: str) -> list[str]:
    prefix = directory.rstrip("/") + "/"
    names = set()
    for path in TREE:
        if path.startswith(prefix):
            head, slash, _ = path[len(prefix) :].partition("/")
            names.add(head + slash)
    return sorted(names)


def read_file(args: dict[str, Any]) -> str:
    """Read a text file from the project."""
    path = _normalize(args["path"])
    if path not in TREE:
        hint = " (it is a directory: use list_dir)" if _children(path) else ""
        raise FileNotFoundError(f"no such file: {path}{hint}")
    return TREE[path]


def list_dir(args: dict[str, Any]) -> list[str]:
    """List a directory of the project; sub-directories end with a slash."""
    path = _normalize(args.get("path", "/"))
    names = _children(path)
    if not names:
        raise FileNotFoundError(f"no such directory: {path}")
    return names


TOOLSET = Toolset(
    entries=[
        python_tool(
            read_file,
            {"type": "object", "properties": {"path": PATH}, "required": ["path"]},
            annotations=READ_ONLY,
        ),
        python_tool(
            list_dir,
            {"type": "object", "properties": {"path": {**PATH, "default": "/"}}},
            annotations=READ_ONLY,
        ),
    ]
)
