"""What Gemini generateContent rejects in a history and in tool declarations, with the API's
and the SDK's own texts: the linter's rules for this vendor (carried by its facts as ``lint``).

The very next content holds one functionResponse per functionCall; they pair by id (by name
and order for calls that came without a wire id).
"""

from __future__ import annotations

from flowdebug.lint.base.codes import FindingCode
from flowdebug.lint.base.findings import Finding, Rule
from flowdebug.lint.base.pairing import (
    Exchange,
    Rules,
    answers_path,
    ends_history,
    pair,
    parts_of,
    report,
)
from flowdebug.lint.base.schema_walk import as_list, tool_path, walk
from flowdebug.model import Conversation, Tool, ToolCall
from flowdebug.protocols.base import known
from flowdebug.protocols.facts import LintRules

PROTOCOL = "gemini"

# The API's refusals [3P: google-gemini/gemini-cli#4217, #11814, #26486; langchain#27799;
# CLIProxyAPI#5199].
COUNT = (
    "Please ensure that the number of function response parts is equal to the number of "
    "function call parts of the function call turn."
)
RESPONSE_TURN = (
    "Please ensure that function response turn comes immediately after a function call turn."
)
CALL_TURN_TEXT = (
    "Please ensure that function call turn comes immediately after a user turn or after a "
    "function response turn."
)
ID_MISMATCH = "functionResponse.id does not match functionCall.id"

PAIRING: Rules = {
    # Reported only when a turn has fewer responses than calls (see history).
    "missing": Rule("error", "call {id} has no functionResponse in the next turn", COUNT),
    "late": Rule(
        "error",
        "the response to call {id} ({call}) is not in the turn right after the call",
        RESPONSE_TURN,
    ),
    "unexpected": Rule(
        "error",
        "functionResponse id {id!r} matches no functionCall of the previous turn",
        ID_MISMATCH,
    ),
    "stray": Rule("error", "functionResponse {id!r} follows no function call turn", RESPONSE_TURN),
}  # "duplicate" and "reordered" depend on counts and ids: see history.
CALL_TURN = Rule(
    "error",
    "a function call turn must follow a user turn or a function response turn",
    CALL_TURN_TEXT,
)
DUPLICATE = Rule("error", "a second functionResponse for call {id}", "{text}")
MISPAIRED = Rule(
    "warning",
    "the {names} calls carry no wire id, so Gemini pairs their responses by name and order: "
    "reordered, they are mispaired",
)
REORDERED = Rule(
    "info",
    "results come in a different order than their calls: accepted, Gemini pairs "
    "functionResponse to functionCall by id",
)


def _synthetic_id(call: ToolCall) -> bool:
    """The call came without a wire id (Gemini <= 2.5); the decoder invented one and the
    encoder sends the call back without it."""
    mine = (call.provider_details or {}).get(PROTOCOL)
    return isinstance(mine, dict) and bool(mine.get("syntheticId"))


def history(conv: Conversation) -> list[Finding]:
    """What Gemini refuses in ``conv``'s contents."""
    msgs, out = conv.messages, []
    order = [i for i, m in enumerate(msgs) if m.role != "system"]  # system: systemInstruction
    exchanges, parts = [], parts_of(msgs)
    for pos, i in enumerate(order):
        if not (calls := parts[i][0]):
            continue
        prev = order[pos - 1] if pos else None
        nxt = order[pos + 1] if pos + 1 < len(order) else None
        if prev is None or msgs[prev].role == "assistant":
            code: FindingCode = (
                "first_message_not_user" if prev is None else "consecutive_same_role"
            )
            out.append(CALL_TURN.at(code, f"messages[{i}]", PROTOCOL))
        answers = parts[nxt][1] if nxt is not None and msgs[nxt].role == "tool" else []
        exchanges.append(Exchange(calls, answers, pending=ends_history(msgs, i)))
    p = pair(exchanges, msgs)
    # Gemini counts the responses first; with equal counts a wrong id is what it reports.
    p.missing = [
        c for c in p.missing if len((ex := p.exchange_of[c[0].index]).answers) < len(ex.calls)
    ]
    out += report(PROTOCOL, PAIRING, p)
    for _, (site, r) in p.duplicates:
        ex = next(ex for ex in exchanges if (site, r) in ex.answers)
        text = COUNT if len(ex.answers) > len(ex.calls) else ID_MISMATCH
        out.append(DUPLICATE.at("duplicate_result", site.path, PROTOCOL, id=r.call_id, text=text))
    for ex in p.reordered:
        # Calls without a wire id pair by name and order: swapping the results of two such
        # same-name calls swaps their meaning.
        positions: dict[str, list[int]] = {}
        for _, r in ex.answers:
            k = next((k for k, (_, c) in enumerate(ex.calls) if c.id == r.call_id), None)
            if k is not None and _synthetic_id(ex.calls[k][1]):
                positions.setdefault(ex.calls[k][1].name, []).append(k)
        names = ", ".join(n for n, ks in positions.items() if ks != sorted(ks))
        rule = MISPAIRED if names else REORDERED
        out.append(rule.at("results_reordered", answers_path(ex), PROTOCOL, names=names))
    return out


