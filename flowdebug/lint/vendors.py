"""The history rules of the first five vendors: what each rejects in a message history.

Every vendor wants each tool call answered by exactly one result; they differ in *where* they
look for it and in how they word the refusal:

* anthropic: consecutive same-role messages merge into one turn; the user turn right after the
  tool_use turn must *begin* with one tool_result per tool_use, in any order.
* openai-chat: one ``tool`` message per result, directly after the assistant message.
* openai-responses: function_call_output pairs with function_call by ``call_id``.
* gemini: the very next content holds one functionResponse per functionCall; pairs by id
  (by name and order for calls that came without a wire id).
* mcp: every tools/call is its own JSON-RPC request; its result pairs by request id.

So the history is paired once per vendor (``lint_pairing.pair`` over that vendor's
``Exchange``s) and each vendor's table says how it answers each kind of mismatch, quoting the
vendor's refusal (:mod:`flowdebug.lint.refusals`). A vendor added later declares its rules in
its facts instead (:mod:`flowdebug.lint.turn_rules`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from flowdebug.lint.finding import Finding, Rule
from flowdebug.lint.pairing import (
    Exchange,
    Pairing,
    Site,
    adjacent_exchanges,
    calls_in,
    ends_history,
    pair,
    results_in,
)
from flowdebug.lint.refusals import (
    ANTHROPIC_DUPLICATE_RESULT,
    ANTHROPIC_FIRST_USER,
    ANTHROPIC_MISSING,
    ANTHROPIC_NO_TOOLS,
    ANTHROPIC_NOT_FIRST,
    ANTHROPIC_UNEXPECTED,
    CHAT_DUPLICATE_RESULT,
    CHAT_MISSING,
    CHAT_UNEXPECTED,
    GEMINI_CALL_TURN,
    GEMINI_COUNT,
    GEMINI_ID_MISMATCH,
    GEMINI_RESPONSE_TURN,
    MCP_UNKNOWN_TOOL,
    RESPONSES_MISSING,
    RESPONSES_UNEXPECTED,
)
from flowdebug.model import Conversation, ToolCall, ToolResult

# The kinds of mismatch pair finds and their finding codes; each vendor's table says how it
# answers each kind (a kind it leaves out gives no finding). Templates see ``id`` (the call
# id), ``call`` (the call's path) and ``ids`` (the calls of that turn left unanswered).
CODES = {
    "missing": "missing_result",
    "late": "results_not_adjacent",
    "unexpected": "result_without_call",
    "stray": "result_without_call",
    "duplicate": "duplicate_result",
    "reordered": "results_reordered",
}
Rules = dict[str, Rule]

ANTHROPIC: Rules = {
    "missing": Rule(
        "error", "call {id} has no tool_result in the next user turn", ANTHROPIC_MISSING
    ),
    "late": Rule(
        "error",
        "the result of call {id} ({call}) is not in the user turn right after the call",
        ANTHROPIC_MISSING,
    ),
    "unexpected": Rule(
        "error",
        "result for {id!r} answers no tool_use of the previous assistant turn",
        ANTHROPIC_UNEXPECTED,
    ),
    "duplicate": Rule("error", "a second tool_result for call {id}", ANTHROPIC_DUPLICATE_RESULT),
    "reordered": Rule(
        "info",
        "results come in a different order than their calls: accepted, Anthropic pairs "
        "tool_result to tool_use by id",
    ),
}
ANTHROPIC["stray"] = ANTHROPIC["unexpected"]

OPENAI_CHAT: Rules = {
    "missing": Rule(
        "error", "call {id} has no tool message right after its assistant message", CHAT_MISSING
    ),
    "late": Rule(
        "error",
        "the result of call {id} ({call}) does not directly follow its assistant message",
        CHAT_MISSING,
    ),
    "unexpected": Rule(
        "error",
        "tool message for {id!r} answers no call of the preceding assistant message",
        CHAT_UNEXPECTED,
    ),
    "reordered": Rule(
        "info",
        "results come in a different order than their calls: accepted, OpenAI Chat pairs "
        "tool messages by tool_call_id",
    ),
}  # "duplicate" is reported by _openai_chat: its text names wire positions.
OPENAI_CHAT["stray"] = OPENAI_CHAT["unexpected"]

OPENAI_RESPONSES: Rules = {
    "missing": Rule(
        "error", "function_call {id} has no function_call_output after it", RESPONSES_MISSING
    ),
    # Pairing is by call_id, yet input with other items between a function_call and its
    # output has been seen refused this way [3P: ranxianglei/billion-context#766].
    "late": Rule(
        "warning",
        "other input items sit between function_call {id} ({call}) and its output; keep "
        "outputs right after their calls",
        RESPONSES_MISSING,
    ),
    "unexpected": Rule(
        "error",
        "function_call_output {id!r} follows no function_call with that call_id",
        RESPONSES_UNEXPECTED,
    ),
    "duplicate": Rule(
        "warning",
        "a second function_call_output for {id}: which one the model reads is not defined",
    ),
    "reordered": Rule(
        "info",
        "results come in a different order than their calls: accepted, OpenAI Responses pairs "
        "outputs by call_id",
    ),
}
OPENAI_RESPONSES["stray"] = OPENAI_RESPONSES["unexpected"]

GEMINI: Rules = {
    # Reported only when a turn has fewer responses than calls (see _gemini).
    "missing": Rule("error", "call {id} has no functionResponse in the next turn", GEMINI_COUNT),
    "late": Rule(
        "error",
        "the response to call {id} ({call}) is not in the turn right after the call",
        GEMINI_RESPONSE_TURN,
    ),
    "unexpected": Rule(
        "error",
        "functionResponse id {id!r} matches no functionCall of the previous turn",
        GEMINI_ID_MISMATCH,
    ),
    "stray": Rule(
        "error", "functionResponse {id!r} follows no function call turn", GEMINI_RESPONSE_TURN
    ),
}  # "duplicate" and "reordered" depend on counts and ids: see _gemini.

MCP: Rules = {
    "missing": Rule(
        "warning",
        "tools/call {id} never gets a result: the client waits until its request times out",
    ),
    "stray": Rule(
        "warning",
        "a result for request id {id!r}, which no pending tools/call used: the client drops it",
    ),
}  # Results pair by JSON-RPC id wherever they come, so order and place do not matter.


def _answers_path(ex: Exchange) -> str:
    """The message holding a call turn's results (the first one, when they span several)."""
    return f"messages[{ex.answers[0][0].index}]"


