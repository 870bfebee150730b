"""Compare players side by side, and A/B test a tool's description or schema.

:func:`compare` sends one history to several players at once and reports, per player, the
tools it chose, its arguments and whether they validate against the declared schemas.
:func:`ab_test` runs one turn K times for each variant of a tool and tallies the choices.
Neither raises for a player's failure: it becomes the row's ``error``, so one bad key does
not hide the other players' answers.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from jsonschema.exceptions import SchemaError
from pydantic import JsonValue

from flowdebug.engine.execution.validation import argument_errors, unknown_tool_text
from flowdebug.errors import FlowdebugError, UsageError
from flowdebug.model import Conversation, Message, Text
from flowdebug.players.base import Player, PlayerTurn

NO_TOOL = "(text)"  # what a run that answered without calling a tool is tallied as


@dataclass(frozen=True)
class CallReport:
    """One call a player made, checked against the conversation's declarations."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str | None
    known: bool
    errors: list[str]

    @property
    def valid(self) -> bool:
        return self.known and not self.errors


@dataclass
class CompareRow:
    """What one player did with the history: calls (checked), text, time, or the error."""

    player: str
    calls: list[CallReport] = field(default_factory=list)
    text: str = ""
    stop_reason: str | None = None
    elapsed_ms: float = 0.0
    error: str | None = None
    turn: PlayerTurn | None = field(default=None, repr=False)
    prompt: str = ""  # in an A/B run: the phrasing of the request it answered

    @property
    def chosen(self) -> list[str]:
        """The called tools' names in order, or ``[NO_TOOL]`` for a text answer."""
        return [c.name for c in self.calls] or ([] if self.error else [NO_TOOL])

    @property
    def valid(self) -> bool | None:
        """True when every call validates; None when there was no call (or an error)."""
        if self.error or not self.calls:
            return None
        return all(c.valid for c in self.calls)

    def summary(self) -> dict[str, Any]:
        """One flat row for a table."""
        return {
            "player": self.player,
            "chosen": ", ".join(self.chosen),
            "arguments": "; ".join(
                c.raw_arguments if c.raw_arguments is not None else _args(c.arguments)
                for c in self.calls
            ),
            "valid": self.valid,
            "problems": "; ".join(e for c in self.calls for e in c.errors),
            "text": self.text,
            "elapsed_ms": round(self.elapsed_ms),
            "error": self.error or "",
        }


def _args(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False)


def check_calls(conv: Conversation, message: Message) -> list[CallReport]:
    """Each call in ``message`` with what is wrong with it against ``conv``'s tools."""
    names = [t.name for t in conv.tools]
    out = []
    for call in message.tool_calls:
        tool = conv.tool(call.name)
        if tool is None:
            errors = [unknown_tool_text(call.name, names)]
        elif call.raw_arguments is not None:
            errors = [f"arguments are not a JSON object: {call.raw_arguments[:200]}"]
        else:
            try:
                errors = argument_errors(tool.parameters, call.arguments)
            except SchemaError as e:
                errors = [f"the tool's schema is invalid: {e.message}"]
        out.append(
            CallReport(
                call.id,
                call.name,
                dict(call.arguments),
                call.raw_arguments,
                tool is not None,
                errors,
            )
        )
    return out


def _player_name(player: Player) -> str:
    return str(getattr(player, "name", type(player).__name__))


def run_one(conv: Conversation, player: Player, label: str | None = None) -> CompareRow:
    """Ask ``player`` for its next turn on ``conv``; never raises for the player's failure."""
    label = label or _player_name(player)
    started = time.perf_counter()
    try:
        turn = player.respond(conv)
    except FlowdebugError as e:
        return CompareRow(label, elapsed_ms=_since(started), error=str(e))
    except Exception as e:  # a side-by-side view must survive any one player's bug
        return CompareRow(label, elapsed_ms=_since(started), error=f"{type(e).__name__}: {e}")
    message = turn.response.message
    return CompareRow(
        label,
        calls=check_calls(conv, message),
        text=message.text,
        stop_reason=turn.response.stop_reason,
        elapsed_ms=turn.elapsed_ms or _since(started),
        turn=turn,
    )


def _since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def compare(
    conv: Conversation, players: Sequence[Player], workers: int | None = None
) -> list[CompareRow]:
    """Send ``conv`` to every player concurrently; one row per player, in order."""
    if not players:
        return []
    with ThreadPoolExecutor(max_workers=workers or min(8, len(players))) as pool:
        return list(pool.map(lambda p: run_one(conv, p), players))


@dataclass(frozen=True)
class ToolVariant:
    """One version of a tool for an A/B test: a new description and/or parameters schema."""

    label: str
    description: str | None = None
    parameters: dict[str, JsonValue] | None = None


@dataclass
class VariantTally:
    """What K runs of one variant did. ``chosen`` counts runs: each tool a run called (once,
    however many calls it made to it) and :data:`NO_TOOL` for a run that answered with text;
    failed runs count only in ``errors``. ``rows``: each run, in order."""

    variant: ToolVariant
    runs: int = 0
    chosen: Counter[str] = field(default_factory=Counter)
    valid_calls: int = 0
    invalid_calls: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    rows: list[CompareRow] = field(default_factory=list, repr=False)

    @property
    def label(self) -> str:
        return self.variant.label

    def add(self, row: CompareRow) -> None:
        self.runs += 1
        self.rows.append(row)
        if row.error:
            self.errors[row.error] += 1
            return
        self.chosen.update(set(row.chosen))
        self.valid_calls += sum(c.valid for c in row.calls)
        self.invalid_calls += sum(not c.valid for c in row.calls)


