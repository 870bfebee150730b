"""The teaching picture as data: the canonical cycle drawn once, each vendor's words beside it.

One row per trace event, on four lanes (User, Runtime, Model API, Tool / MCP server). Beside
each row, one cell per chosen vendor names the same event in that vendor's own terms, read
from the payload its codec encodes for that step (:mod:`flowdebug.views.wire_terms`): the
field, and the values that identify it (``tool_result`` · ``tool_use_id: "call_2"`` ·
``is_error: true``). A vendor speaks on one lane (a model API, or MCP with the tool): an event
off its lane, or one its wire does not carry, leaves its cell empty on the shared row; a cell
that needs more lines makes the row taller for every vendor. The component in
``ui/picture.py`` draws the table; nothing here knows Streamlit.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from flowdebug import protocols
from flowdebug.engine.session.session_state import SessionState
from flowdebug.engine.tracing.trace import LANES, Rejection, TraceEvent, sequence, shorten
from flowdebug.errors import FlowdebugError
from flowdebug.model import Conversation, ToolResult
from flowdebug.protocols.base import Codec
from flowdebug.protocols.convert import response_from_message
from flowdebug.render import safe
from flowdebug.views import wire_terms
from flowdebug.views.aligned import window_of
from flowdebug.views.wire_terms import Found, Indexed

WINDOW = 30
# Drawn once for every vendor: MCP's server is the tool lane.
PICTURE_LANES = (("user", "User"), ("runtime", "Runtime"), ("model", LANES["model"]),
                 ("tool", "Tool / MCP server"))  # fmt: skip
BANDS = {
    "declaration": "1 · declaration",
    "request": "2 · request",
    "execution": "3 · execution",
    "continuation": "4 · continuation",
    "answer": "answer",
}
MODEL_SIDE = ("declare", "tool_call", "text", "final_answer", "continuation",
              "hosted_call", "hosted_result")  # fmt: skip
TOOL_SIDE = ("discover", "dispatch", "result")

Span = tuple[str, str]  # (text, role): "" plain, "term" a wire name, "value", "error", "note"


@dataclass(frozen=True)
class Cell:
    """One vendor's words for one event: lines of spans, and the wire fragment behind them."""

    lines: tuple[tuple[Span, ...], ...]
    error: bool = False
    fragments: tuple[Any, ...] = ()
    marks: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Row:
    seq: int
    step: int
    band: str  # the phase, or "answer" for the model's final turn
    kind: str
    source: str
    target: str
    label: str  # the canonical event: the call's id and the argument that tells it apart
    full: str  # the label uncut (shown when the row is lit)
    error: bool
    cells: tuple[Cell | None, ...]  # one per chosen vendor, in order


@dataclass(frozen=True)
class Picture:
    """The row table the component draws, and the lit row's wire fragments in full."""

    vendors: tuple[tuple[str, str], ...]  # (protocol, short name)
    rows: tuple[Row, ...]
    lit: tuple[int, ...]  # the seqs lit (the step just run, or the event picked)
    hidden: int
    wire: tuple[tuple[str, tuple[tuple[str, bool], ...]], ...] = field(default=())

    def data(self) -> dict[str, Any]:
        """The table as JSON for the component: plain strings, numbers and lists only."""
        return {
            "lanes": [list(lane) for lane in PICTURE_LANES],
            "vendors": [list(v) for v in self.vendors],
            "lit": list(self.lit),
            "hidden": self.hidden,
            "rows": [
                {
                    "seq": r.seq,
                    "band": BANDS[r.band],
                    "kind": r.kind,
                    "from": r.source,
                    "to": r.target,
                    "label": r.full if r.seq in self.lit else r.label,
                    "error": r.error,
                    "cells": [
                        None
                        if c is None
                        else {
                            "lines": [[list(s) for s in line] for line in c.lines],
                            "error": c.error,
                        }
                        for c in r.cells
                    ],
                }
                for r in self.rows
            ],
            "wire": [[v, [list(line) for line in lines]] for v, lines in self.wire],
        }


# -- each vendor's payloads, once per history prefix ------------------------------------------

# (protocol, what, messages in the prefix, id of its last message) → (the message, payload).
# The history is never changed in place, so a prefix's last message names it; the entry keeps
# the message alive, so its id is not reused while the entry is here.
_PAYLOADS: OrderedDict[tuple[str, str, int, int], tuple[object, Indexed]] = OrderedDict()
_EMPTY = Indexed(None)


