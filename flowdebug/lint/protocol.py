"""Protocol rules: what each vendor rejects in a conversation's message history.

:func:`check_conversation` gives the neutral findings (calls awaiting results, undeclared
tools, a stored response the history continues) and the rules on call ids, which hold for every
vendor, then each chosen vendor's: the first five vendors' rules are in
:mod:`flowdebug.lint.vendors`; a vendor that declares ``TurnRules`` in its facts is checked by
:mod:`flowdebug.lint.turn_rules`.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from flowdebug.lint.finding import Finding, Rule
from flowdebug.lint.pairing import Site, calls_in
from flowdebug.lint.refusals import ANTHROPIC_DUPLICATE_ID, ANTHROPIC_ID_PATTERN
from flowdebug.lint.turn_rules import check_declared_turns
from flowdebug.lint.vendors import CHECKS, stored_response
from flowdebug.model import Conversation, Message, ModelResponse
from flowdebug.protocols import facts
from flowdebug.protocols.base import safe_call_id

PENDING = Rule(
    "info",
    "the conversation ends with {n} tool call(s) awaiting results: the next request must "
    "carry them",
)
STORED = Rule(
    "info",
    "the history continues the stored response {stored} (previous_response_id): only OpenAI "
    "Responses knows the calls that the outputs opening the input answer",
)
UNDECLARED = Rule("warning", "call names tool {name!r}, which is not declared{hint}")


def _neutral(conv: Conversation) -> list[Finding]:
    out: list[Finding] = []
    if stored := stored_response(conv):
        out.append(STORED.at("history_incomplete", "provider_details", stored=stored))
    order = [i for i, m in enumerate(conv.messages) if m.role != "system"]
    if order and (last := calls_in(conv.messages[order[-1]], order[-1])):
        out.append(PENDING.at("results_pending", f"messages[{order[-1]}]", n=len(last)))
    names = [t.name for t in conv.tools]
    for i, m in enumerate(conv.messages):
        for site, c in calls_in(m, i):
            if names and c.name not in names:
                close = difflib.get_close_matches(c.name, names, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                out.append(UNDECLARED.at("unknown_tool", site.path, name=c.name, hint=hint))
    return out


# Every encoder replaces an empty call id with a legal one (safe_call_id) on the call and its
# result alike, so no vendor sees it; several id-less calls can no longer be told apart.
_SENT = f"flowdebug's encoder sends {safe_call_id('anthropic', '')!r}"
MISSING_ID = {
    "anthropic": Rule("warning", f"an empty id is refused; {_SENT} instead", ANTHROPIC_ID_PATTERN),
    "openai-chat": Rule("warning", f"an empty id pairs nothing; {_SENT} for call and result"),
    "openai-responses": Rule("warning", f"an empty call_id pairs nothing; {_SENT} instead"),
    "gemini": Rule("info", f"no id: {_SENT} (Gemini ids are optional)"),
}
_AGAIN = "call id {id} is already used at {first}"
DUPLICATE_ID = {
    "anthropic": Rule("error", _AGAIN, ANTHROPIC_DUPLICATE_ID),
    "openai-chat": Rule("error", f"{_AGAIN}: tool messages cannot say which call they answer"),
    "openai-responses": Rule("warning", f"{_AGAIN}: outputs cannot say which call they answer"),
    "gemini": Rule("warning", f"{_AGAIN}: responses pair ambiguously"),
    # JSON-RPC ids "MUST NOT have been previously used by the requestor within the same
    # session" [MCP spec 2025-11-25, basic "Requests"].
    "mcp": Rule("error", f"{_AGAIN}: a JSON-RPC request id must be unique in a session"),
}


_DUPLICATE = Rule("error", f"{_AGAIN}: results cannot say which call they answer")


def _call_ids(messages: Sequence[Message], protocols: Sequence[str]) -> list[Finding]:
    """Rules on call ids alone: they hold for a model response as much as for a history."""
    out: list[Finding] = []
    seen: dict[str, Site] = {}
    for site, c in (c for i, m in enumerate(messages) for c in calls_in(m, i)):
        if not c.id:
            out += [
                MISSING_ID[p].at("call_id_missing", site.path, p)
                for p in protocols
                if p in MISSING_ID
            ]
        elif c.id in seen:
            first = seen[c.id].path
            out += [
                DUPLICATE_ID.get(p, _DUPLICATE).at(
                    "duplicate_call_id", site.path, p, id=c.id, first=first
                )
                for p in protocols
            ]
        else:
            seen[c.id] = site
    return out


def check_conversation(conv: Conversation, protocols: Sequence[str]) -> list[Finding]:
    """Neutral findings first, then each protocol's, in ``protocols`` order."""
    out = _neutral(conv) + _call_ids(conv.messages, protocols)
    for name in protocols:
        if name in CHECKS:
            out += CHECKS[name](conv)
        elif (rules := facts(name).turn_rules) is not None:
            out += check_declared_turns(conv, name, rules)
    return out


def check_response(resp: ModelResponse, protocols: Sequence[str]) -> list[Finding]:
    """A model turn is not history yet: only its call ids can already be wrong."""
    return _call_ids([resp.message], protocols)
