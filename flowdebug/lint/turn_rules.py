"""History rules a vendor declares in its facts (:class:`~flowdebug.protocols.facts.TurnRules`)
rather than in :mod:`flowdebug.lint.vendors`: results open the user turn right after the calls,
the turns alternate and start with the user, tools are declared. Bedrock Converse is checked
this way.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from flowdebug.lint.finding import Finding, Rule
from flowdebug.lint.pairing import Exchange, Site, calls_in, ends_history, pair, results_in
from flowdebug.lint.vendors import CODES
from flowdebug.model import Conversation, Message, ToolCall, ToolResult
from flowdebug.protocols.facts import TurnRules


def _wire_index(msgs: Sequence[Message], index: int) -> int:
    """A message's position on a wire that keeps the system prompt apart."""
    return sum(1 for m in msgs[:index] if m.role != "system")


def check_declared_turns(conv: Conversation, protocol: str, t: TurnRules) -> list[Finding]:
    """The rules a vendor declares in its facts (:class:`TurnRules`): results open the user
    turn right after the calls; the turns alternate and start with the user; tools declared."""
    msgs, out = conv.messages, []
    turns: list[tuple[str, list[int]]] = []
    for i, m in (im for im in enumerate(msgs) if im[1].role != "system"):
        role = "assistant" if m.role == "assistant" else "user"
        if turns and turns[-1][0] == role:
            if msgs[turns[-1][1][-1]].role == m.role:
                rule = Rule("error", "two {role} messages in a row", t.alternate)
                out.append(rule.at("consecutive_same_role", f"messages[{i}]", protocol, role=role))
            turns[-1][1].append(i)
        else:
            turns.append((role, [i]))
    if turns and turns[0][0] != "user":
        rule = Rule("error", "the first message must be a user message", t.first_user)
        out.append(rule.at("first_message_not_user", f"messages[{turns[0][1][0]}]", protocol))
    if not conv.tools and any(isinstance(p, ToolCall | ToolResult) for m in msgs for p in m.parts):
        rule = Rule(
            "error", "the history holds tool calls or results but declares no tool", t.no_tools
        )
        out.append(rule.at("tools_missing", "tools", protocol))
    exchanges = []
    for (_, turn), (_, nxt) in itertools.zip_longest(turns, turns[1:], fillvalue=("", [])):
        if not (calls := [c for i in turn for c in calls_in(msgs[i], i)]):
            continue
        answers = [r for i in nxt for r in results_in(msgs[i], i)]
        pending = ends_history(msgs, calls[-1][0].index)
        exchanges.append(Exchange(calls, answers, pending=pending))
        parts = [(Site(i, j), part) for i in nxt for j, part in enumerate(msgs[i].parts)]
        other = next((s for s, part in parts if not isinstance(part, ToolResult)), None)
        late = other and any(isinstance(part, ToolResult) and s > other for s, part in parts)
        if t.not_first and other and late:
            rule = Rule(
                t.not_first_level,
                "content comes before the tool results in the user turn that answers the calls",
                t.not_first,
            )
            n, k = _wire_index(msgs, nxt[0]), len(calls)
            out.append(rule.at("text_before_results", other.path, protocol, n=n, k=k))
    pairing = pair(exchanges, msgs)
    for site, c in pairing.missing:
        ids = pairing.exchange_of[site.index].unanswered_ids()
        n = _wire_index(msgs, site.index) + 1
        rule = Rule("error", "call {id} has no result in the next user turn", t.missing)
        out.append(rule.at(CODES["missing"], site.path, protocol, id=c.id, ids=ids, n=n))
    for (call_site, c), (site, _) in pairing.late:
        n = _wire_index(msgs, call_site.index) + 1
        ids = pairing.exchange_of[call_site.index].unanswered_ids()
        rule = Rule(
            "error", "the result of call {id} is not in the user turn right after it", t.missing
        )
        out.append(rule.at(CODES["late"], site.path, protocol, id=c.id, ids=ids, n=n))
    for site, r in [*pairing.unexpected, *pairing.strays]:
        n = _wire_index(msgs, site.index)
        rule = Rule("error", "result for {id!r} answers no call of the previous turn", t.unexpected)
        out.append(rule.at(CODES["unexpected"], site.path, protocol, id=r.call_id, n=n))
    for _, (site, r) in pairing.duplicates:
        n = _wire_index(msgs, site.index)
        rule = Rule("error", "a second result for call {id}", t.unexpected)
        out.append(rule.at(CODES["duplicate"], site.path, protocol, id=r.call_id, n=n))
    return out
