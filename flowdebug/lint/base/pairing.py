"""Pairing results with calls as one vendor sees the history.

A vendor looks for the results of a call turn in one place (the next user turn, the tool
messages right after, the next content...): each protocol builds its ``Exchange``s, one per
call turn with the results found in that place, and ``pair`` sorts every call and result into
what a vendor can complain about: missing, late (present but elsewhere), unexpected (in the
place, wrong id), stray (after no call turn), duplicate, reordered. A vendor's table of
:class:`~flowdebug.lint.base.findings.Rule` by kind says how it answers each (:func:`report`).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from flowdebug.lint.base.codes import FindingCode
from flowdebug.lint.base.findings import Finding, Rule
from flowdebug.model import Message, ToolCall, ToolResult

# The kinds of mismatch pair finds and their finding codes; each vendor's table says how it
# answers each kind (a kind it leaves out gives no finding). Templates see ``id`` (the call
# id), ``call`` (the call's path) and ``ids`` (the calls of that turn left unanswered).
CODES: dict[str, FindingCode] = {
    "missing": "missing_result",
    "late": "results_not_adjacent",
    "unexpected": "result_without_call",
    "stray": "result_without_call",
    "duplicate": "duplicate_result",
    "reordered": "results_reordered",
}
Rules = dict[str, Rule]
T = TypeVar("T")


@dataclass(frozen=True, order=True, slots=True)
class Site:
    """Where a part sits in the canonical conversation."""

    index: int
    part: int

    @property
    def path(self) -> str:
        return f"messages[{self.index}].parts[{self.part}]"


Call = tuple[Site, ToolCall]
Result = tuple[Site, ToolResult]


@dataclass
class Exchange:
    """One call turn and the results found where the vendor looks for them. Its lists may be
    shared with the message table (:func:`parts_of`): read-only."""

    calls: list[Call]
    answers: list[Result]
    pending: bool  # the conversation ends here: results are still to come

    def unanswered_ids(self) -> str:
        """The calls no result in place answers, comma-separated as the vendors list them."""
        answered = {r.call_id for _, r in self.answers}
        return ", ".join(c.id for _, c in self.calls if c.id not in answered)


@dataclass
class Pairing:
    """How results pair with calls under one vendor's rules."""

    missing: list[Call] = field(default_factory=list)  # no result anywhere after
    late: list[tuple[Call, Result]] = field(default_factory=list)  # result outside its place
    unexpected: list[Result] = field(default_factory=list)  # in a call's place, wrong id
    strays: list[Result] = field(default_factory=list)  # after no call turn, matches no call
    duplicates: list[tuple[Result, Result]] = field(default_factory=list)  # (first, again)
    reordered: list[Exchange] = field(default_factory=list)
    exchange_of: dict[int, Exchange] = field(default_factory=dict)  # by a call's message


# The calls and results of each message at its index, for every vendor's pairing and every
# lint of a growing history: messages are frozen, so a message at an index always holds the
# same parts (the entry keeps the message, so its id is not reused while it is here).
_PARTS: dict[tuple[int, int], tuple[Message, tuple[list[Call], list[Result]]]] = {}
_PARTS_MAX = 50_000


def _parts(m: Message, i: int) -> tuple[list[Call], list[Result]]:
    """Message ``i``'s calls and results: the table's own lists, never to be changed."""
    hit = _PARTS.get((id(m), i))
    if hit is not None and hit[0] is m:
        return hit[1]
    calls: list[Call] = []
    results: list[Result] = []
    if m.role == "assistant":
        calls = [(Site(i, j), p) for j, p in enumerate(m.parts) if isinstance(p, ToolCall)]
    else:
        results = [(Site(i, j), p) for j, p in enumerate(m.parts) if isinstance(p, ToolResult)]
    if len(_PARTS) >= _PARTS_MAX:
        _PARTS.clear()
    _PARTS[(id(m), i)] = (m, (calls, results))
    return calls, results


class _Reading:
    """One history read once for a whole lint: every vendor's pairing asks the same questions
    of it (each message's calls and results, where it ends, its merged turns, its adjacent
    exchanges). Everything here is shared: read-only."""

    def __init__(self, messages: Sequence[Message]):
        self.messages = messages
        self.parts = [_parts(m, i) for i, m in enumerate(messages)]
        self.last = max((i for i, m in enumerate(messages) if m.role != "system"), default=-1)
        self.results = [r for _, results in self.parts for r in results]
        self.memo: dict[Hashable, Any] = {}


_local = threading.local()


