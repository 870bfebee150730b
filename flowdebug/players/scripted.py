"""The scripted player: the model's turns come from a scenario, deterministically.

A turn's text and argument strings may refer to earlier tool results with
``{{results[-1].id}}``: ``results`` is every tool result so far in conversation order, its
content parsed as JSON when it is JSON. A string that is exactly one reference takes the
referenced value with its type; otherwise the value is formatted into the string.

The model follows what happened. A turn's ``text`` is the scenario's exact wording for the
results the script expected (``when``: the outcome, ``ok`` or ``error``, of each result of the
last batch, in call order); when the results differ (an edit, a fault, a dropped result) or a
reference finds nothing, the turn is written from the results actually sent: each call of the
last batch with what it returned, why it failed, or that no result came back.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from flowdebug.errors import FlowdebugError
from flowdebug.model import Conversation, Message, ModelResponse, Text, ToolCall, ToolResult
from flowdebug.players.base import PlayerTurn

REF = re.compile(r"\{\{\s*results\[(-?\d+)\]((?:\.[A-Za-z_]\w*|\[-?\d+\])*)\s*\}\}")


class ScriptedCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, JsonValue] = Field(default_factory=dict)
    raw_arguments: str | None = None
    id: str | None = None


class ScriptedTurn(BaseModel):
    """One model turn of a scenario: optional text, then zero or more calls."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = None
    calls: list[ScriptedCall] = Field(default_factory=list)
    # The outcome of each result of the last batch that ``text`` was written for.
    when: list[Literal["ok", "error"]] | None = None
    # Said instead of ``text`` when a reference in ``text`` cannot be filled but every one in
    # ``fallback`` can (kept for scenarios written before answers were composed).
    fallback: str | None = None


class ScriptError(FlowdebugError):
    """The script cannot produce the next turn (ran out, or a reference does not resolve)."""


def _results(conv: Conversation) -> list[Any]:
    out = []
    for m in conv.messages:
        for r in m.tool_results:
            try:
                out.append(json.loads(r.text))
            except (ValueError, RecursionError):
                out.append(r.text)
    return out


_MISSING = object()


def _find(results: list[Any], index: str, path: str) -> Any:
    try:
        value = results[int(index)]
        for step in re.findall(r"\.([A-Za-z_]\w*)|\[(-?\d+)\]", path):
            value = value[step[0]] if step[0] else value[int(step[1])]
    except (IndexError, KeyError, TypeError):
        return _MISSING
    return value


def _lookup(results: list[Any], index: str, path: str, ref: str) -> Any:
    value = _find(results, index, path)
    if value is _MISSING:
        # An injected fault or an edit can take away what the script expected; the
        # scripted model carries on with a visible placeholder, as a model would guess.
        inner = ref.strip("{} ")
        return f"<{inner} unavailable>"
    return value


def fills(template: str, results: list[Any]) -> bool:
    """True when every reference in ``template`` finds its value in ``results``."""
    found = (_find(results, m.group(1), m.group(2)) for m in REF.finditer(template))
    return all(value is not _MISSING for value in found)


def resolve(value: Any, results: list[Any]) -> Any:
    """Fill ``{{results[i].path}}`` references in strings anywhere inside ``value``."""
    if isinstance(value, str):
        whole = REF.fullmatch(value)
        if whole:
            return _lookup(results, whole.group(1), whole.group(2), value)

        def sub(m: re.Match[str]) -> str:
            got = _lookup(results, m.group(1), m.group(2), m.group(0))
            return got if isinstance(got, str) else json.dumps(got)

        return REF.sub(sub, value)
    if isinstance(value, dict):
        return {k: resolve(v, results) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, results) for v in value]
    return value


def last_batch(conv: Conversation) -> list[tuple[ToolCall, ToolResult | None]]:
    """The calls of the last assistant turn that made any, each with the result sent for it
    (None when none was: a dropped result)."""
    for i in range(len(conv.messages) - 1, -1, -1):
        calls = conv.messages[i].tool_calls
        if calls:
            sent = {r.call_id: r for m in conv.messages[i + 1 :] for r in m.tool_results}
            return [(c, sent.get(c.id)) for c in calls]
    return []


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k.replace('_', ' ')} {_value(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(_value(v) for v in value)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def compose(batch: list[tuple[ToolCall, ToolResult | None]]) -> str:
    """An answer written from the results actually sent, one sentence a call."""
    sentences = []
    for call, result in batch:
        args = ", ".join(_value(v) for v in call.arguments.values())
        what = f"{call.name}({args})" if args else call.name
        if result is None:
            sentences.append(f"I got no result for {what}.")
            continue
        try:
            got = _value(json.loads(result.text))
        except (ValueError, RecursionError):
            got = " ".join(result.text.split())
        if result.is_error:
            sentences.append(f"{what} failed: {got or 'no reason given'}.")
        else:
            sentences.append(f"{what}: {got or 'an empty result'}.")
    return " ".join(sentences) or "I have no results to report."


def _outcomes(batch: list[tuple[ToolCall, ToolResult | None]]) -> list[str | None]:
    return [None if r is None else "error" if r.is_error else "ok" for _, r in batch]


class ScriptedPlayer:
    """Plays the scenario's turns in order; ``repeat_last`` loops the last one forever."""

    name = "scripted"
    local = True  # answers from memory: no network, nothing to wait for

    def __init__(self, turns: list[ScriptedTurn], repeat_last: bool = False):
        if not turns:
            raise ScriptError("a scripted player needs at least one turn")
        self.turns = turns
        self.repeat_last = repeat_last

    def respond(self, conv: Conversation) -> PlayerTurn:
        done = sum(1 for m in conv.messages if m.role == "assistant")
        if done >= len(self.turns) and not self.repeat_last:
            raise ScriptError(
                f"the script has {len(self.turns)} model turns and all have "
                "been played; undo, or switch to the manual player"
            )
        turn = self.turns[min(done, len(self.turns) - 1)]
        results = _results(conv)
        n_calls = sum(len(m.tool_calls) for m in conv.messages)
        parts: list[Any] = []
        if turn.text:
            parts.append(Text(text=self._text(turn, conv, results)))
        for i, call in enumerate(turn.calls):
            parts.append(
                ToolCall(
                    id=call.id or f"call_{n_calls + i + 1}",
                    name=call.name,
                    arguments=resolve(call.arguments, results),
                    raw_arguments=call.raw_arguments,
                )
            )
        message = Message(role="assistant", parts=parts)
        stop = "tool_use" if turn.calls else "end_turn"
        return PlayerTurn(ModelResponse(message=message, stop_reason=stop, model="scripted"))

    @staticmethod
    def _text(turn: ScriptedTurn, conv: Conversation, results: list[Any]) -> str:
        """The scenario's wording when the results are the ones it was written for, else an
        answer written from what was actually sent."""
        assert turn.text is not None
        batch = last_batch(conv)
        expected = turn.when is None or _outcomes(batch) == list(turn.when)
        if expected and fills(turn.text, results):
            said: Any = resolve(turn.text, results)
        elif expected and turn.fallback is not None and fills(turn.fallback, results):
            said = resolve(turn.fallback, results)
        elif batch and not turn.calls:
            return compose(batch)
        else:
            said = resolve(turn.text, results)
        return said if isinstance(said, str) else json.dumps(said)
