"""The message history as a person edits it: parts and messages as JSON text, a new message
from a small form, the call/result pairing as rows, and named branches made by forking.

Edits themselves are the debugger session's (``Session.edit_part`` and friends); this module
only turns what a form holds into what those methods take, and sessions into table rows.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any, assert_never

from flowdebug import jsontext
from flowdebug.engine.session import scenarios
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.edits import EditError
from flowdebug.engine.tracing.trace import hosted_label
from flowdebug.errors import CodecError, UsageError
from flowdebug.model import (
    HostedCall,
    HostedResult,
    Image,
    Message,
    Part,
    Text,
    Thinking,
    ToolCall,
    ToolResult,
)
from flowdebug.views.debugger import Pair

ROLES = ("user", "assistant", "tool", "system")
TEXT_ROLES = ("user", "assistant", "system")  # roles a plain-text body makes sense for
MAIN = "main"


def part_json(part: Part) -> str:
    """One part as the pretty JSON a person edits (None fields left out)."""
    return json.dumps(part.model_dump(mode="json", exclude_none=True), indent=2, ensure_ascii=False)


def part_summary(part: Part, width: int = 70) -> str:
    """One line saying what a part is, for its editor's label."""
    match part:
        case Text():
            line = part.text
        case Thinking():
            line = "redacted" if part.redacted else part.text
        case Image():
            line = part.url or part.media_type
        case ToolCall():
            args = part.raw_arguments or ", ".join(
                f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in part.arguments.items()
            )
            line = f"{part.name}({args}) · {part.id}"
        case ToolResult():
            outcome = f"error {part.error_type or ''}".strip() if part.is_error else "ok"
            line = f"{part.call_id} → {outcome}: {part.text}"
        case HostedCall():
            line = f"run by the vendor: {hosted_label(part)} · {part.id}"
        case HostedResult():
            line = f"{part.call_id} → vendor's answer: {hosted_label(part)}"
        case _:
            assert_never(part)
    line = " ".join(line.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def message_json(message: Message) -> str:
    return json.dumps(
        message.model_dump(mode="json", exclude_none=True), indent=2, ensure_ascii=False
    )


def message_from_form(role: str, body: str) -> dict[str, Any]:
    """A message from the insert form: ``body`` is JSON (a list of parts, or one part) when
    it starts with ``[`` or ``{``, and otherwise plain text (user, assistant, system)."""
    if role not in ROLES:
        raise EditError(f"role: one of {', '.join(ROLES)}, not {role!r}")
    text = body.strip()
    if not text:
        raise EditError("the new message is empty: write its text or its parts as JSON")
    if text[0] not in "[{":
        if role not in TEXT_ROLES:
            raise EditError(
                'a tool message holds tool_result parts: write them as JSON, e.g. [{"kind": '
                '"tool_result", "call_id": "...", "content": "..."}]'
            )
        return {"role": role, "parts": [{"kind": "text", "text": body}]}
    try:
        data = jsontext.loads(text, "parts")
    except CodecError as e:
        raise EditError(f"parts: {e.path}: {e.reason}") from None
    parts = [data] if isinstance(data, dict) else data
    return {"role": role, "parts": parts}


def revision(session: Session) -> str:
    """Changes whenever the session's history does (undo included): editors showing an older
    revision are refilled."""
    data = session.state.id + session.conversation.model_dump_json()
    return hashlib.blake2b(data.encode(), digest_size=8).hexdigest()


# -- what Undo takes back ------------------------------------------------------------------------


def last_change(session: Session) -> str | None:
    """What Undo would take back, in words: ``"tool edit"``, ``"step N"``, ``"history edit"``,
    ``"fault or breakpoint edit"``; None when there is nothing to undo."""
    if not session.undo_stack:
        return None
    before, now = session.undo_stack[-1], session.state
    if now.step != before.step and now.events != before.events:
        return f"step {now.step}"
    if now.conversation.messages != before.conversation.messages:
        return "history edit"
    if now.toolset != before.toolset:
        return "tool edit"
    return "fault or breakpoint edit"


def undo_tool_edit(session: Session) -> None:
    """Take back the last change when it is a tool edit; otherwise refuse, naming it."""
    change = last_change(session)
    if change is None:
        raise UsageError("nothing to undo")
    if change != "tool edit":
        raise UsageError(
            f"the last change ({change}) is not a tool edit: Undo on the Debugger or the "
            "History page takes it back"
        )
    session.undo()


def restore_scenario_tools(session: Session) -> None:
    """Declare the scenario's own tools again: a tool edit (Undo tool edit takes it back).
    Refused for a session without a scenario, and when its tools are the scenario's."""
    name = session.state.scenario
    if not name:
        raise UsageError("this session has no scenario: its tools are its own")
    tools = scenarios.load(name).toolset()
    if tools == session.state.toolset:
        raise UsageError(f"the tools are already scenario {name!r}'s own")
    session.set_toolset(tools)


# -- pairing -------------------------------------------------------------------------------------


def pair_rows(pairs: Iterable[Pair]) -> list[dict[str, Any]]:
    """The pairing as table rows: call id, tool, where the call and its result are, the
    error flag and the problem (empty when the pair is fine)."""
    return [
        {
            "call id": p.call_id,
            "tool": p.tool,
            "call message": p.call_message if p.call_message >= 0 else None,
            "result message": p.result_message,
            "error": (p.error_type or "error") if p.is_error else "",
            "problem": p.problem or "",
        }
        for p in pairs
    ]


def pair_problems(pairs: Iterable[Pair]) -> list[str]:
    """One sentence per pairing problem."""
    out = []
    for p in pairs:
        if p.problem is None:
            continue
        if p.call_message < 0:
            out.append(f"messages[{p.result_message}]: result for {p.call_id}: {p.problem}")
        else:
            out.append(f"messages[{p.call_message}]: {p.tool} call {p.call_id}: {p.problem}")
    return out


# -- branches ------------------------------------------------------------------------------------


def branch_of(branches: dict[str, Session], session: Session) -> str | None:
    return next((name for name, s in branches.items() if s is session), None)


def register(branches: dict[str, Session], session: Session) -> str:
    """The name ``session`` has among ``branches``, adding it (as ``main``, or ``session``
    when a main exists) when it is new, e.g. after a scenario was loaded."""
    name = branch_of(branches, session)
    if name is not None:
        return name
    name = _free(branches, MAIN if MAIN not in branches else "session")
    branches[name] = session
    return name


def add_fork(branches: dict[str, Session], current: Session, msg: int) -> tuple[str, Session]:
    """Fork ``current`` after message ``msg`` (``Session.fork``), keep both in ``branches``
    and return the fork's name and the fork."""
    fork = current.fork(msg)
    return add_branch(branches, current, fork, f"fork at message {msg}"), fork


def add_branch(branches: dict[str, Session], current: Session, fork: Session, base: str) -> str:
    """Keep ``current`` and its ``fork`` in ``branches``; the fork's name (``base``, made
    unique)."""
    register(branches, current)
    name = _free(branches, base)
    branches[name] = fork
    return name


def _free(branches: dict[str, Session], base: str) -> str:
    """``base``, or ``base (2)``, ``base (3)``... whichever is not taken."""
    name, n = base, 1
    while name in branches:
        n += 1
        name = f"{base} ({n})"
    return name
