"""Protocol rules: what each vendor rejects in a conversation's message history.

:func:`check_conversation` gives the neutral findings (calls awaiting results, undeclared
tools, what a vendor's own data says of the history) and the rules on call ids, which hold for
every vendor, then each chosen vendor's. A vendor's rules are declared in its folder and found
through its facts: code in ``protocols/<vendor>/rules.py`` (``Facts.lint``), or plain
``TurnRules`` that :mod:`flowdebug.lint.turn_rules` applies.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from flowdebug.lint.base.findings import Finding, Rule
from flowdebug.lint.base.pairing import Site, parts_of, reading
from flowdebug.lint.turn_rules import check_declared_turns
from flowdebug.model import Conversation, Message, ModelResponse
from flowdebug.protocols import PROTOCOLS, facts
from flowdebug.protocols.base import safe_call_id

PENDING = Rule(
    "info",
    "the conversation ends with {n} tool call(s) awaiting results: the next request must "
    "carry them",
)
UNDECLARED = Rule("warning", "call names tool {name!r}, which is not declared{hint}")
# A vendor that says nothing of reused ids: the results still cannot tell the calls apart.
DUPLICATE_ID = Rule(
    "error", "call id {id} is already used at {first}: results cannot say which call they answer"
)


def _neutral(conv: Conversation) -> list[Finding]:
    out: list[Finding] = []
    for codec in PROTOCOLS.values():
        if (notes := codec.facts.lint.notes) is not None:
            out += notes(conv)
    parts = parts_of(conv.messages)
    order = [i for i, m in enumerate(conv.messages) if m.role != "system"]
    if order and (last := parts[order[-1]][0]):
        out.append(PENDING.at("results_pending", f"messages[{order[-1]}]", n=len(last)))
    names = [t.name for t in conv.tools]
    for calls, _ in parts if names else ():
        for site, c in calls:
            if c.name not in names:
                close = difflib.get_close_matches(c.name, names, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                out.append(UNDECLARED.at("unknown_tool", site.path, name=c.name, hint=hint))
    return out


def _call_ids(messages: Sequence[Message], protocols: Sequence[str]) -> list[Finding]:
    """Rules on call ids alone: they hold for a model response as much as for a history."""
    out: list[Finding] = []
    seen: dict[str, Site] = {}
    for site, c in (c for calls, _ in parts_of(messages) for c in calls):
        if not c.id:
            # Every encoder replaces an empty call id with a legal one on the call and its
            # result alike, so no vendor sees it; several id-less calls cannot be told apart.
            for p in protocols:
                if (rule := facts(p).lint.empty_id) is not None:
                    out.append(rule.at("call_id_missing", site.path, p, sent=safe_call_id(p, "")))
        elif c.id in seen:
            first = seen[c.id].path
            for p in protocols:
                rule = facts(p).lint.duplicate_id or DUPLICATE_ID
                out.append(rule.at("duplicate_call_id", site.path, p, id=c.id, first=first))
        else:
            seen[c.id] = site
    return out


def check_conversation(conv: Conversation, protocols: Sequence[str]) -> list[Finding]:
    """Neutral findings first, then each protocol's, in ``protocols`` order."""
    with reading(conv.messages):
        out = _neutral(conv) + _call_ids(conv.messages, protocols)
        for name in protocols:
            vendor = facts(name)
            if vendor.lint.history is not None:
                out += vendor.lint.history(conv)
            elif vendor.turn_rules is not None:
                out += check_declared_turns(conv, name, vendor.turn_rules)
    return out


def check_response(resp: ModelResponse, protocols: Sequence[str]) -> list[Finding]:
    """A model turn is not history yet: only its call ids can already be wrong."""
    return _call_ids([resp.message], protocols)
