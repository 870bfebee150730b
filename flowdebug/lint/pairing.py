"""Pairing results with calls as one vendor sees the history.

A vendor looks for the results of a call turn in one place (the next user turn, the tool
messages right after, the next content...): each protocol builds its ``Exchange``s, one per
call turn with the results found in that place, and ``pair`` sorts every call and result into
what a vendor can complain about: missing, late (present but elsewhere), unexpected (in the
place, wrong id), stray (after no call turn), duplicate, reordered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from flowdebug.model import Message, ToolCall, ToolResult


@dataclass(frozen=True, order=True)
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
    """One call turn and the results found where the vendor looks for them."""

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


def calls_in(m: Message, i: int) -> list[Call]:
    if m.role != "assistant":
        return []
    return [(Site(i, j), p) for j, p in enumerate(m.parts) if isinstance(p, ToolCall)]


def results_in(m: Message, i: int) -> list[Result]:
    if m.role == "assistant":
        return []
    return [(Site(i, j), p) for j, p in enumerate(m.parts) if isinstance(p, ToolResult)]


def ends_history(messages: Sequence[Message], i: int) -> bool:
    """Message ``i`` is the last of the history (system messages aside): its calls are
    still pending, not missing their results."""
    return all(m.role == "system" for m in messages[i + 1 :])


def pair(exchanges: list[Exchange], messages: Sequence[Message]) -> Pairing:
    p = Pairing(exchange_of={site.index: ex for ex in exchanges for site, _ in ex.calls})
    placed: set[Site] = set()
    missing: list[Call] = []
    for ex in exchanges:
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
    results = [r for i, m in enumerate(messages) for r in results_in(m, i)]
    loose = sorted([*p.unexpected, *(r for r in results if r[0] not in placed)])
    p.unexpected = []
    for site, r in loose:
        call = next((c for c in missing if c[1].id == r.call_id and c[0] < site), None)
        if call is not None:
            missing.remove(call)
            p.late.append((call, (site, r)))
        else:
            (p.unexpected if site in placed else p.strays).append((site, r))
    p.missing = missing
    return p


def adjacent_exchanges(messages: Sequence[Message]) -> list[Exchange]:
    """OpenAI Chat and Responses: the results are the tool messages right after the call."""
    exchanges = []
    for i, m in enumerate(messages):
        if calls := calls_in(m, i):
            k, answers = i + 1, []
            while k < len(messages) and messages[k].role == "tool":
                answers += results_in(messages[k], k)
                k += 1
            exchanges.append(Exchange(calls, answers, pending=ends_history(messages, i)))
    return exchanges