def _payload(protocol: str, conv: Conversation, what: str, n: int) -> Indexed:
    """``protocol``'s request carrying the first ``n`` messages, or its response encoding
    message ``n - 1`` (``what``: request | response), indexed for finding values in it."""
    last = conv.messages[n - 1] if n else None
    key = (protocol, what, n, id(last))
    hit = _PAYLOADS.get(key)
    if hit is not None and hit[0] is last:
        _PAYLOADS.move_to_end(key)
        return hit[1]
    indexed = _encode(protocols.get(protocol), conv, what, n)
    _PAYLOADS[key] = (last, indexed)
    if len(_PAYLOADS) > 64:
        _PAYLOADS.popitem(last=False)
    return indexed


def _turn_start(conv: Conversation, n: int) -> int:
    """Where the last model turn of the first ``n`` messages starts (0 when there is none)."""
    return next((i for i in range(n - 1, 0, -1) if conv.messages[i].role == "assistant"), 0)


def _encode(codec: Codec, conv: Conversation, what: str, n: int) -> Indexed:
    last = conv.messages[n - 1] if n else None
    try:
        if what == "request":
            # A request's rows (the results it sends back, their ids and error marks) are in
            # its last turn: that turn is encoded alone, not a long history again at each Step
            # (a thousand messages took 0.5 s for one vendor). The declaration's rows keep the
            # whole request: they start the history.
            value = codec.encode_request(
                conv.model_copy(update={"messages": conv.messages[_turn_start(conv, n) : n]})
            )
        elif last is not None and last.role == "assistant":
            value = codec.encode_response(response_from_message(last))
        else:
            return _EMPTY
    except FlowdebugError:  # a history the codec cannot carry: the event's label stands in
        return _EMPTY
    return Indexed(value.value)


# -- the canonical label ------------------------------------------------------------------------


def _calls(events: Sequence[TraceEvent]) -> dict[str, dict[str, Any]]:
    """Each call's arguments by id (from the request events)."""
    out = {}
    for e in events:
        call = e.data.get("call")
        if e.kind == "tool_call" and e.call_id and isinstance(call, dict):
            args = call.get("arguments")
            out[e.call_id] = args if isinstance(args, dict) else {}
    return out


def _telling(call_id: str, calls: dict[str, dict[str, Any]], turn: Sequence[str]) -> str:
    """The arguments that tell this call apart from the others of its turn (``Tokyo``)."""
    args = calls.get(call_id, {})
    others = [calls.get(c, {}) for c in turn if c != call_id]
    differ = [k for k, v in args.items() if others and any(o.get(k) != v for o in others)]
    keys = differ or list(args)[:1]
    return ", ".join(str(v) if isinstance(v, str) else json.dumps(v) for k in keys
                     for v in (args[k],))  # fmt: skip


def _said(e: TraceEvent, conv: Conversation) -> str:
    """The event's text uncut: the model's answer, the tool's result, the user's words."""
    result = e.data.get("result")
    content = result.get("content") if isinstance(result, dict) else None
    if e.kind == "result" and isinstance(content, str):
        return " ".join(content.split())
    n = e.messages or 0
    if e.kind in ("final_answer", "answer") and 0 < n <= len(conv.messages):
        return conv.messages[n - 1].text or e.label
    return e.label


def _label(
    e: TraceEvent, calls: dict[str, dict[str, Any]], turns: dict[int, list[str]], said: str
) -> str:
    cid, tool = e.call_id or "", e.tool or ""
    telling = _telling(cid, calls, turns.get(e.round, [])) if cid else ""
    match e.kind:
        case "declare":
            tools = e.data.get("tools")
            names = ", ".join(str(t) for t in tools) if isinstance(tools, list) else ""
            return f"request + tools [{names}]" if names else e.label
        case "tool_call" | "dispatch":
            verb = "run " if e.kind == "dispatch" else ""
            return f"{verb}{cid} · {tool}({telling})"
        case "result":
            return f"{cid} · {tool}({telling}) → {said}"
        case "continuation":
            n = e.data.get("n_results", 0)
            return f"{n} results + history → model"
        case "answer":  # the model's words are on the row above: said once
            return "the answer, shown to the user"
    return said


# -- the cells ----------------------------------------------------------------------------------


def _line(*spans: Span) -> tuple[Span, ...]:
    return spans


def _field(key: str, value: str, role: str = "value") -> tuple[Span, ...]:
    return ((f"{key}:", "term"), (f" {value}", role)) if value else ((key, "term"),)


def _result_lines(found: Found, result: ToolResult | None) -> tuple[tuple[Span, ...], bool]:
    """``tool_use_id: "call_2"`` and, for a failed result, how the wire says so."""
    spans: list[Span] = list(_field(found.key, json.dumps(found.value)))
    named = found.name_field(result.name) if result is not None and result.name else None
    if named:
        spans += [(" · ", ""), *_field(*named)]
    failed = bool(result and result.is_error)
    if failed:
        marks = found.error_marks()
        for key, value in marks:
            spans += [(" · ", ""), *_field(key, value, "error")]
        if not marks:
            spans.append((" · no error flag", "note"))
    return tuple(spans), failed


