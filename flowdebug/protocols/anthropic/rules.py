"""What Anthropic Messages rejects in a history and in tool declarations, with the API's own
texts: the linter's rules for this vendor (carried by its facts as ``lint``).

Consecutive same-role messages merge into one turn; the user turn right after the tool_use
turn must *begin* with one tool_result per tool_use, in any order.
"""

from __future__ import annotations

from dataclasses import replace

from flowdebug.lint.base.findings import Finding, Rule
from flowdebug.lint.base.pairing import Rules, merged_turns, pair, report
from flowdebug.lint.base.schema_walk import is_object, tool_path, walk
from flowdebug.model import Conversation, Tool, ToolCall, ToolResult
from flowdebug.protocols.facts import LintRules

PROTOCOL = "anthropic"

# The API's refusals [3P: API errors quoted in anthropics/claude-code#5060, #13460, #37, gitea
# mirror of claude-code "duplicate-tool-result-bug"; lobehub#1601; portkey error library 10488;
# claude-agent-sdk-python#522]. A wire-location prefix (``messages.4: …``) is left out: a
# finding's path already points at the canonical part.
MISSING = (
    "`tool_use` ids were found without `tool_result` blocks immediately after: {ids}. Each "
    "`tool_use` block must have a corresponding `tool_result` block in the next message."
)
UNEXPECTED = (
    "unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block "
    "must have a corresponding `tool_use` block in the previous message."
)
NOT_FIRST_TEXT = (
    "Did not find {n} `tool_result` block(s) at the beginning of this message. Messages "
    "following `tool_use` blocks must begin with a matching number of `tool_result` blocks."
)
DUPLICATE_ID_TEXT = "`tool_use` ids must be unique"
DUPLICATE_RESULT = (
    "each tool_use must have a single result. Found multiple `tool_result` blocks with id: {id}"
)
ID_PATTERN = "String should match pattern '^[a-zA-Z0-9_-]+$'"
FIRST_USER_TEXT = 'messages: first message must use the "user" role'
NO_TOOLS_TEXT = "Requests which include `tool_use` or `tool_result` blocks must define tools."

PAIRING: Rules = {
    "missing": Rule("error", "call {id} has no tool_result in the next user turn", MISSING),
    "late": Rule(
        "error",
        "the result of call {id} ({call}) is not in the user turn right after the call",
        MISSING,
    ),
    "unexpected": Rule(
        "error", "result for {id!r} answers no tool_use of the previous assistant turn", UNEXPECTED
    ),
    "duplicate": Rule("error", "a second tool_result for call {id}", DUPLICATE_RESULT),
    "reordered": Rule(
        "info",
        "results come in a different order than their calls: accepted, Anthropic pairs "
        "tool_result to tool_use by id",
    ),
}
PAIRING["stray"] = PAIRING["unexpected"]

FIRST_USER = Rule("error", "the first message must be a user message", FIRST_USER_TEXT)
MERGED = Rule("info", "two {role} messages in a row: Anthropic merges them into one turn")
NO_TOOLS = Rule(
    "error", "the history holds tool calls or results but declares no tool", NO_TOOLS_TEXT
)
NOT_FIRST = Rule(
    "error",
    "content comes before the tool results in the user turn that answers the calls: "
    "tool_result blocks must come first",
    NOT_FIRST_TEXT,
)


def history(conv: Conversation) -> list[Finding]:
    """What Anthropic refuses in ``conv``'s message history."""
    msgs, out = conv.messages, []
    # System messages join the top-level `system`; results travel in user messages; consecutive
    # same-role messages merge into one turn [SDK docstring message_create_params.py].
    t = merged_turns(msgs)
    for i in t.repeated:
        out.append(
            MERGED.at("consecutive_same_role", f"messages[{i}]", PROTOCOL, role=msgs[i].role)
        )
    if t.turns and t.turns[0][0] != "user":
        path = f"messages[{t.turns[0][1][0]}]"
        out.append(FIRST_USER.at("first_message_not_user", path, PROTOCOL))
    if not conv.tools and any(isinstance(p, ToolCall | ToolResult) for m in msgs for p in m.parts):
        out.append(NO_TOOLS.at("tools_missing", "tools", PROTOCOL))
    # The results must open the user turn that answers the calls [DOC handle-tool-calls].
    for site, calls, _ in t.results_not_first:
        out.append(NOT_FIRST.at("text_before_results", site.path, PROTOCOL, n=len(calls)))
    return out + report(PROTOCOL, PAIRING, pair(t.exchanges, msgs))


# Strict tools: size and range constraints are unsupported (minItems above 1 too)
# [DOC structured-outputs "JSON Schema limitations", via reference README §3A; 3P req_llm#302
# for the wording].
STRICT_UNSUPPORTED = frozenset({
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength",
    "maxLength", "maxItems", "minProperties", "maxProperties",
})  # fmt: skip
STRICT_OPEN = Rule("error", "strict tools need 'additionalProperties': false on every object")
STRICT_KEYWORD = Rule(
    "error",
    "strict tools do not support {key!r}",
    "For '{type}' type, property '{key}' is not supported",
)


def tool(i: int, t: Tool) -> list[Finding]:
    """A strict tool's schema: closed objects, no size or range constraints."""
    if not t.strict:
        return []
    out: list[Finding] = []
    for path, node in walk(t.parameters):
        if is_object(node) and node.get("additionalProperties") is not False:
            out.append(STRICT_OPEN.at("strict_additional_properties", tool_path(i, path), PROTOCOL))
        unsupported = STRICT_UNSUPPORTED & node.keys()
        if isinstance(node.get("minItems"), int) and node["minItems"] > 1:
            unsupported |= {"minItems"}
        # The refusal names the node's type; without one, there is no text to quote.
        typ = node.get("type")
        rule = STRICT_KEYWORD if isinstance(typ, str) else replace(STRICT_KEYWORD, vendor=None)
        for key in sorted(unsupported):
            where = tool_path(i, (*path, key))
            out.append(rule.at("strict_keyword_unsupported", where, PROTOCOL, key=key, type=typ))
    return out


LINT = LintRules(
    history=history,
    tool=tool,
    duplicate_tool=Rule(
        "error", "tool {name!r} is declared twice", "tools: Tool names must be unique."
    ),  # [3P claude-code#10687]
    empty_id=Rule(
        "warning", "an empty id is refused; flowdebug's encoder sends {sent!r} instead", ID_PATTERN
    ),
    duplicate_id=Rule("error", "call id {id} is already used at {first}", DUPLICATE_ID_TEXT),
)
