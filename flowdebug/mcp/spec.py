"""Where an MCP server is: a command line (stdio) or a URL (streamable HTTP).

Plain data, so a session that executes tools through a server can be saved and reloaded; the
connection itself lives in :mod:`flowdebug.mcp.client`.
"""

from __future__ import annotations

import shlex
import sys
from typing import Annotated

from pydantic import Field, model_validator

from flowdebug.hosting import mcp_refusal
from flowdebug.model import _Model

# A stdio command whose program is one of these runs with the interpreter running flowdebug,
# so a server from this project (or the venv) sees the same installed packages.
PYTHON_NAMES = frozenset({"python", "python3"})


class McpServerSpec(_Model):
    """An MCP server: ``stdio`` (the command line that starts it) or ``url`` (its streamable
    HTTP endpoint), exactly one. ``env`` adds variables to the server's environment (the SDK
    passes only a safe minimum such as PATH and HOME); ``cwd`` is its working directory.

    On a shared server a stdio spec, or a URL the host did not allow, cannot be made:
    validation raises :class:`~flowdebug.hosting.Refused` (see :mod:`flowdebug.hosting`)."""

    stdio: Annotated[list[str], Field(min_length=1)] | None = None
    url: Annotated[str, Field(pattern=r"^https?://")] | None = None
    env: dict[str, str] | None = None
    cwd: str | None = None

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSpec:
        if (self.stdio is None) == (self.url is None):
            raise ValueError("give exactly one of stdio (a command line) or url")
        if self.url is not None and (self.env or self.cwd):
            raise ValueError("env and cwd apply only to a stdio server")
        refused = mcp_refusal(self.stdio, self.url, self.label)
        if refused is not None:
            raise refused
        return self

    @classmethod
    def parse(cls, stdio: str | None = None, url: str | None = None) -> McpServerSpec:
        """From the command line's ``--stdio "CMD ARGS"`` (shell-split) or ``--url URL``."""
        return cls(stdio=shlex.split(stdio) if stdio is not None else None, url=url)

    @property
    def command(self) -> list[str]:
        """The stdio command line to run (``python`` resolved to the current interpreter)."""
        if not self.stdio:
            return []
        program, *args = self.stdio
        return [sys.executable if program in PYTHON_NAMES else program, *args]

    @property
    def label(self) -> str:
        """How the UI and messages name the server."""
        if self.url is not None:
            return self.url
        return "stdio: " + shlex.join(self.stdio or [])

    @property
    def key(self) -> str:
        """Equal for specs that reach the same server (clients are shared by key)."""
        return self.model_dump_json(exclude_none=True)