@contextmanager
def reading(messages: Sequence[Message]) -> Iterator[None]:
    """While the block runs, this thread's pairing of ``messages`` (the very object, left
    unchanged by the block) reads the history once, not once per vendor."""
    outer = getattr(_local, "reading", None)
    _local.reading = _Reading(messages)
    try:
        yield
    finally:
        _local.reading = outer


def _read(messages: Sequence[Message]) -> _Reading | None:
    held = getattr(_local, "reading", None)
    return held if held is not None and held.messages is messages else None


def _reading_of(messages: Sequence[Message]) -> _Reading:
    """The reading in force for ``messages``, else one for this call alone."""
    return _read(messages) or _Reading(messages)


def _once(messages: Sequence[Message], key: Hashable, build: Callable[[], T]) -> T:
    """``build()`` once for the whole :func:`reading` of ``messages`` (outside one: each call)."""
    if (held := _read(messages)) is None:
        return build()
    if key not in held.memo:
        held.memo[key] = build()
    return held.memo[key]


def parts_of(messages: Sequence[Message]) -> list[tuple[list[Call], list[Result]]]:
    """Each message's calls and results with their sites, by index (read once for a whole
    lint while a :func:`reading` of ``messages`` lasts): shared lists, read-only."""
    return _reading_of(messages).parts


def ends_history(messages: Sequence[Message], i: int) -> bool:
    """Message ``i`` is the last of the history (system messages aside): its calls are
    still pending, not missing their results."""
    if (held := _read(messages)) is not None:
        return i >= held.last
    return all(messages[k].role == "system" for k in range(i + 1, len(messages)))


def pair(exchanges: list[Exchange], messages: Sequence[Message]) -> Pairing:
    """Sorts every call and result of ``messages`` by how it stands to the vendor's
    ``exchanges``. While a :func:`reading` lasts, the same exchanges (Anthropic's and
    Bedrock's merged turns, Chat's and Responses' adjacent ones) are paired once: each caller
    gets its own Pairing, whose fields it may replace but whose lists it must not change."""
    # The entry keeps the exchanges, so their id is not reused while the reading lasts.
    key = ("pair", id(exchanges))
    return copy.copy(_once(messages, key, lambda: (exchanges, _pair(exchanges, messages)))[1])


def _pair(exchanges: list[Exchange], messages: Sequence[Message]) -> Pairing:
    p = Pairing(exchange_of={site.index: ex for ex in exchanges for site, _ in ex.calls})
    placed: set[Site] = set()
    missing: list[Call] = []
    for ex in exchanges:
        if (
            len(ex.calls) == 1
            and len(ex.answers) == 1
            and ex.answers[0][1].call_id == ex.calls[0][1].id
        ):
            placed.add(ex.answers[0][0])  # one call, its result in place: most turns
            continue
        if not ex.answers:  # nothing in place (every MCP call: its result may come anywhere)
            missing += [] if ex.pending else ex.calls
            continue
        ids = [c.id for _, c in ex.calls]
        first: dict[str, Result] = {}
        for site, r in ex.answers:
            placed.add(site)
            if r.call_id not in ids:
                p.unexpected.append((site, r))
            elif r.call_id in first:
                p.duplicates.append((first[r.call_id], (site, r)))
            else:
                first[r.call_id] = (site, r)
        if not ex.pending:
            missing += [c for c in ex.calls if c[1].id not in first]
        order = [ids.index(call_id) for call_id in first]
        if order != sorted(order):
            p.reordered.append(ex)
    # A result outside the place the vendor looks may still answer an earlier call: "late".
    results = _reading_of(messages).results
    loose = sorted(
        [*p.unexpected, *(r for r in results if r[0] not in placed)],
        key=lambda r: (r[0].index, r[0].part),  # as sites sort, without a Python __lt__ each
    )
    p.unexpected = []
    # The missing calls by id, in order: each loose result takes the first one before it.
    # (Searching the whole list for each result was quadratic: an MCP history, where every
    # result is "late", spent most of its lint there.)
    waiting: dict[str, list[Call]] = {}
    for c in missing:
        waiting.setdefault(c[1].id, []).append(c)
    taken: set[Site] = set()
    for site, r in loose:
        same = waiting.get(r.call_id, [])
        k = next((k for k, c in enumerate(same) if c[0] < site), None)
        if k is not None:
            call = same.pop(k)
            taken.add(call[0])
            p.late.append((call, (site, r)))
        else:
            (p.unexpected if site in placed else p.strays).append((site, r))
    p.missing = [c for c in missing if c[0] not in taken]
    return p


