"""What the rest of flowdebug needs to know about a vendor, declared once in its folder.

Each ``protocols/<vendor>/facts.py`` holds one :class:`Facts`; its codec carries it and the
registry hands it out (``protocols.facts(name)``). Graphs, explanations, the live players, the
emulator, snippets and the tool pages look a vendor up here and never branch on its name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

from flowdebug.lint.base.findings import Finding, Rule
from flowdebug.model import Conversation, Tool


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
class LintRules:
    """The linter's rules for one vendor that are code or rule templates (its ``rules.py``).

    The linter looks them up by protocol name and applies each that is set; a vendor whose
    history rules are plain facts declares :class:`TurnRules` instead of ``history``.
    """

    # What the vendor rejects in a message history.
    history: Callable[[Conversation], list[Finding]] | None = None
    # Findings about data only this vendor reads (a stored response it continues), reported
    # as protocol-neutral whichever vendors are chosen: the conversation itself says so.
    notes: Callable[[Conversation], list[Finding]] | None = None
    # Each tool declaration (its index, the tool), after the rule on its name.
    tool: Callable[[int, Tool], list[Finding]] | None = None
    # The vendor's own check of a tool name; it returns None to leave the name to the generic
    # rule (the name pattern, the rewrite flowdebug's encoder makes, ``name_errors``).
    name: Callable[[int, Tool], list[Finding] | None] | None = None
    duplicate_tool: Rule | None = None  # fields {name}
    empty_id: Rule | None = None  # a call without id; fields {sent}: the id the encoder sends
    duplicate_id: Rule | None = None  # fields {id}, {first} (the first call's path)


class ArgumentSlots(Protocol):
    """Where a vendor's stream reader puts a tool call's argument fragments, one slot per
    call in order (``players.assembly.ArgumentAssembler`` keeps them)."""

    def open(self, key: Hashable) -> int:
        """The slot of the call known by ``key`` (a new one at first sight)."""
        ...

    def is_open(self, key: Hashable) -> bool: ...
    def append(self, key: Hashable, fragment: Any) -> None:
        """Adds a text fragment to the call's arguments (anything else is ignored)."""
        ...

    def __len__(self) -> int: ...


# Writes a stream's events ``(SSE event name or None, data)`` as the wire's frames.
StreamFramer = Callable[[list[tuple[str | None, Any]]], Iterator[bytes]]

# Reads one raw stream event, feeding the argument fragments it carries into the slots.
StreamArguments = Callable[[Any, ArgumentSlots], None]


@dataclass(frozen=True)
class SdkRewrite:
    """A change the vendor's SDK is documented to make to a request body between the codec's
    encoding and the wire (see reference/wire/README.md), so a live call does not flag it.

    It matches a difference of kind ``change`` whose JSON path ``path`` matches (``search``);
    ``same`` also asks both values to be equal once decoded (``base64``: the same bytes).
    """

    change: Literal["added", "removed", "changed", "renamed"]
    path: re.Pattern[str]
    reason: str
    same: Literal["base64"] | None = None


@dataclass(frozen=True)
class BareTool:
    """One tool declaration as pasted alone (from docs, a log, another project) in this
    vendor's spelling, and the smallest request of the vendor that holds a list of them, so
    its codec reads them (``protocols/tools.py``; the Tools page's paste, ``flowdebug lint``).

    Recognisers are tried in registry order, a vendor's own in the order it lists them.
    """

    title: str  # one declaration as the page names it: "Anthropic tool" (a list adds "s list")
    keys: str  # what tells it apart, for the paste error: '"input_schema"'
    recognise: Callable[[dict[str, Any]], bool]
    request: Callable[[list[Any]], dict[str, Any]]  # the smallest request holding the list
    inner: str = "$.tools"  # where the list sits in that request


