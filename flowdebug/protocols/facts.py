"""What the rest of flowdebug needs to know about a vendor, declared once in its folder.

Each ``protocols/<vendor>/facts.py`` holds one :class:`Facts`; its codec carries it and the
registry hands it out (``protocols.facts(name)``). Graphs, explanations, the live players, the
emulator, snippets and the tool pages look a vendor up here and never branch on its name.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol


@dataclass(frozen=True)
class Terms:
    """How one vendor names each arrow of the cycle (format strings).

    Fields: ``{n}`` a count, ``{id}`` a call id, ``{name}`` a tool name, ``{i}`` the call's
    position in its turn. ``hosted`` maps a hosted tool's canonical name (``*`` for any other)
    to the wire term of its call, ``hosted_result`` to that of its result.
    """

    declare: str = "model request · {tools}"
    tool_call: str = "call {name} ({id})"
    tool_call_no_id: str | None = None  # used when the call has no wire id
    continuation: str | None = "results ×{n}"  # None: the event's own words
    final_answer: str | None = "final answer"
    text: str = "text block"
    hosted: Mapping[str, str] = field(default_factory=dict)
    hosted_result: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Fields:
    """Which wire fields carry each phase, for the per-phase explanation (Markdown)."""

    declaration: str
    request: str
    answer: str
    execution: str
    continuation: str


@dataclass(frozen=True)
class Snippet:
    """How a script replays a request through the vendor's official SDK
    (``exchange/snippets.py`` writes it): the package, the key and base-URL variables, the
    imports and the lines that build the client and send ``REQUEST``."""

    package: str  # what to pip install
    key_var: str
    base_url_var: str
    imports: str
    call: str
    stdlib: tuple[str, ...] = ("os",)
    model_in_url: bool = False  # the request body names no model: the script sets MODEL


class ErrorShapes(Protocol):
    """A vendor's error answers (its ``errors`` module): what the emulator sends."""

    def error_response(
        self, status: int, model: str, version: str = "v1"
    ) -> tuple[int, Any, dict[str, str]]: ...
    def stream_failure(self) -> tuple[str | None, Any]: ...


@dataclass(frozen=True)
class TurnRules:
    """The history rules of a vendor whose tool results must open the user turn right after
    the turn with the calls (Anthropic's model; Bedrock Converse follows it), each with the
    text the vendor's API answers. The linter checks them for any vendor that declares them."""

    missing: str  # fields: {ids}, {n} (the answering message's index on the wire)
    unexpected: str  # {id}, {n}
    no_tools: str
    first_user: str
    alternate: str  # two turns of one role in a row
    # Text before the results in the answering turn: {n} the turn's wire index, {k} the calls.
    # A warning where only some of the vendor's models refuse it.
    not_first: str | None = None
    not_first_level: Literal["error", "warning"] = "error"


@dataclass(frozen=True)
class Facts:
    """One vendor protocol, as the code outside its codec needs to know it."""

    name: str  # CLI spelling
    title: str  # what the UI shows: "Anthropic Messages"
    short: str  # a chip: "Anthropic"
    api: str  # the API, in messages: "Gemini generateContent"
    terms: Terms
    fields: Fields
    # Tool names and call ids the vendor accepts, and the longest name.
    name_rule: re.Pattern[str]
    name_limit: int
    id_rule: re.Pattern[str]
    kind: Literal["model", "tool"] = "model"  # MCP is the runtime's protocol with a tool
    endpoint: str | None = None  # "POST /v1/messages"
    base_url: str | None = None  # where the vendor's SDK sends requests by default
    default_model: str | None = None
    key_env: tuple[str, ...] = ()  # environment variables holding an API key
    history_key: str | None = None  # where a request keeps the message history
    # Where a request keeps its tool list, and one declaration inside an entry of it.
    tools_path: tuple[str, ...] = ("tools",)
    declaration_path: tuple[str | int, ...] = ()
    tool_title: str = "tool"  # one bare tool declaration in this vendor's spelling
    # Streaming: whether each SSE event has an ``event:`` line naming its type; and how the
    # stream is framed on the wire (server-sent events, or AWS event-stream binary frames
    # typed by their ``:event-type`` header, the event object's one key).
    named_events: bool = False
    stream_framing: Literal["sse", "event-stream"] = "sse"
    stream_end: str | None = None  # a last SSE data line that is no JSON (``[DONE]``)
    # The response's main field: the emulator's wrong-shape fault gives it the wrong type.
    main_field: str = "content"
    # The emulator's route: a regular expression on the request path (None: not emulated).
    route: re.Pattern[str] | None = None
    route_help: tuple[str, ...] = ()
    # Characters allowed when a name or id must be rewritten (see base.safe_name).
    name_chars: str = "_-"
    id_chars: str = "_-"
    turn_rules: TurnRules | None = None
    # The API's answer to a tool name it refuses: (pattern broken, too long); fields {name},
    # {i} (the tool's index), {i1} (counted from 1), {limit}.
    name_errors: tuple[str, str] | None = None
    errors: ErrorShapes | None = None  # the vendor's error bodies (the emulator sends them)
    snippet: Snippet | None = None  # a replay script through the vendor's SDK


_KNOWN: dict[str, Facts] = {}


def register(facts: Facts) -> Facts:
    """Declare a vendor (its ``facts.py`` does, once): its name and id rules then apply."""
    _KNOWN[facts.name] = facts
    return facts


def known(name: str) -> Facts:
    """The facts of the vendor called ``name`` (KeyError for one never declared)."""
    return _KNOWN[name]
