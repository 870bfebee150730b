"""A session of your own, from scratch: a system prompt, a user message, tools typed, pasted
in any vendor's format or listed from an MCP server (a command over stdio or a URL, where the
host allows it: :mod:`flowdebug.hosting`), the tool choice, parallel calls and a round cap
(issue 30 item 1).

Streamlit-free: the Sessions page gathers a :class:`NewSession` and :func:`build` makes the
debugger session, played by default by the offline model that reads the request
(:func:`flowdebug.engine.session.player_choice.default_player`). :func:`session_name` names it from
its
first user message.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import ValidationError

from flowdebug.engine.execution.handlers import Toolset
from flowdebug.engine.execution.mcp_tools import list_server_tools, toolset_from_mcp
from flowdebug.engine.execution.runtime import Policy
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.player_choice import PlayerChoice, default_kind, make_player
from flowdebug.engine.session.session_state import SessionState
from flowdebug.errors import UsageError
from flowdebug.exchange.tool_imports import import_tools, parse_tools
from flowdebug.exchange.tools import ToolForm, ToolFormError, apply_form
from flowdebug.mcp.spec import McpServerSpec
from flowdebug.model import Conversation, Message, Text, Tool, ToolChoice

TOOL_CHOICES = ("auto", "none", "required", "tool")
PARALLEL = ("vendor default", "allowed", "one call per turn")
NAME_CHARS = 60  # of the first user message, in a session's name


@dataclass(frozen=True)
class NewSession:
    """What the form holds, as text. ``typed``: tools filled in by hand; ``pasted``: a tools
    list or a whole request in any vendor's format (read by
    :func:`flowdebug.exchange.tool_imports.parse_tools`). ``tool_name`` is the named tool of
    the ``tool`` choice; ``parallel`` one of :data:`PARALLEL`."""

    user: str
    system: str = ""
    typed: list[ToolForm] = field(default_factory=list)
    pasted: str = ""
    tool_choice: str = "auto"
    tool_name: str = ""
    parallel: str = PARALLEL[0]
    max_rounds: int = 10
    # Who plays the model (a live choice carries the sidebar's settings); None: the default
    # for a session of your own, the offline model that reads the request.
    player: PlayerChoice | None = None
    name: str = ""
    # An MCP server whose tools the session declares (listed by :func:`mcp_listing`) and the
    # names of those chosen (None: all of them).
    mcp: McpServerSpec | None = None
    mcp_tools: list[str] | None = None


def mcp_server(command: str = "", url: str = "") -> McpServerSpec:
    """The MCP server the form names: a command line (shell-split) or a URL, exactly one.
    Raises :class:`~flowdebug.hosting.Refused` where the host does not allow it, UsageError
    when it names none, both or a malformed one."""
    command, url = command.strip(), url.strip()
    if bool(command) == bool(url):
        raise UsageError("give an MCP server's command (stdio) or its URL, one of the two")
    try:
        return McpServerSpec.parse(stdio=command or None, url=url or None)
    except ValidationError as e:
        raise UsageError(f"MCP server: {e.errors()[0]['msg']}") from None
    except ValueError as e:  # shlex: an unclosed quote
        raise UsageError(f"MCP server command: {e}") from None


def mcp_listing(spec: McpServerSpec) -> list[Tool]:
    """The server's tools (a listing of its own, the server stopped after it; McpError says
    why it could not be listed)."""
    return list_server_tools(spec, refresh=True)


def session_name(user: str, chars: int = NAME_CHARS) -> str:
    """A session's name from its first user message: its first line, cut at a word within
    ``chars`` characters (with an ellipsis when cut)."""
    line = " ".join(user.split())
    if len(line) <= chars:
        return line or "session"
    cut = line[:chars].rsplit(" ", 1)[0] or line[:chars]
    return cut.rstrip(" ,.;:") + "…"


def toolset(form: NewSession) -> Toolset:
    """The form's tools: the typed ones in order, then the pasted ones (a pasted tool named as
    a typed one replaces its declaration). ToolFormError / CodecError say which is wrong."""
    tools = Toolset()
    for i, typed in enumerate(form.typed):
        if not typed.name.strip():
            continue
        try:
            tools = apply_form(tools, typed)
        except ToolFormError as e:
            raise ToolFormError(f"tool {i + 1} {e.field}", e.reason) from None
    if form.pasted.strip():
        tools = import_tools(tools, parse_tools(form.pasted).tools)
    if form.mcp is not None:
        served = toolset_from_mcp(form.mcp)
        chosen = served.names if form.mcp_tools is None else form.mcp_tools
        if missing := [n for n in chosen if n not in served.names]:
            raise UsageError(f"the MCP server has no tool {missing[0]!r}: list its tools again")
        tools += Toolset(entries=[e for e in served.entries if e.tool.name in chosen])
    return tools


def tool_choice(form: NewSession, names: list[str]) -> ToolChoice | None:
    """The form's tool choice (None: auto with the vendor's parallel default, what a request
    leaves out)."""
    if form.tool_choice not in TOOL_CHOICES:
        raise UsageError(f"tool choice is one of {', '.join(TOOL_CHOICES)}")
    if form.tool_choice == "tool" and form.tool_name not in names:
        raise UsageError(
            f"the named tool must be one of the session's tools ({', '.join(names) or 'none'})"
        )
    parallel = {PARALLEL[1]: True, PARALLEL[2]: False}.get(form.parallel)
    if form.tool_choice == "auto" and parallel is None:
        return None
    name = form.tool_name if form.tool_choice == "tool" else None
    return ToolChoice(mode=form.tool_choice, name=name, parallel=parallel)  # type: ignore[arg-type]


def build(form: NewSession) -> Session:
    """The debugger session the form describes, before its first step."""
    if not form.user.strip():
        raise UsageError("a session starts from a user message: write one")
    if form.max_rounds < 1:
        raise UsageError("the round cap is at least 1")
    tools = toolset(form)
    conversation = Conversation(
        system=form.system.strip() or None,
        tools=tools.tools,
        tool_choice=tool_choice(form, tools.names),
        messages=[Message(role="user", parts=[Text(text=form.user.strip())])],
    )
    choice = form.player or PlayerChoice(kind=default_kind(None))
    state = SessionState(
        conversation=conversation,
        toolset=tools,
        policy=Policy(max_rounds=form.max_rounds),
        player=choice.settings(),  # kept with the session (never the key)
    )
    return Session(state, make_player(choice, None))


def name_of(form: NewSession) -> str:
    """The name the form gives (typed), else one from the user message."""
    return form.name.strip() or session_name(form.user)
