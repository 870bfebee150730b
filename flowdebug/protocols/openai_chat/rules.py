"""What OpenAI Chat Completions rejects in a history and in tool declarations, with the API's
own texts: the linter's rules for this vendor (carried by its facts as ``lint``).

One ``tool`` message per result, directly after the assistant message with the calls. The
tool rules (description length, strict mode) hold for OpenAI Responses too, which reuses them.
"""

from __future__ import annotations

from collections.abc import Callable

from flowdebug.lint.base.findings import Finding, Rule
from flowdebug.lint.base.pairing import Rules, Site, adjacent_exchanges, pair, report
from flowdebug.lint.base.schema_walk import as_dict, as_list, is_object, tool_path, walk
from flowdebug.model import Conversation, Tool, ToolResult
from flowdebug.protocols.facts import LintRules

PROTOCOL = "openai-chat"

# The API's refusals [3P: BerriAI/litellm#10083, sdcb/chats#132, agno#5116]; "preceeding" is
# the API's own spelling.
MISSING = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
UNEXPECTED = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'."
)
DUPLICATE_RESULT = (
    "Invalid parameter: Duplicate value for 'tool_call_id' of '{id}', in messages[{first}] and "
    "messages[{second}]."
)

PAIRING: Rules = {
    "missing": Rule(
        "error", "call {id} has no tool message right after its assistant message", MISSING
    ),
    "late": Rule(
        "error",
        "the result of call {id} ({call}) does not directly follow its assistant message",
        MISSING,
    ),
    "unexpected": Rule(
        "error",
        "tool message for {id!r} answers no call of the preceding assistant message",
        UNEXPECTED,
    ),
    "reordered": Rule(
        "info",
        "results come in a different order than their calls: accepted, OpenAI Chat pairs "
        "tool messages by tool_call_id",
    ),
}  # "duplicate" is reported by history: its text names wire positions.
PAIRING["stray"] = PAIRING["unexpected"]
DUPLICATE = Rule("error", "a second tool message for call {id}", DUPLICATE_RESULT)


def _wire_index(conv: Conversation, site: Site) -> int:
    """A part's message position on the wire: the system prompt first, then one message per
    canonical message and one ``tool`` message per result [README §3B]."""
    index = int(conv.system is not None)
    for m in conv.messages[: site.index]:
        index += len(m.tool_results) if m.role == "tool" else 1
    head = conv.messages[site.index].parts[: site.part]
    return index + sum(isinstance(p, ToolResult) for p in head)


def history(conv: Conversation) -> list[Finding]:
    """What OpenAI Chat refuses in ``conv``'s message history."""
    p = pair(adjacent_exchanges(conv.messages), conv.messages)
    out = report(PROTOCOL, PAIRING, p)
    for (first, _), (site, r) in p.duplicates:
        positions = {"first": _wire_index(conv, first), "second": _wire_index(conv, site)}
        out.append(DUPLICATE.at("duplicate_result", site.path, PROTOCOL, id=r.call_id, **positions))
    return out


DESCRIPTION_LIMIT = 1024  # "string too long. Expected … maximum length 1024" [3P 5ire#33]
# Request validation texts [3P: brekkylab/ailoy#109, Vortiago/mcp-azure-devops#30, 5ire#33].
TOO_LONG_TEXT = (
    "Invalid '{where}': string too long. Expected a string with maximum length {limit}, but "
    "got a string with length {length} instead."
)
TOO_LONG = Rule(
    "error", "the description has {length} characters, more than {limit}", TOO_LONG_TEXT
)
# Strict mode: composition and conditional keywords are "not permitted" [DOC structured
# outputs "supported schemas"; reference README §3B]; `default` too [3P zenn.dev scrap].
STRICT_UNSUPPORTED = frozenset({
    "allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas",
    "patternProperties", "default",
})  # fmt: skip
# OpenAI names the schema node as a Python tuple of keys: context=('properties', 'unit').
_IN_CONTEXT = "Invalid schema for function '{tool}': In context={context}, "
STRICT_OPEN = Rule(
    "error",
    "strict mode needs 'additionalProperties': false on every object",
    _IN_CONTEXT + "'additionalProperties' is required to be supplied and to be false.",
)
STRICT_REQUIRED = Rule(
    "error",
    "strict mode needs every property in 'required' ({key!r} is not; make it nullable instead)",
    _IN_CONTEXT + "'required' is required to be supplied and to be an array including every "
    "key in properties. Missing '{key}'.",
)
# Strict or not, an array without an item schema is refused [3P: the 400 quoted in
# github.com issues of odoo MCP servers, Together's and Copilot's CAPI: "array schema missing
# items"].
ARRAY_ITEMS = Rule(
    "error",
    "an array needs 'items' (the schema of its elements)",
    _IN_CONTEXT + "array schema missing items.",
)
STRICT_KEYWORD = Rule(
    "error", "strict mode does not support {key!r}", _IN_CONTEXT + "'{key}' is not permitted."
)


def tool_rules(protocol: str, declaration: str) -> Callable[[int, Tool], list[Finding]]:
    """The OpenAI tool rules for ``protocol``, whose wire keeps declaration ``i`` at
    ``declaration.format(i=i)`` (the path its refusals name)."""

    def check(i: int, tool: Tool) -> list[Finding]:
        out: list[Finding] = []
        description = tool.description or ""
        if len(description) > DESCRIPTION_LIMIT:
            out.append(
                TOO_LONG.at(
                    "description_too_long",
                    f"tools[{i}].description",
                    protocol,
                    where=f"{declaration.format(i=i)}.description",
                    limit=DESCRIPTION_LIMIT,
                    length=len(description),
                )
            )
        for path, node in walk(tool.parameters):
            if node.get("type") == "array" and "items" not in node:
                at = {"tool": tool.name, "context": repr(path)}
                where = tool_path(i, path)
                out.append(ARRAY_ITEMS.at("array_items_missing", where, protocol, **at))
        if not tool.strict:
            return out
        # Strict mode: every object closed, every property required (optional ⇒ nullable) and
        # no composition [reference openai-chat.variant.strict_tool.json].
        for path, node in walk(tool.parameters):
            at = {"tool": tool.name, "context": repr(path)}
            if is_object(node):
                if node.get("additionalProperties") is not False:
                    where = tool_path(i, path)
                    out.append(
                        STRICT_OPEN.at("strict_additional_properties", where, protocol, **at)
                    )
                required = as_list(node.get("required"))
                for key in (k for k in as_dict(node.get("properties")) if k not in required):
                    where = tool_path(i, (*path, "properties", key))
                    out.append(
                        STRICT_REQUIRED.at("strict_required", where, protocol, key=key, **at)
                    )
            for key in sorted(STRICT_UNSUPPORTED & node.keys()):
                where = tool_path(i, (*path, key))
                out.append(
                    STRICT_KEYWORD.at("strict_keyword_unsupported", where, protocol, key=key, **at)
                )
        return out

    return check


_SENT = "flowdebug's encoder sends {sent!r}"
_AGAIN = "call id {id} is already used at {first}"
LINT = LintRules(
    history=history,
    tool=tool_rules(PROTOCOL, "tools[{i}].function"),
    empty_id=Rule("warning", f"an empty id pairs nothing; {_SENT} for call and result"),
    duplicate_id=Rule("error", f"{_AGAIN}: tool messages cannot say which call they answer"),
)
