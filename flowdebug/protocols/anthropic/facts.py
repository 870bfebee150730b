"""Anthropic Messages, as the rest of flowdebug needs to know it."""

from __future__ import annotations

import re

from flowdebug.protocols.anthropic import errors
from flowdebug.protocols.anthropic.rules import LINT
from flowdebug.protocols.anthropic.stream import stream_arguments
from flowdebug.protocols.facts import BareTool, Facts, Fields, Snippet, Terms, TokenCount, kept

SNIPPET = Snippet(
    "anthropic",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "import anthropic",
    """client = anthropic.Anthropic(api_key=os.environ["ANTHROPIC_API_KEY"])
response = client.messages.create(**REQUEST)
print(response.model_dump_json(indent=2, exclude_none=True))
""",
)

# One tool of a request's ``tools`` list, pasted alone: ``{name, description, input_schema}``.
BARE_TOOL = BareTool(
    title="Anthropic tool",
    keys='"input_schema"',
    recognise=lambda tool: "input_schema" in tool,
    request=lambda tools: {"model": "-", "max_tokens": 1, "messages": [], "tools": tools},
)

# Anthropic's documented server tools (the tool reference at platform.claude.com, read
# 2026-05), by type without its _YYYYMMDD version: Anthropic runs them, so their declarations
# and blocks ride in provider_details. Every other typed tool is a client tool whose schema
# Anthropic defines and the application runs (memory_20250818, bash_..., text_editor_...,
# computer_..., and any new type), so a new client tool is never dropped.
SERVER_TOOLS = frozenset(
    {"web_search", "web_fetch", "code_execution", "bash_code_execution",
     "text_editor_code_execution", "advisor", "tool_search_tool_regex",
     "tool_search_tool_bm25", "mcp_toolset"}
)  # fmt: skip

# POST /v1/messages/count_tokens takes the request's model, messages, system, tools,
# tool_choice and thinking (no max_tokens, no stream) and answers {"input_tokens": n}.
TOKEN_COUNT = TokenCount(
    endpoint="POST /v1/messages/count_tokens",
    docs="https://platform.claude.com/docs/en/api/messages/count_tokens",
    route=re.compile(r"^(?:/v1)?/messages/count_tokens$"),
    body=lambda body, model: {
        **kept(body, ("messages", "system", "tools", "tool_choice", "thinking")),
        "model": model,
    },
    answer=lambda n: {"input_tokens": n},
    read=lambda answer: int(answer["input_tokens"]),
    sdk_method="messages.count_tokens",
)

FACTS = Facts(
    name="anthropic",
    title="Anthropic Messages",
    short="Anthropic",
    api="Anthropic Messages",
    terms=Terms(
        declare="POST /v1/messages · tools[{n}]",
        tool_call="tool_use {id} {name}",
        continuation="user turn: tool_result ×{n}",
        final_answer="text · stop_reason: end_turn",
        text="text block",
        hosted={"mcp": "mcp_tool_use", "*": "server_tool_use"},
        hosted_result={"mcp": "mcp_tool_result", "*": "{name}_tool_result"},
    ),
    fields=Fields(
        declaration="`tools[]` `{name, description, input_schema}` in POST /v1/messages",
        request="`content[]` blocks `{type: tool_use, id, name, input}`; `stop_reason: tool_use`",
        answer="`content[]` text blocks; `stop_reason: end_turn`",
        execution="runtime-side: each `tool_use.input` is validated and dispatched",
        continuation="one user turn, `tool_result` blocks first: `{tool_use_id, content, "
        "is_error}`",
    ),
    # tool names and tool_use ids: ^[a-zA-Z0-9_-]{1,64}$
    name_rule=re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    name_limit=64,
    id_rule=re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    endpoint="POST /v1/messages",
    base_url="https://api.anthropic.com",
    default_model="claude-sonnet-4-6",
    model_ids=re.compile(r"^claude-"),
    key_env=("ANTHROPIC_API_KEY",),
    history_key="messages",
    bare_tools=(BARE_TOOL,),
    named_events=True,
    route=re.compile(r"^(?:/v1)?/messages$"),
    route_help=("POST /v1/messages",),
    errors=errors,
    snippet=SNIPPET,
    # the API's pydantic message for a name it refuses (length included)
    name_errors=(
        "tools.{i}.custom.name: String should match pattern '{pattern}'",
        "tools.{i}.custom.name: String should match pattern '{pattern}'",
    ),
    lint=LINT,
    stream_arguments=stream_arguments,
    sdk="anthropic",
    sdk_sender="flowdebug.players.live.anthropic",
    sdk_loggers=("anthropic",),
    sdk_headers_env="ANTHROPIC_CUSTOM_HEADERS",
    sdk_method="messages.create",
    token_count=TOKEN_COUNT,
)