def _results(conv: Conversation, n: int) -> list[ToolResult]:
    """The results a request of ``n`` messages sends back (after the last model turn)."""
    out: list[ToolResult] = []
    for m in reversed(conv.messages[:n]):
        if m.role == "assistant":
            break
        out[:0] = list(m.tool_results)
    return out


# (protocol, the event's kind, call id and messages, id of the prefix's last message, the
# tools) → (that message, the cell). A Step adds a few events; the others' cells are these,
# so a Step encodes only the payloads of its own events. Cells are small: thousands of them
# cost less than one long history's payloads, which a room's sessions would otherwise evict
# from _PAYLOADS faster than they reuse them.
_CELLS: OrderedDict[tuple[object, ...], tuple[object, Cell | None]] = OrderedDict()


def _cell(protocol: str, e: TraceEvent, conv: Conversation, tools: list[str]) -> Cell | None:
    n = e.messages or 0
    last = conv.messages[n - 1] if 0 < n <= len(conv.messages) else None
    listed = e.data.get("tools")
    key = (protocol, e.kind, e.call_id, n, id(last), tuple(tools),
           tuple(map(str, listed)) if isinstance(listed, list) else None)  # fmt: skip
    hit = _CELLS.get(key)
    if hit is not None and hit[0] is last:
        _CELLS.move_to_end(key)
        return hit[1]
    cell = _encoded_cell(protocol, e, conv, tools)
    _CELLS[key] = (last, cell)
    if len(_CELLS) > 8192:
        _CELLS.popitem(last=False)
    return cell


def _encoded_cell(
    protocol: str, e: TraceEvent, conv: Conversation, tools: list[str]
) -> Cell | None:
    n = e.messages or 0
    match e.kind:
        case "declare" | "discover":
            payload = _payload(protocol, conv, "request", n)
            listed = e.data.get("tools")
            names = [str(t) for t in listed] if isinstance(listed, list) else tools
            found = payload.find(names[0]) if names else None
            where = wire_terms.tool_list(found)
            if where is None:
                return None
            lines: list[tuple[Span, ...]] = [
                _line((where[0], "term"), (f": [{', '.join(names)}]", "value"))
            ]
            if found is not None and found._rpc() is not None:
                lines.insert(0, _line((found.kind, "term")))
            if where[1]:
                lines.append(_line(("schema in ", "note"), (where[1], "term")))
            frag = found.fragment if found else None
            return Cell(tuple(lines), fragments=(frag,), marks=frozenset({where[0]}))
        case "tool_call":
            payload = _payload(protocol, conv, "response", n)
            found = payload.find(e.call_id) if e.call_id else None
            if found is None:
                return None
            said = (_line((found.kind, "term")), _field(found.key, json.dumps(found.value)))
            return Cell(said, fragments=(found.fragment,), marks=frozenset({found.key}))
        case "dispatch" | "result":
            payload = _payload(protocol, conv, "request", n)
            found = payload.find(e.call_id, last=e.kind == "result")
            if found is None or (found._rpc() is None):
                return None
            result = next((r for r in _results(conv, n) if r.call_id == e.call_id), None)
            spans, failed = _result_lines(found, result if e.kind == "result" else None)
            errs = {k.split(".")[-1] for k, _ in found.error_marks()}
            marks = {found.key, *errs} if failed else {found.key}
            return Cell((_line((found.kind, "term")), spans), failed, (found.fragment,),
                        frozenset(marks))  # fmt: skip
        case "continuation":
            return _continuation(protocol, conv, n)
        case "final_answer" | "text":
            payload = _payload(protocol, conv, "response", n)
            text = conv.messages[n - 1].text if n else ""
            found = payload.find(text) if text else None
            if found is None:
                return None
            lines = [_line((found.kind, "term"))]
            stop = wire_terms.stop_field(payload.value) if e.kind == "final_answer" else None
            if stop:
                lines.append(_field(*stop))
            marks = {found.key, *(s[0] for s in [stop] if s)}
            return Cell(tuple(lines), fragments=(found.fragment,), marks=frozenset(marks))
    return None


def _continuation(protocol: str, conv: Conversation, n: int) -> Cell | None:
    payload = _payload(protocol, conv, "request", n)
    results = _results(conv, n)
    found = [(r, payload.find(r.call_id, last=True)) for r in results]
    if not found or any(f is None for _, f in found):
        return None
    first = found[0][1]
    assert first is not None
    if first._rpc() is not None:  # a tool protocol: its results are on the execution rows
        return None
    head = f"{first.kind} ×{len(found)}" if len(found) > 1 else first.kind
    lines: list[tuple[Span, ...]] = [_line((head, "term"))]
    marks = {first.key}
    failed = False
    for r, f in found:
        assert f is not None
        spans, bad = _result_lines(f, r)
        lines.append(spans)
        failed = failed or bad
        if bad:
            marks.update(k.split(".")[-1] for k, _ in f.error_marks())
    frags = [f.fragment for r, f in found if f and r.is_error]
    frags = frags or [f.fragment for _, f in found if f]
    return Cell(tuple(lines), failed, tuple(frags), frozenset(marks))


