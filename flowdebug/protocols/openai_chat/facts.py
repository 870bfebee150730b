"""OpenAI Chat Completions, as the rest of flowdebug needs to know it."""

from __future__ import annotations

import re

from flowdebug.protocols.facts import BareTool, Facts, Fields, Snippet, Terms
from flowdebug.protocols.openai_chat import errors
from flowdebug.protocols.openai_chat.finetune import FORMAT, finetune_example
from flowdebug.protocols.openai_chat.rules import LINT
from flowdebug.protocols.openai_chat.stream import stream_arguments

SNIPPET = Snippet(
    "openai",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "import openai",
    """client = openai.OpenAI(api_key=os.environ["OPENAI_API_KEY"])
response = client.chat.completions.create(**REQUEST)
print(response.model_dump_json(indent=2, exclude_none=True))
""",
)

# ``{"type": "function", "function": {name, description, parameters}}``.
BARE_TOOL = BareTool(
    title="OpenAI Chat tool",
    keys='"type": "function" with "function"',
    recognise=lambda tool: tool.get("type") == "function" and "function" in tool,
    request=lambda tools: {"model": "-", "messages": [], "tools": tools},
)

FACTS = Facts(
    name="openai-chat",
    title="OpenAI Chat Completions",
    short="OpenAI Chat",
    api="OpenAI Chat Completions",
    terms=Terms(
        declare="POST /chat/completions · tools[{n}]",
        tool_call="tool_calls[{i}] {id} {name}",
        continuation="role:tool messages ×{n}",
        final_answer="content · finish_reason: stop",
        text="content (with tool_calls)",
    ),
    fields=Fields(
        declaration="`tools[]` `{type: function, function: {name, description, parameters}}`",
        request="`message.tool_calls[]` `{id, function: {name, arguments}}` — arguments is a "
        "JSON *string*; `finish_reason: tool_calls`",
        answer="`message.content` text, no `tool_calls`; `finish_reason: stop`",
        execution="runtime-side: `arguments` is parsed (it may be invalid JSON), validated and "
        "dispatched",
        continuation="one `{role: tool, tool_call_id, content}` message per call (no error "
        'flag: errors travel as `{"error": …}`)',
    ),
    # function names: ^[a-zA-Z0-9_-]{1,64}$; call ids are free strings
    name_rule=re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    name_limit=64,
    id_rule=re.compile(r"^.{1,256}$", re.S),
    endpoint="POST /chat/completions",
    base_url="https://api.openai.com/v1",
    default_model="gpt-4.1",
    tokenizer="o200k_base",  # gpt-4o, gpt-4.1, o-series (tiktoken's model table)
    tokenizer_file="https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    # No count-tokens endpoint: OpenAI's (POST /responses/input_tokens) takes the Responses
    # format only (developers.openai.com/api/docs/guides/token-counting), so token_count stays
    # None and the footprint is the offline estimate.
    # gpt-4o, gpt-4.1-mini, o1, o3-mini, o4-mini, chatgpt-4o-latest, fine-tuned ft:gpt-...
    model_ids=re.compile(r"^(?:ft:)?(?:gpt-|chatgpt-|codex-|computer-use-|o\d(?:$|-))"),
    key_env=("OPENAI_API_KEY",),
    history_key="messages",
    bare_tools=(BARE_TOOL,),
    route=re.compile(r"^(?:/v1)?/chat/completions$"),
    route_help=("POST /v1/chat/completions",),
    errors=errors,
    snippet=SNIPPET,
    stream_end="[DONE]",
    main_field="choices",
    # request validation texts [3P: brekkylab/ailoy#109, Vortiago/mcp-azure-devops#30]
    name_errors=(
        "Invalid 'tools[{i}].function.name': string does not match pattern. Expected a "
        "string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
        "Invalid 'tools[{i}].function.name': string too long. Expected a string with "
        "maximum length {limit}, but got a string with length {length} instead.",
    ),
    lint=LINT,
    stream_arguments=stream_arguments,
    sdk="openai",
    sdk_sender="flowdebug.players.live.openai",
    sdk_loggers=("openai",),
    sdk_headers_env="OPENAI_CUSTOM_HEADERS",
    sdk_method="chat.completions.create",
    local_servers=True,  # the "OpenAI-compatible" servers
    training_formats={FORMAT: finetune_example},
)
