"""Sample tool sets with mock handlers, ready to load into a session.

Each module declares its tools as a :class:`~flowdebug.engine.execution.handlers.Toolset` of
python-handled
entries: ``weather`` (Tokyo never answers in time), ``tasks`` (a task API whose store lives in
the session state), ``files`` (a read-only fake file tree) and ``shell`` (canned command
output, annotated destructive). Each is registered under its name in the entry-point group
``flowdebug.toolsets`` (``pyproject.toml``), which is how flowdebug finds them: the library
never imports this package.
"""

from __future__ import annotations

from flowdebug.engine.execution.handlers import Toolset
from flowdebug.errors import UsageError
from sample_tools import files, shell, tasks, weather

TOOLSETS: dict[str, Toolset] = {
    "weather": weather.TOOLSET,
    "tasks": tasks.TOOLSET,
    "files": files.TOOLSET,
    "shell": shell.TOOLSET,
}


def toolset(*names: str) -> Toolset:
    """The named sample tool sets joined into one, e.g. ``toolset("weather", "tasks")``."""
    joined = Toolset()
    for name in names:
        if name not in TOOLSETS:
            raise UsageError(
                f"unknown sample tool set {name!r}; choose from: {', '.join(TOOLSETS)}"
            )
        joined += TOOLSETS[name]
    return joined
