"""What OpenAI Responses rejects in a history and in tool declarations, with the API's own
texts: the linter's rules for this vendor (carried by its facts as ``lint``).

A function_call_output pairs with its function_call by ``call_id``; a request that continues a
stored response (``previous_response_id``) may open with outputs whose calls only the stored
response holds.
"""

from __future__ import annotations

from flowdebug.lint.base.findings import Finding, Rule
from flowdebug.lint.base.pairing import Rules, adjacent_exchanges, pair, report
from flowdebug.model import Conversation
from flowdebug.protocols.facts import LintRules
from flowdebug.protocols.openai_chat.rules import tool_rules

PROTOCOL = "openai-responses"

# The API's refusals [3P: OpenAI community thread 1142327, microsoft/vscode#320060,
# router-for-me/CLIProxyAPI commit c8cee6a].
MISSING = "No tool output found for function call {id}."
UNEXPECTED = "No tool call found for function call output with call_id {id}."

PAIRING: Rules = {
    "missing": Rule("error", "function_call {id} has no function_call_output after it", MISSING),
    # Pairing is by call_id, yet input with other items between a function_call and its
    # output has been seen refused this way [3P: ranxianglei/billion-context#766].
    "late": Rule(
        "warning",
        "other input items sit between function_call {id} ({call}) and its output; keep "
        "outputs right after their calls",
        MISSING,
    ),
    "unexpected": Rule(
        "error",
        "function_call_output {id!r} follows no function_call with that call_id",
        UNEXPECTED,
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
PAIRING["stray"] = PAIRING["unexpected"]
STORED = Rule(
    "info",
    "the history continues the stored response {stored} (previous_response_id): only OpenAI "
    "Responses knows the calls that the outputs opening the input answer",
)


def stored_response(conv: Conversation) -> str | None:
    """The ``previous_response_id`` a Responses request continues, if any."""
    mine = (conv.provider_details or {}).get(PROTOCOL)
    found = mine.get("previous_response_id") if isinstance(mine, dict) else None
    return found if isinstance(found, str) else None


def history(conv: Conversation) -> list[Finding]:
    """What OpenAI Responses refuses in ``conv``'s input items."""
    p = pair(adjacent_exchanges(conv.messages), conv.messages)
    if stored_response(conv):
        # The calls answered by outputs that open the input live in the stored response.
        first_call = min(p.exchange_of, default=len(conv.messages))
        p.strays = [r for r in p.strays if r[0].index > first_call]
    return report(PROTOCOL, PAIRING, p)


def notes(conv: Conversation) -> list[Finding]:
    """The history is incomplete without the stored response it continues."""
    if stored := stored_response(conv):
        return [STORED.at("history_incomplete", "provider_details", stored=stored)]
    return []


_SENT = "flowdebug's encoder sends {sent!r}"
_AGAIN = "call id {id} is already used at {first}"
LINT = LintRules(
    history=history,
    notes=notes,
    tool=tool_rules(PROTOCOL, "tools[{i}]"),
    empty_id=Rule("warning", f"an empty call_id pairs nothing; {_SENT} instead"),
    duplicate_id=Rule("warning", f"{_AGAIN}: outputs cannot say which call they answer"),
)