def _report(protocol: str, rules: Rules, p: Pairing) -> list[Finding]:
    out: list[Finding] = []

    def emit(kind: str, path: str, **fields: str) -> None:
        if rule := rules.get(kind):
            out.append(rule.at(CODES[kind], path, protocol, **fields))

    for site, c in p.missing:
        emit("missing", site.path, id=c.id, ids=p.exchange_of[site.index].unanswered_ids())
    for (call_site, c), (site, _) in p.late:
        ids = p.exchange_of[call_site.index].unanswered_ids()
        emit("late", site.path, id=c.id, call=call_site.path, ids=ids)
    for kind, results in (("unexpected", p.unexpected), ("stray", p.strays)):
        for site, r in results:
            emit(kind, site.path, id=r.call_id)
    for _, (site, r) in p.duplicates:
        emit("duplicate", site.path, id=r.call_id)
    for ex in p.reordered:
        emit("reordered", _answers_path(ex))
    return out


FIRST_USER = Rule("error", "the first message must be a user message", ANTHROPIC_FIRST_USER)
MERGED = Rule("info", "two {role} messages in a row: Anthropic merges them into one turn")
NO_TOOLS = Rule(
    "error", "the history holds tool calls or results but declares no tool", ANTHROPIC_NO_TOOLS
)
NOT_FIRST = Rule(
    "error",
    "content comes before the tool results in the user turn that answers the calls: "
    "tool_result blocks must come first",
    ANTHROPIC_NOT_FIRST,
)
CHAT_DUPLICATE = Rule("error", "a second tool message for call {id}", CHAT_DUPLICATE_RESULT)
CALL_TURN = Rule(
    "error",
    "a function call turn must follow a user turn or a function response turn",
    GEMINI_CALL_TURN,
)
GEMINI_DUPLICATE = Rule("error", "a second functionResponse for call {id}", "{text}")
GEMINI_MISPAIRED = Rule(
    "warning",
    "the {names} calls carry no wire id, so Gemini pairs their responses by name and order: "
    "reordered, they are mispaired",
)
GEMINI_REORDERED = Rule(
    "info",
    "results come in a different order than their calls: accepted, Gemini pairs "
    "functionResponse to functionCall by id",
)
MCP_UNKNOWN = Rule(
    "error", "the server answers tools/call {name!r} with JSON-RPC error -32602", MCP_UNKNOWN_TOOL
)