def adjacent_exchanges(messages: Sequence[Message]) -> list[Exchange]:
    """OpenAI Chat and Responses: the results are the tool messages right after the call.
    (Read once for both while a :func:`reading` of ``messages`` lasts: treat as read-only.)"""
    return _once(messages, "adjacent", lambda: _adjacent(messages))


def _adjacent(messages: Sequence[Message]) -> list[Exchange]:
    held = _reading_of(messages)
    exchanges = []
    for i, (calls, _) in enumerate(held.parts):
        if calls:
            k = i + 1
            while k < len(messages) and messages[k].role == "tool":
                k += 1
            # One tool message after the call (most turns): its own list, shared, read-only.
            answers = (
                held.parts[i + 1][1]
                if k == i + 2
                else [r for j in range(i + 1, k) for r in held.parts[j][1]]
            )
            exchanges.append(Exchange(calls, answers, pending=i >= held.last))
    return exchanges


@dataclass
class Turns:
    """A history as a vendor that merges consecutive same-role messages into one turn sees it
    (Anthropic, Bedrock): results travel in user turns, and the turn right after a call turn
    is where they must be."""

    turns: list[tuple[str, list[int]]]  # ("user" | "assistant", message indexes)
    repeated: list[int]  # messages whose role repeats the one before, merged into its turn
    exchanges: list[Exchange]  # each call turn with the results of the turn after it
    # Where the answering turn has other content before a result: that content's site, the
    # calls, and the answering turn's first message.
    results_not_first: list[tuple[Site, list[Call], int]]


def merged_turns(messages: Sequence[Message]) -> Turns:
    """``messages`` (system messages aside) as merged turns, paired turn by turn. (Read once
    for Anthropic and Bedrock while a :func:`reading` of ``messages`` lasts: treat as
    read-only.)"""
    return _once(messages, "merged", lambda: _merged(messages))


def _merged(messages: Sequence[Message]) -> Turns:
    held = _reading_of(messages)
    t = Turns([], [], [], [])
    before = ""  # the role of the message before (system messages aside)
    for i, m in enumerate(messages):
        if m.role == "system":
            continue
        role = "assistant" if m.role == "assistant" else "user"
        if t.turns and t.turns[-1][0] == role:
            if before == m.role:
                t.repeated.append(i)
            t.turns[-1][1].append(i)
        else:
            t.turns.append((role, [i]))
        before = m.role
    for k, (_, turn) in enumerate(t.turns):
        if not (calls := [c for i in turn for c in held.parts[i][0]]):
            continue
        nxt = t.turns[k + 1][1] if k + 1 < len(t.turns) else []
        answers = [r for i in nxt for r in held.parts[i][1]]
        t.exchanges.append(Exchange(calls, answers, pending=calls[-1][0].index >= held.last))
        if (other := _before_results(messages, nxt)) is not None:
            t.results_not_first.append((other, calls, nxt[0]))
    return t


def _before_results(messages: Sequence[Message], turn: list[int]) -> Site | None:
    """The first part of ``turn`` that is not a tool result, when a result comes after it."""
    other = None
    for i in turn:
        for j, part in enumerate(messages[i].parts):
            if not isinstance(part, ToolResult):
                other = other or Site(i, j)
            elif other is not None:
                return other
    return None


def answers_path(ex: Exchange) -> str:
    """The message holding a call turn's results (the first one, when they span several)."""
    return f"messages[{ex.answers[0][0].index}]"


def report(protocol: str, rules: Rules, p: Pairing) -> list[Finding]:
    """The findings of pairing ``p`` under a vendor's table of rules by kind of mismatch."""
    out: list[Finding] = []

    def emit(kind: str, path: str, **fields: str) -> None:
        if rule := rules.get(kind):
            out.append(rule.at(CODES[kind], path, protocol, **fields))

    # A kind the vendor has no rule for costs nothing: its paths and ids are not even written
    # (MCP takes a result anywhere after its call: a long history's results are all "late").
    if "missing" in rules:
        for site, c in p.missing:
            emit("missing", site.path, id=c.id, ids=p.exchange_of[site.index].unanswered_ids())
    if "late" in rules:
        for (call_site, c), (site, _) in p.late:
            ids = p.exchange_of[call_site.index].unanswered_ids()
            emit("late", site.path, id=c.id, call=call_site.path, ids=ids)
    for kind, results in (("unexpected", p.unexpected), ("stray", p.strays)):
        if kind in rules:
            for site, r in results:
                emit(kind, site.path, id=r.call_id)
    if "duplicate" in rules:
        for _, (site, r) in p.duplicates:
            emit("duplicate", site.path, id=r.call_id)
    if "reordered" in rules:
        for ex in p.reordered:
            emit("reordered", answers_path(ex))
    return out
