"""A mocked shell: canned output for a few commands, anything else refused. Annotated
destructive, so every call waits for a person's approval."""

from __future__ import annotations

from typing import Any

from flowdebug.engine.execution.handlers import Toolset
from flowdebug.engine.execution.python_tools import python_tool

OUTPUTS = {
    "ls": "README.md\nnotes\nsrc\n",
    "pwd": "/home/demo\n",
    "whoami": "demo\n",
    "date": "Tue Mar  3 09:00:00 UTC 2026\n",
    "echo hello": "hello\n",
    "git status": "On branch main\nnothing to commit, working tree clean\n",
}
PARAMETERS = {
    "type": "object",
    "properties": {"command": {"type": "string", "description": "The command line to run"}},
    "required": ["command"],
}


def run_command(args: dict[str, Any]) -> dict[str, Any]:
    """Run a shell command and return its exit code and output."""
    command = " ".join(args["command"].split())
    if command not in OUTPUTS:
        raise PermissionError(
            f"command not allowed: {command!r}; this shell runs only: {', '.join(OUTPUTS)}"
        )
    return {"exit_code": 0, "stdout": OUTPUTS[command], "stderr": ""}


TOOLSET = Toolset(
    entries=[python_tool(run_command, PARAMETERS, annotations={"destructiveHint": True})]
)
