"""History rules a vendor declares as plain facts (:class:`~flowdebug.protocols.facts.TurnRules`)
rather than as code in its ``rules.py``: results open the user turn right after the calls, the
turns alternate and start with the user, tools are declared. Bedrock Converse is checked this
way.
"""

from __future__ import annotations

from collections.abc import Sequence

from flowdebug.lint.base.findings import Finding, Rule
from flowdebug.lint.base.pairing import CODES, merged_turns, pair
from flowdebug.model import Conversation, Message, ToolCall, ToolResult
from flowdebug.protocols.facts import TurnRules


def _wire_index(msgs: Sequence[Message], index: int) -> int:
    """A message's position on a wire that keeps the system prompt apart."""
    return sum(1 for m in msgs[:index] if m.role != "system")


def check_declared_turns(conv: Conversation, protocol: str, rules: TurnRules) -> list[Finding]:
    """The rules a vendor declares in its facts (:class:`TurnRules`): results open the user
    turn right after the calls; the turns alternate and start with the user; tools declared."""
    msgs, out = conv.messages, []
    t = merged_turns(msgs)
    for i in t.repeated:
        role = "assistant" if msgs[i].role == "assistant" else "user"
        rule = Rule("error", "two {role} messages in a row", rules.alternate)
        out.append(rule.at("consecutive_same_role", f"messages[{i}]", protocol, role=role))
    if t.turns and t.turns[0][0] != "user":
        rule = Rule("error", "the first message must be a user message", rules.first_user)
        out.append(rule.at("first_message_not_user", f"messages[{t.turns[0][1][0]}]", protocol))
    if not conv.tools and any(isinstance(p, ToolCall | ToolResult) for m in msgs for p in m.parts):
        rule = Rule(
            "error", "the history holds tool calls or results but declares no tool", rules.no_tools
        )
        out.append(rule.at("tools_missing", "tools", protocol))
    if rules.not_first:
        rule = Rule(
            rules.not_first_level,
            "content comes before the tool results in the user turn that answers the calls",
            rules.not_first,
        )
        for site, calls, answering in t.results_not_first:
            n, k = _wire_index(msgs, answering), len(calls)
            out.append(rule.at("text_before_results", site.path, protocol, n=n, k=k))
    pairing = pair(t.exchanges, msgs)
    for site, c in pairing.missing:
        ids = pairing.exchange_of[site.index].unanswered_ids()
        n = _wire_index(msgs, site.index) + 1
        rule = Rule("error", "call {id} has no result in the next user turn", rules.missing)
        out.append(rule.at(CODES["missing"], site.path, protocol, id=c.id, ids=ids, n=n))
    for (call_site, c), (site, _) in pairing.late:
        n = _wire_index(msgs, call_site.index) + 1
        ids = pairing.exchange_of[call_site.index].unanswered_ids()
        rule = Rule(
            "error", "the result of call {id} is not in the user turn right after it", rules.missing
        )
        out.append(rule.at(CODES["late"], site.path, protocol, id=c.id, ids=ids, n=n))
    for site, r in [*pairing.unexpected, *pairing.strays]:
        n = _wire_index(msgs, site.index)
        rule = Rule(
            "error", "result for {id!r} answers no call of the previous turn", rules.unexpected
        )
        out.append(rule.at(CODES["unexpected"], site.path, protocol, id=r.call_id, n=n))
    for _, (site, r) in pairing.duplicates:
        n = _wire_index(msgs, site.index)
        rule = Rule("error", "a second result for call {id}", rules.unexpected)
        out.append(rule.at(CODES["duplicate"], site.path, protocol, id=r.call_id, n=n))
    return out
