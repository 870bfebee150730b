"""Scenarios: a tool set, a user turn and the scripted model's turns, in one JSON file.

The sample scenarios live in ``sample_tools/scenarios/``; any other file with the same shape
loads by path. A scenario names registered tool sets (``toolsets``, see
:mod:`flowdebug.engine.execution.toolsets`) and/or declares tools with
declarative handlers inline (``tools``), and/or takes the tools of an MCP server (``mcp``:
``{"stdio": [...]}`` or ``{"url": ...}``), listed with ``tools/list`` and called with
``tools/call``.

On a shared server (:mod:`flowdebug.hosting`) a scenario whose tools would run code or
commands there (a code handler, a python handler of no registered tool set, an MCP server
over stdio) does not load: :class:`~flowdebug.hosting.Refused` says why.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from flowdebug import hosting
from flowdebug.engine.execution.faults import Fault, parse_fault
from flowdebug.engine.execution.handlers import ToolEntry, Toolset
from flowdebug.engine.execution.mcp_tools import toolset_from_mcp
from flowdebug.engine.execution.runtime import Policy
from flowdebug.errors import CodecError, UsageError, json_path
from flowdebug.hosting import Refused
from flowdebug.mcp.spec import McpServerSpec
from flowdebug.model import Conversation, Message, Text, ToolChoice
from flowdebug.players.scripted import ScriptedPlayer, ScriptedTurn

SAMPLES = Path(__file__).resolve().parents[3] / "sample_tools" / "scenarios"


class Scenario(BaseModel):
    """Everything needed to replay one tool-calling conversation offline."""

    model_config = ConfigDict(extra="forbid")

    name: str
    title: str
    description: str = ""
    system: str | None = None
    toolsets: list[str] = Field(default_factory=list)
    tools: list[ToolEntry] = Field(default_factory=list)
    mcp: McpServerSpec | None = None
    tool_choice: ToolChoice | None = None
    user: str
    turns: list[ScriptedTurn]
    repeat_last: bool = False
    policy: Policy = Field(default_factory=Policy)
    faults: list[str] = Field(default_factory=list)
    expect: str = Field("", description="What a person should see happen, for the UI")

    def toolset(self) -> Toolset:
        joined = Toolset.registered(*self.toolsets) + Toolset(entries=self.tools)
        if self.mcp is not None:
            joined += toolset_from_mcp(self.mcp)
        return joined

    def player(self) -> ScriptedPlayer:
        return ScriptedPlayer(self.turns, repeat_last=self.repeat_last)

    def fault_list(self) -> list[Fault]:
        return [parse_fault(spec) for spec in self.faults]

    def conversation(self) -> Conversation:
        """The conversation before the first model turn: system, tools, the user's message."""
        return Conversation(
            system=self.system,
            tools=self.toolset().tools,
            tool_choice=self.tool_choice,
            messages=[Message(role="user", parts=[Text(text=self.user)])],
        )


def _from_file(path: Path) -> Scenario:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise CodecError(
            "scenario", "$", f"{path.name} is not valid JSON: {e.msg} at line {e.lineno}"
        ) from None
    try:
        return Scenario.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        where = json_path(err["loc"])
        raise CodecError("scenario", where, f"{path.name}: {err['msg']}") from None


def names() -> list[str]:
    """The sample scenarios' names, in display order (weather first); on a shared server only
    those it may run (not the MCP one, whose server starts over stdio)."""
    return list(_names(hosting.shared()))


@cache
def _names(shared: bool) -> tuple[str, ...]:
    found = sorted(p.stem for p in SAMPLES.glob("*.json"))
    if shared:
        found = [n for n in found if _allowed(SAMPLES / f"{n}.json")]
    return tuple(sorted(found, key=lambda n: (n != "weather", n)))


def _allowed(path: Path) -> bool:
    try:
        _from_file(path)
    except Refused:
        return False
    return True


def load(name_or_path: str) -> Scenario:
    """A sample scenario by name, or any scenario file by path."""
    path = Path(name_or_path)
    if path.suffix == ".json" and path.exists():
        return _from_file(path)
    sample = SAMPLES / f"{name_or_path}.json"
    if not sample.exists():
        raise UsageError(
            f"no scenario {name_or_path!r}; samples: {', '.join(names())} "
            "(or give a path to a scenario .json file)"
        )
    return _from_file(sample)


@cache
def title(name: str) -> str:
    """A sample scenario's title, read once: the Debugger's scenario list shows every title on
    every run, and the samples do not change while the server runs."""
    return load(name).title


def all_scenarios() -> list[Scenario]:
    return [load(n) for n in names()]