def _anthropic(conv: Conversation) -> list[Finding]:
    msgs, out = conv.messages, []
    # System messages join the top-level `system`; results travel in user messages; consecutive
    # same-role messages merge into one turn [SDK docstring message_create_params.py].
    turns: list[tuple[str, list[int]]] = []
    for i, m in (im for im in enumerate(msgs) if im[1].role != "system"):
        role = "assistant" if m.role == "assistant" else "user"
        if turns and turns[-1][0] == role:
            if msgs[turns[-1][1][-1]].role == m.role:
                out.append(
                    MERGED.at("consecutive_same_role", f"messages[{i}]", "anthropic", role=m.role)
                )
            turns[-1][1].append(i)
        else:
            turns.append((role, [i]))
    if turns and turns[0][0] != "user":
        path = f"messages[{turns[0][1][0]}]"
        out.append(FIRST_USER.at("first_message_not_user", path, "anthropic"))
    if not conv.tools and any(isinstance(p, ToolCall | ToolResult) for m in msgs for p in m.parts):
        out.append(NO_TOOLS.at("tools_missing", "tools", "anthropic"))
    exchanges = []
    for (_, turn), (_, nxt) in itertools.zip_longest(turns, turns[1:], fillvalue=("", [])):
        if not (calls := [c for i in turn for c in calls_in(msgs[i], i)]):
            continue
        answers = [r for i in nxt for r in results_in(msgs[i], i)]
        exchanges.append(Exchange(calls, answers, pending=ends_history(msgs, calls[-1][0].index)))
        # The results must open the user turn that answers the calls [DOC handle-tool-calls].
        parts = [(Site(i, j), part) for i in nxt for j, part in enumerate(msgs[i].parts)]
        other = next((s for s, part in parts if not isinstance(part, ToolResult)), None)
        if other and any(isinstance(part, ToolResult) and s > other for s, part in parts):
            out.append(NOT_FIRST.at("text_before_results", other.path, "anthropic", n=len(calls)))
    return out + _report("anthropic", ANTHROPIC, pair(exchanges, msgs))


def _chat_index(conv: Conversation, site: Site) -> int:
    """A part's message position on the OpenAI Chat wire: the system prompt first, then one
    message per canonical message and one ``tool`` message per result [README §3B]."""
    index = int(conv.system is not None)
    for m in conv.messages[: site.index]:
        index += len(m.tool_results) if m.role == "tool" else 1
    head = conv.messages[site.index].parts[: site.part]
    return index + sum(isinstance(p, ToolResult) for p in head)


def _openai_chat(conv: Conversation) -> list[Finding]:
    p = pair(adjacent_exchanges(conv.messages), conv.messages)
    out = _report("openai-chat", OPENAI_CHAT, p)
    for (first, _), (site, r) in p.duplicates:
        positions = {"first": _chat_index(conv, first), "second": _chat_index(conv, site)}
        out.append(
            CHAT_DUPLICATE.at(
                "duplicate_result", site.path, "openai-chat", id=r.call_id, **positions
            )
        )
    return out


def stored_response(conv: Conversation) -> str | None:
    """The ``previous_response_id`` a Responses request continues, if any."""
    mine = (conv.provider_details or {}).get("openai-responses")
    found = mine.get("previous_response_id") if isinstance(mine, dict) else None
    return found if isinstance(found, str) else None