def _rejection_cell(r: Rejection) -> Cell:
    return Cell((_line((r.label, "error")),), True, ({"status": r.status, "error": r.message},),
                frozenset({"error"}))  # fmt: skip


def _speaks(protocol: str, e: TraceEvent) -> bool:
    """Whether ``e`` is on ``protocol``'s wire: a model API's, or MCP's with the tool."""
    side = MODEL_SIDE if protocols.facts(protocol).kind == "model" else TOOL_SIDE
    return e.kind in side


def _cells(
    names: Sequence[str], e: TraceEvent, conv: Conversation, refused: dict[str, Rejection],
    arrows: dict[str, dict[int, str]], tools: list[str],
) -> tuple[Cell | None, ...]:  # fmt: skip
    out: list[Cell | None] = []
    for name in names:
        r = refused.get(name)
        refuses_here = r is not None and r.seq == e.seq
        if e.seq not in arrows.get(name, {}) or not (_speaks(name, e) or refuses_here):
            out.append(None)
            continue
        cell = _cell(name, e, conv, tools) if _speaks(name, e) else None
        if cell is None and _speaks(name, e):  # not found on its wire (an id it rewrote)
            cell = Cell((_line((arrows[name][e.seq], "term")),), e.error)
        if r is not None and r.seq == e.seq:
            rej = _rejection_cell(r)
            cell = Cell((*(cell.lines if cell else ()), *rej.lines), True,
                        (*(cell.fragments if cell else ()), *rej.fragments),
                        (cell.marks if cell else frozenset()) | rej.marks)  # fmt: skip
        out.append(cell)
    return tuple(out)


def picture(
    state: SessionState,
    names: Sequence[str],
    refused: dict[str, Rejection],
    window: int | None = WINDOW,
    selected: int | None = None,
    upto_seq: int | None = None,
) -> Picture:
    """The teaching picture of ``state`` for the protocols ``names``. ``selected``: an event's
    seq, lit in every column; else the events of the step just run are lit. ``upto_seq``:
    only the events up to it (Play)."""
    events = state.events
    lo, hi = window_of(events, window, selected)
    shown = [e for e in events[lo:hi] if upto_seq is None or e.seq <= upto_seq]
    arrows: dict[str, dict[int, str]] = {}
    for n in names:  # each vendor's arrows in its own terms: the first of each event
        for a in sequence(shown, n, refused.get(n)):
            arrows.setdefault(n, {}).setdefault(a.seq, a.label)
    calls = _calls(events)
    turns: dict[int, list[str]] = {}
    for e in events:
        if e.kind == "tool_call" and e.call_id:
            turns.setdefault(e.round, []).append(e.call_id)
    lit: tuple[int, ...]
    if selected is not None:
        lit = (selected,)
    elif upto_seq is not None:
        lit = (upto_seq,)
    else:
        lit = tuple(e.seq for e in shown if e.step == state.step)
    rows = []
    conv = state.conversation
    tools = list(state.toolset.names)
    for e in shown:
        label = _label(e, calls, turns, _said(e, conv))
        band = "answer" if e.kind in ("final_answer", "answer") else e.phase
        rows.append(Row(e.seq, e.step, band, e.kind, e.source, e.target,
                        safe.visible(shorten(label, 60)), safe.visible(label), e.error,
                        _cells(names, e, conv, refused, arrows, tools)))  # fmt: skip
    vendors = tuple((n, protocols.facts(n).short) for n in names)
    return Picture(vendors, tuple(rows), lit, len(events) - (hi - lo), _wire(vendors, rows, lit))


def _wire(
    vendors: Sequence[tuple[str, str]], rows: Sequence[Row], lit: Sequence[int]
) -> tuple[tuple[str, tuple[tuple[str, bool], ...]], ...]:
    """The lit event in full: per vendor, the exact wire fragment of the lit row that has the
    most to show (a failed one first, else the last one), its important keys marked."""
    mine = [r for r in rows if r.seq in lit and any(r.cells)]
    if not mine:
        return ()
    row = next((r for r in mine if any(c and c.error for c in r.cells)), mine[-1])
    out = []
    for (_, short), cell in zip(vendors, row.cells, strict=True):
        if cell is None or not cell.fragments:
            continue
        frag = cell.fragments[0] if len(cell.fragments) == 1 else list(cell.fragments)
        out.append((short, wire_terms.pretty(frag, set(cell.marks))))
    return tuple(out)
