"""The offline model that reads the request: it picks a tool by the words of the user's message
and fills the arguments it finds there, so a session of your own plays without a key.

- **Which tool**: the best :func:`flowdebug.players.similarity.score_tools` score over the
  declared tools, when it reaches :data:`~flowdebug.players.similarity.THRESHOLD`; otherwise it
  answers with text naming the best score. The tool choice is obeyed: ``none`` answers with
  text, ``required`` takes the best tool whatever its score, a named tool is that tool.
- **Arguments** (:func:`fill_arguments`), from the tool's JSON Schema: an ``enum`` value the
  request names; a date (``2026-12-01``) for a string whose format or name says date; a
  number for an integer or number field; quoted strings and capitalised words (not a
  sentence's first word when it is a common or tool word) for string fields — first to the
  field the word before them points at (``from`` → origin/source/departure, ``to`` →
  destination/target/arrival, ``in``/``at`` → location/city/place), then to the remaining
  required fields in order; a schema ``default`` for what is still empty. What it could not
  fill is said in a text part of its turn.
- **After tool results**: one short text summing up each result (an error as such).

Deterministic: the same request always gets the same turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from flowdebug.model import Conversation, Message, ModelResponse, Text, Tool, ToolCall
from flowdebug.players.base import PlayerTurn
from flowdebug.players.similarity import STOP_WORDS, THRESHOLD, ToolScore, score_tools, words

# The word before a value, and the words of a field it points at.
CUES: dict[str, tuple[str, ...]] = {
    "from": ("origin", "from", "source", "departure", "depart", "start", "sender", "src"),
    "to": ("destination", "to", "target", "arrival", "arrive", "dest", "recipient", "end"),
    "in": ("location", "city", "place", "where", "region", "country", "in"),
    "at": ("location", "city", "place", "where", "at", "venue"),
    "for": ("location", "city", "name", "query", "for", "subject"),
    "on": ("date", "day", "on", "when"),
    "by": ("author", "by", "owner"),
}
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?\b")
_NUMBER = re.compile(r"(?<![\w.-])-?\d+(?:\.\d+)?(?![\w.])")
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|'([^']+)'")
_CAPITALISED = re.compile(r"\b[A-ZÀ-Þ][\w'-]*(?:\s+[A-ZÀ-Þ][\w'-]*)*")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)$")
SUMMARY_CHARS = 160  # of each result, in the answer after tool results


@dataclass
class _Value:
    start: int
    text: str
    cue: str | None  # the word right before it
    used: bool = False


@dataclass
class Filling:
    """The arguments found for one tool, and the required fields left empty."""

    arguments: dict[str, JsonValue] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


def _cue(text: str, start: int) -> str | None:
    before = re.findall(r"[^\W\d_]+", text[:start][-20:])
    return before[-1].lower() if before else None


def _names(text: str, tools: list[Tool]) -> list[_Value]:
    """Quoted strings and capitalised words, in order (see the module's rules)."""
    common = {w for t in tools for w in words(f"{t.name} {t.description or ''}")}
    found = []
    taken: list[tuple[int, int]] = []
    for m in _QUOTED.finditer(text):
        found.append(_Value(m.start(), next(g for g in m.groups() if g), _cue(text, m.start())))
        taken.append(m.span())
    for m in _CAPITALISED.finditer(text):
        if any(a <= m.start() < b for a, b in taken):
            continue
        phrase = m.group(0)
        first, *rest = phrase.split()
        low = first.lower()
        if _SENTENCE_START.search(text[: m.start()]) and (
            low in STOP_WORDS or set(words(low)) & common
        ):
            if not rest:
                continue
            phrase = " ".join(rest)
        elif low in STOP_WORDS:
            continue
        found.append(_Value(m.start(), phrase, _cue(text, m.start())))
    return sorted(found, key=lambda v: v.start)


def _field_words(name: str, spec: dict[str, Any]) -> set[str]:
    return {w.lower() for w in re.findall(r"[^\W_\d]+", f"{name} {spec.get('description') or ''}")}


def _is_date(name: str, spec: dict[str, Any]) -> bool:
    return spec.get("format") in ("date", "date-time") or bool(
        _field_words(name, {}) & {"date", "day", "when"}
    )


def _take(values: list[_Value], name: str, spec: dict[str, Any]) -> _Value | None:
    """The first unused value the word before it points at this field, else None."""
    mine = _field_words(name, spec)
    for v in values:
        if not v.used and v.cue in CUES and mine & set(CUES[v.cue]):
            return v
    return None


def fill_arguments(text: str, tool: Tool, tools: list[Tool] | None = None) -> Filling:
    """What the request ``text`` gives ``tool``'s parameters (see the module's rules)."""
    params = dict(tool.parameters)
    props = params.get("properties") if isinstance(params.get("properties"), dict) else {}
    assert isinstance(props, dict)
    required = [r for r in params.get("required") or [] if isinstance(r, str)]  # type: ignore[union-attr]
    out = Filling()
    dates = [_Value(m.start(), m.group(0), _cue(text, m.start())) for m in _DATE.finditer(text)]
    undated = _DATE.sub(lambda m: " " * len(m.group(0)), text)
    numbers = [_Value(m.start(), m.group(0), None) for m in _NUMBER.finditer(undated)]
    names = _names(undated, tools or [tool])
    strings: list[str] = []
    for name, spec in props.items():
        spec = spec if isinstance(spec, dict) else {}
        kind = spec.get("type")
        enum = spec.get("enum")
        if isinstance(enum, list):
            hit = next(
                (
                    e
                    for e in enum
                    if isinstance(e, str) and re.search(rf"\b{re.escape(e)}\b", text, re.I)
                ),
                None,
            )
            if hit is not None:
                out.arguments[name] = hit
        elif kind == "string" and _is_date(name, spec):
            v = next((d for d in dates if not d.used), None)
            if v is not None:
                v.used = True
                out.arguments[name] = v.text
        elif kind in ("integer", "number"):
            v = next((n for n in numbers if not n.used), None)
            if v is not None:
                v.used = True
                out.arguments[name] = int(float(v.text)) if kind == "integer" else float(v.text)
        elif kind == "string" or kind is None:
            strings.append(name)
    for name in strings:  # first the fields a cue points at
        spec = props[name]
        v = _take(names, name, spec if isinstance(spec, dict) else {})
        if v is not None:
            v.used = True
            out.arguments[name] = v.text
    for name in strings:  # then the required ones, in order
        if name in out.arguments or name not in required:
            continue
        v = next((n for n in names if not n.used), None)
        if v is not None:
            v.used = True
            out.arguments[name] = v.text
    for name, spec in props.items():
        if name not in out.arguments and isinstance(spec, dict) and "default" in spec:
            out.arguments[name] = spec["default"]
    out.arguments = {k: out.arguments[k] for k in props if k in out.arguments}  # schema order
    out.missing = [r for r in required if r not in out.arguments]
    return out


def _request_text(conv: Conversation) -> str:
    users = [m for m in conv.messages if m.role == "user"]
    return users[-1].text if users else ""


def _summary(conv: Conversation) -> str:
    results = conv.messages[-1].tool_results
    names = {c.id: c.name for m in conv.messages for c in m.tool_calls}
    lines = []
    for r in results:
        name = r.name or names.get(r.call_id, r.call_id)
        body = " ".join(r.text.split())
        if len(body) > SUMMARY_CHARS:
            body = body[: SUMMARY_CHARS - 1] + "…"
        lines.append(f"{name} failed: {body}" if r.is_error else f"{name}: {body}")
    return "Here is what I found. " + "; ".join(lines) if lines else "Done."


class ReadingPlayer:
    """The offline model that reads the request (see the module). Answers from memory."""

    name = "offline"
    local = True

    def respond(self, conv: Conversation) -> PlayerTurn:
        if conv.messages and conv.messages[-1].role == "tool":
            return _turn([Text(text=_summary(conv))])
        text = _request_text(conv)
        choice = conv.tool_choice
        if not conv.tools or (choice is not None and choice.mode == "none"):
            return _turn([Text(text="I have no tool to use for this, so I answer in words.")])
        scores = score_tools(text, conv.tools)
        pick: ToolScore | None = scores[0] if scores[0].enough else None
        if choice is not None and choice.mode == "required":
            pick = scores[0]
        if choice is not None and choice.mode == "tool" and choice.name:
            pick = next((s for s in scores if s.tool == choice.name), pick)
        if pick is None:
            best = scores[0]
            return _turn(
                [
                    Text(
                        text=(
                            f"No tool matches this request well enough: the best is {best.tool} "
                            f"(score {best.score:g}, words {', '.join(best.matched) or 'none'}; "
                            f"a call needs {THRESHOLD:g})."
                        )
                    )
                ]
            )
        tool = conv.tool(pick.tool)
        assert tool is not None
        filling = fill_arguments(text, tool, conv.tools)
        done = sum(len(m.tool_calls) for m in conv.messages)
        call = ToolCall(id=f"call_{done + 1}", name=tool.name, arguments=filling.arguments)
        if not filling.arguments and filling.missing:
            note = f"I found no arguments for {tool.name} in the request."
        elif filling.missing:
            note = f"I could not find {', '.join(filling.missing)} in the request."
        else:
            return _turn([call], "tool_use")
        return _turn([Text(text=note), call], "tool_use")


def _turn(parts: list[Any], stop: str = "end_turn") -> PlayerTurn:
    message = Message(role="assistant", parts=parts)
    return PlayerTurn(ModelResponse(message=message, stop_reason=stop, model=ReadingPlayer.name))  # type: ignore[arg-type]