def kept(body: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The entries of ``body`` under ``keys``: a request body cut down to what an endpoint
    that takes fewer fields (a count-tokens endpoint) accepts."""
    return {k: body[k] for k in keys if k in body}


@dataclass(frozen=True)
class TokenCount:
    """A vendor's endpoint that counts a request's input tokens without running the model:
    the live player sends to it (``players/live/counting.py``), the emulator answers it.

    ``body`` turns one of the vendor's request bodies, and the model, into the endpoint's
    body; ``answer`` is the endpoint's answer holding a count, ``read`` the count in one.
    ``sdk_method`` is the SDK client's method (dotted), where the SDK has one that carries
    tools (None: the sender posts the body itself).
    """

    endpoint: str  # "POST /v1/messages/count_tokens", as the vendor's reference names it
    docs: str  # the reference page it was checked against
    route: re.Pattern[str]  # the emulator's route (a ``model`` group when the path names it)
    body: Callable[[dict[str, Any], str], dict[str, Any]]
    answer: Callable[[int], dict[str, Any]]
    read: Callable[[Any], int]
    sdk_method: str | None = None


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
    # The model ids that are this vendor's: an id it does not claim is never sent to it
    # (protocols/models.py), so an imported gpt-4o does not become an Anthropic model.
    model_ids: re.Pattern[str] | None = None
    key_env: tuple[str, ...] = ()  # environment variables holding an API key
    # What the app's API-key field takes, where that is more than one plain key (Markdown).
    key_help: str | None = None
    history_key: str | None = None  # where a request keeps the message history
    # Where a request keeps its tool list, and one declaration inside an entry of it.
    tools_path: tuple[str, ...] = ("tools",)
    declaration_path: tuple[str | int, ...] = ()
    bare_tools: tuple[BareTool, ...] = ()  # bare declarations in this vendor's spelling
    # Streaming: whether each SSE event has an ``event:`` line naming its type; and how the
    # stream is framed on the wire (server-sent events, or AWS event-stream binary frames
    # typed by their ``:event-type`` header, the event object's one key).
    named_events: bool = False
    stream_framing: Literal["sse", "event-stream"] = "sse"
    stream_end: str | None = None  # a last SSE data line that is no JSON (``[DONE]``)
    # A stream framed otherwise than SSE: the framer turning the emulator's ``(event name,
    # data)`` pairs into the wire's bytes (one chunk a frame), and the content type it sends.
    stream_frames: StreamFramer | None = None
    # ... and the reader of such a stream's whole bytes back into its events (a recording).
    stream_unframe: Callable[[bytes], list[Any]] | None = None
    stream_content_type: str = "text/event-stream"
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
    lint: LintRules = LintRules()  # the linter's rules that are code (``<vendor>/rules.py``)
    stream_arguments: StreamArguments | None = None  # tool-call arguments growing in a stream
    # The live player: the official Python SDK it sends through (None: no live player), the
    # module whose ``send`` sends through it (named, not imported: players/ is a floor above
    # protocols/), the client method it calls (dotted, from the client), the rewrites that SDK
    # makes, and the names of the SDK's loggers (``flowdebug -vv`` shows them).
    sdk: str | None = None
    sdk_sender: str | None = None
    sdk_loggers: tuple[str, ...] = ()
    sdk_method: str | None = None
    sdk_rewrites: tuple[SdkRewrite, ...] = ()
    # The variable whose "Name: value" lines the SDK adds to every request's headers by itself.
    sdk_headers_env: str | None = None
    # Local model servers (Ollama, vLLM, LM Studio, llama.cpp) speak this protocol too: the
    # live player's first choice (protocols.default_protocol(local=True)).
    local_servers: bool = False
    # Training files the vendor documents, by export format name: a function from a
    # conversation to one example and what it cannot hold (a ``Converted``; exchange/training).
    training_formats: Mapping[str, Callable[[Conversation], Any]] = field(default_factory=dict)
    # The endpoint counting a request's input tokens (None: the vendor documents none).
    token_count: TokenCount | None = None
    # The tiktoken encoding of the vendor's current models: the offline estimate uses it when
    # tiktoken and its cached encoding file are there (protocols/token_estimate.py).
    tokenizer: str | None = None
    # Where tiktoken downloads that encoding's file: its cache names the file by the SHA-1 of
    # this address, so flowdebug can tell whether counting would reach the network.
    tokenizer_file: str | None = None

    @property
    def base_path(self) -> str:
        """The path the SDK's default ``base_url`` ends in (OpenAI's ``/v1``; "" for none), so
        a server standing in for the vendor (the emulator) is given to the SDK with it."""
        return urlsplit(self.base_url or "").path.rstrip("/")