@dataclass
class ABResult:
    tool_name: str
    variants: list[VariantTally]

    def table(self) -> list[dict[str, Any]]:
        """One row per variant: runs, a column per chosen tool (and text), validity, errors."""
        names = sorted({n for v in self.variants for n in v.chosen}, key=lambda n: n == NO_TOOL)
        return [
            {
                "variant": v.label,
                "runs": v.runs,
                **{n: v.chosen.get(n, 0) for n in names},
                "valid calls": v.valid_calls,
                "invalid calls": v.invalid_calls,
                "errors": sum(v.errors.values()),
            }
            for v in self.variants
        ]

    def runs(self) -> list[dict[str, Any]]:
        """Every run: its variant, number, the phrasing it was asked with, what it chose, the
        arguments, its text and error."""
        return [
            {
                "variant": v.label,
                "run": n,
                "request": row.prompt,
                **{k: row.summary()[k] for k in ("chosen", "arguments", "valid", "text", "error")},
            }
            for v in self.variants
            for n, row in enumerate(v.rows, 1)
        ]


def _last_user(conv: Conversation) -> int | None:
    return next(
        (i for i in range(len(conv.messages) - 1, -1, -1) if conv.messages[i].role == "user"), None
    )


def last_user_text(conv: Conversation) -> str:
    """The text of ``conv``'s last user message ("" without one)."""
    at = _last_user(conv)
    return conv.messages[at].text if at is not None else ""


def rephrased(conv: Conversation, text: str) -> Conversation:
    """``conv`` with its last user message's text replaced by ``text`` (its other parts kept)."""
    at = next(
        (i for i in range(len(conv.messages) - 1, -1, -1) if conv.messages[i].role == "user"), None
    )
    if at is None:
        raise UsageError("the request has no user message to phrase otherwise")
    old = conv.messages[at]
    parts = [p for p in old.parts if not isinstance(p, Text)]
    message = old.model_copy(update={"parts": [Text(text=text), *parts]})
    return conv.model_copy(
        update={"messages": [*conv.messages[:at], message, *conv.messages[at + 1 :]]}
    )


def example_arguments(scenario: str | None, conv: Conversation, tool_name: str) -> dict:
    """Arguments a stand-in model can send to ``tool_name``: the first call to it in the
    history, else in the scenario's script, else none."""
    for m in conv.messages:
        for c in m.tool_calls:
            if c.name == tool_name:
                return dict(c.arguments)
    if scenario:
        from flowdebug.engine.session import scenarios

        for turn in scenarios.load(scenario).turns:
            for c in turn.calls:
                if c.name == tool_name and "{{" not in json.dumps(c.arguments):
                    return dict(c.arguments)
    return {}


def apply_variant(conv: Conversation, tool_name: str, variant: ToolVariant) -> Conversation:
    """``conv`` with ``tool_name`` declared as ``variant`` describes (a copy)."""
    if conv.tool(tool_name) is None:
        raise UsageError(
            f"no tool {tool_name!r} in the conversation; tools: "
            f"{', '.join(t.name for t in conv.tools) or 'none'}"
        )
    update: dict[str, Any] = {}
    if variant.description is not None:
        update["description"] = variant.description
    if variant.parameters is not None:
        update["parameters"] = variant.parameters
    tools = [t.model_copy(update=update) if t.name == tool_name else t for t in conv.tools]
    return conv.model_copy(update={"tools": tools})


def ab_test(
    conv: Conversation,
    tool_name: str,
    variants: Sequence[ToolVariant],
    player_factory: Callable[[], Player],
    runs: int = 5,
    workers: int = 4,
    phrasings: Sequence[str] = (),
) -> ABResult:
    """Run the next turn ``runs`` times per variant of ``tool_name`` and tally each variant.

    ``player_factory`` is called once per run (``lambda: player`` shares one player).
    Arguments are validated against the variant's own schema. ``phrasings``: run ``n`` of
    every variant asks with the ``n``-th (in turn) as the last user message's text
    (:func:`flowdebug.views.phrasings.phrasings`), so every variant hears the same requests.
    """
    if runs < 1:
        raise UsageError("runs must be at least 1")
    convs = [apply_variant(conv, tool_name, v) for v in variants]
    asked = [phrasings[n % len(phrasings)] if phrasings else None for n in range(runs)]
    jobs = [
        (i, rephrased(c, text) if text is not None else c, text or "")
        for i, c in enumerate(convs)
        for text in asked
    ]
    tallies = [VariantTally(v) for v in variants]
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        rows = pool.map(lambda job: run_one(job[1], player_factory()), jobs)
        for (i, _, text), row in zip(jobs, rows, strict=True):
            row.prompt = text
            tallies[i].add(row)
    return ABResult(tool_name, tallies)