NAME_TEXT = (
    "Invalid function name. Must start with a letter or an underscore. Must be alphameric "
    "(a-z, A-Z, 0-9), underscores (_), dots (.) or dashes (-), with a maximum length of 64."
)  # [3P google-gemini/gemini-cli#2966]
RISKY = Rule(
    "warning",
    "the SDK accepts {name!r} (':' allowed, up to 128 characters) but the API's own error text "
    "allows neither ':' nor more than 64 characters",
    NAME_TEXT,
)


def name(i: int, tool: Tool) -> list[Finding] | None:
    """A name the SDK takes but the API's own text refuses; else the generic name rule."""
    n = tool.name
    if known(PROTOCOL).name_rule.match(n) and (len(n) > 64 or ":" in n):
        return [RISKY.at("tool_name_risky", f"tools[{i}].name", PROTOCOL, name=n)]
    return None


# What Gemini `parameters` takes: the SDK's Schema model (extra="forbid"), camelCase aliases and
# snake_case field names [google-genai 3.4 types.Schema].
SCHEMA_KEYS = frozenset({
    "additionalProperties", "anyOf", "default", "defs", "description", "enum", "example",
    "format", "items", "maxItems", "maxLength", "maxProperties", "maximum", "minItems",
    "minLength", "minProperties", "minimum", "nullable", "pattern", "properties",
    "propertyOrdering", "ref", "required", "title", "type", "additional_properties", "any_of",
    "max_items", "max_length", "max_properties", "min_items", "min_length", "min_properties",
    "property_ordering",
})  # fmt: skip
KEYWORD = Rule(
    "info",
    "Gemini `parameters` {problem}: use parametersJsonSchema (flowdebug's encoder does)",
    "{text}",
)


def tool(i: int, t: Tool) -> list[Finding]:
    """Gemini ``parameters`` is an OpenAPI subset; the SDK refuses the rest client-side
    [RUN: google-genai 3.4 FunctionDeclaration(parameters=…)] while ``parametersJsonSchema``
    takes any JSON Schema [reference gemini.variant.tool_parametersJsonSchema.json]. Info only:
    the gemini encoder already sends such schemas as ``parametersJsonSchema``."""
    out: list[Finding] = []
    for path, node in walk(t.parameters):
        sdk = ".".join(str(p) for p in ("parameters", *path))
        problems = [
            (key, f"rejects {key!r}", f"{sdk}.{key}: Extra inputs are not permitted")
            for key in sorted(node.keys() - SCHEMA_KEYS)
        ]
        if isinstance(node.get("type"), list):
            text = "'list' object has no attribute 'upper'"
            problems.append(("type", "takes one type, not a list (use nullable)", text))
        bad = [k for k, v in enumerate(as_list(node.get("enum"))) if not isinstance(v, str)]
        if bad:
            text = f"{sdk}.enum.{bad[0]}: Input should be a valid string"
            problems.append(("enum", "takes string enums only", text))
        for key, problem, text in problems:
            where = tool_path(i, (*path, key))
            out.append(
                KEYWORD.at(
                    "schema_keyword_unsupported", where, PROTOCOL, problem=problem, text=text
                )
            )
    return out


_SENT = "flowdebug's encoder sends {sent!r}"
LINT = LintRules(
    history=history,
    name=name,
    tool=tool,
    empty_id=Rule("info", f"no id: {_SENT} (Gemini ids are optional)"),
    duplicate_id=Rule(
        "warning", "call id {id} is already used at {first}: responses pair ambiguously"
    ),
)
