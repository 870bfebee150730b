"""What goes wrong in an MCP exchange: the linter's rules for MCP (carried by its facts).

Every tools/call is its own JSON-RPC request and its result pairs by request id wherever it
comes, so order and place do not matter; an unknown tool gets a JSON-RPC error.
"""

from __future__ import annotations

from flowdebug.lint.base.findings import Finding, Rule
from flowdebug.lint.base.pairing import Exchange, Rules, ends_history, pair, parts_of, report
from flowdebug.model import Conversation, Tool
from flowdebug.protocols.base import known
from flowdebug.protocols.facts import LintRules

PROTOCOL = "mcp"

# The reference server's JSON-RPC error (-32602) for an unknown tool [reference
# mcp.tools_call.response.protocol_error_unknown_tool.json].
UNKNOWN_TOOL_TEXT = "Unknown tool: {name}"
UNKNOWN_TOOL = Rule(
    "error", "the server answers tools/call {name!r} with JSON-RPC error -32602", UNKNOWN_TOOL_TEXT
)
PAIRING: Rules = {
    "missing": Rule(
        "warning",
        "tools/call {id} never gets a result: the client waits until its request times out",
    ),
    "stray": Rule(
        "warning",
        "a result for request id {id!r}, which no pending tools/call used: the client drops it",
    ),
}
NAME = Rule(
    "warning", "tool name {name!r} breaks the MCP naming rule (SEP-986, a SHOULD)", "{text}"
)


def history(conv: Conversation) -> list[Finding]:
    """Calls to undeclared tools, calls never answered, results no call awaits."""
    msgs, out = conv.messages, []
    names = {t.name for t in conv.tools}
    # Each tools/call is its own request: a result may come anywhere after its call.
    exchanges = [
        Exchange(calls, [], pending=ends_history(msgs, i))
        for i, (calls, _) in enumerate(parts_of(msgs))
        if calls
    ]
    for site, c in (c for ex in exchanges for c in ex.calls):
        if names and c.name not in names:
            out.append(UNKNOWN_TOOL.at("unknown_tool", site.path, PROTOCOL, name=c.name))
    return out + report(PROTOCOL, PAIRING, pair(exchanges, msgs))


def name(i: int, tool: Tool) -> list[Finding]:
    """SEP-986's naming rule is a SHOULD: a warning quoting the SDK's own validator, and no
    rewrite (MCP carries any name)."""
    if known(PROTOCOL).name_rule.match(tool.name):
        return []
    # Imported here: the mcp package is slow to import and this rule rarely fires.
    from mcp.shared.tool_name_validation import validate_tool_name

    text = "; ".join(validate_tool_name(tool.name).warnings)
    return [NAME.at("tool_name_invalid", f"tools[{i}].name", PROTOCOL, name=tool.name, text=text)]


LINT = LintRules(
    history=history,
    name=name,
    # JSON-RPC ids "MUST NOT have been previously used by the requestor within the same
    # session" [MCP spec 2025-11-25, basic "Requests"].
    duplicate_id=Rule(
        "error",
        "call id {id} is already used at {first}: a JSON-RPC request id must be unique "
        "in a session",
    ),
)