def _openai_responses(conv: Conversation) -> list[Finding]:
    p = pair(adjacent_exchanges(conv.messages), conv.messages)
    if stored_response(conv):
        # The calls answered by outputs that open the input live in the stored response.
        first_call = min(p.exchange_of, default=len(conv.messages))
        p.strays = [r for r in p.strays if r[0].index > first_call]
    return _report("openai-responses", OPENAI_RESPONSES, p)


def _synthetic_id(call: ToolCall) -> bool:
    """The call came without a wire id (Gemini <= 2.5); the gemini decoder invented one and
    the encoder sends the call back without it."""
    mine = (call.provider_details or {}).get("gemini")
    return isinstance(mine, dict) and bool(mine.get("syntheticId"))


def _gemini(conv: Conversation) -> list[Finding]:
    msgs, out = conv.messages, []
    order = [i for i, m in enumerate(msgs) if m.role != "system"]  # system: systemInstruction
    exchanges = []
    for pos, i in enumerate(order):
        if not (calls := calls_in(msgs[i], i)):
            continue
        prev = order[pos - 1] if pos else None
        nxt = order[pos + 1] if pos + 1 < len(order) else None
        if prev is None or msgs[prev].role == "assistant":
            code = "first_message_not_user" if prev is None else "consecutive_same_role"
            out.append(CALL_TURN.at(code, f"messages[{i}]", "gemini"))
        answers = results_in(msgs[nxt], nxt) if nxt is not None and msgs[nxt].role == "tool" else []
        exchanges.append(Exchange(calls, answers, pending=ends_history(msgs, i)))
    p = pair(exchanges, msgs)
    # Gemini counts the responses first; with equal counts a wrong id is what it reports.
    p.missing = [
        c for c in p.missing if len((ex := p.exchange_of[c[0].index]).answers) < len(ex.calls)
    ]
    out += _report("gemini", GEMINI, p)
    for _, (site, r) in p.duplicates:
        ex = next(ex for ex in exchanges if (site, r) in ex.answers)
        text = GEMINI_COUNT if len(ex.answers) > len(ex.calls) else GEMINI_ID_MISMATCH
        out.append(
            GEMINI_DUPLICATE.at("duplicate_result", site.path, "gemini", id=r.call_id, text=text)
        )
    for ex in p.reordered:
        # Calls without a wire id pair by name and order: swapping the results of two such
        # same-name calls swaps their meaning.
        positions: dict[str, list[int]] = {}
        for _, r in ex.answers:
            k = next((k for k, (_, c) in enumerate(ex.calls) if c.id == r.call_id), None)
            if k is not None and _synthetic_id(ex.calls[k][1]):
                positions.setdefault(ex.calls[k][1].name, []).append(k)
        names = ", ".join(n for n, ks in positions.items() if ks != sorted(ks))
        rule = GEMINI_MISPAIRED if names else GEMINI_REORDERED
        out.append(rule.at("results_reordered", _answers_path(ex), "gemini", names=names))
    return out


def _mcp(conv: Conversation) -> list[Finding]:
    msgs, out = conv.messages, []
    names = {t.name for t in conv.tools}
    # Each tools/call is its own request: a result may come anywhere after its call.
    exchanges = [
        Exchange(calls, [], pending=ends_history(msgs, i))
        for i, m in enumerate(msgs)
        if (calls := calls_in(m, i))
    ]
    for site, c in (c for ex in exchanges for c in ex.calls):
        if names and c.name not in names:
            out.append(MCP_UNKNOWN.at("unknown_tool", site.path, "mcp", name=c.name))
    return out + _report("mcp", MCP, pair(exchanges, msgs))


CHECKS: dict[str, Callable[[Conversation], list[Finding]]] = {
    "anthropic": _anthropic,
    "openai-chat": _openai_chat,
    "openai-responses": _openai_responses,
    "gemini": _gemini,
    "mcp": _mcp,
}
