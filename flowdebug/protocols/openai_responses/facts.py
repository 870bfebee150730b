"""OpenAI Responses, as the rest of flowdebug needs to know it."""

from __future__ import annotations

import re

from flowdebug.protocols.facts import BareTool, Facts, Fields, Snippet, Terms, TokenCount, kept
from flowdebug.protocols.openai_responses import errors
from flowdebug.protocols.openai_responses.rules import LINT
from flowdebug.protocols.openai_responses.stream import stream_arguments

SNIPPET = Snippet(
    "openai",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "import openai",
    """client = openai.OpenAI(api_key=os.environ["OPENAI_API_KEY"])
response = client.responses.create(**REQUEST)
print(response.model_dump_json(indent=2, exclude_none=True))
""",
)

# ``{"type": "function", name, description, parameters}``: Chat's, flattened.
BARE_TOOL = BareTool(
    title="OpenAI Responses tool",
    keys='"type": "function" with "name"',
    recognise=lambda tool: tool.get("type") == "function" and "function" not in tool,
    request=lambda tools: {"model": "-", "input": [], "tools": tools},
)

# POST /responses/input_tokens takes the request's input, instructions, tools and their
# settings (no max_output_tokens, no stream) and answers
# {"object": "response.input_tokens", "input_tokens": n}.
COUNTED = (
    "input", "instructions", "tools", "tool_choice", "parallel_tool_calls",
    "previous_response_id", "reasoning", "text", "truncation", "conversation",
)  # fmt: skip
TOKEN_COUNT = TokenCount(
    endpoint="POST /responses/input_tokens",
    docs="https://developers.openai.com/api/docs/guides/token-counting",
    route=re.compile(r"^(?:/v1)?/responses/input_tokens$"),
    body=lambda body, model: {**kept(body, COUNTED), "model": model},
    answer=lambda n: {"object": "response.input_tokens", "input_tokens": n},
    read=lambda answer: int(answer["input_tokens"]),
    sdk_method="responses.input_tokens.count",
)

FACTS = Facts(
    name="openai-responses",
    title="OpenAI Responses",
    short="OpenAI Responses",
    api="OpenAI Responses",
    terms=Terms(
        declare="POST /responses · tools[{n}]",
        tool_call="function_call call_id={id} {name}",
        continuation="function_call_output ×{n}",
        final_answer="message output_text · completed",
        text="text block",
        hosted={
            "web_search": "web_search_call",
            "file_search": "file_search_call",
            "mcp": "mcp_call",
            "code_interpreter": "code_interpreter_call",
            "computer": "computer_call",
            "local_shell": "local_shell_call",
            "image_generation": "image_generation_call",
            "*": "hosted item",
        },
        hosted_result={"*": "{term} result"},
    ),
    fields=Fields(
        declaration="`tools[]` flat `{type: function, name, parameters, strict}`",
        request="`output[]` items `{type: function_call, call_id, name, arguments}`",
        answer="`output[]` `{type: message, content: [{type: output_text, text}]}`",
        execution="runtime-side: `arguments` is parsed, validated and dispatched",
        continuation="`{type: function_call_output, call_id, output}` items",
    ),
    name_rule=re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    name_limit=64,
    id_rule=re.compile(r"^.{1,256}$", re.S),
    endpoint="POST /responses",
    base_url="https://api.openai.com/v1",
    default_model="gpt-4.1",
    tokenizer="o200k_base",  # gpt-4o, gpt-4.1, o-series (tiktoken's model table)
    tokenizer_file="https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    model_ids=re.compile(r"^(?:ft:)?(?:gpt-|chatgpt-|codex-|computer-use-|o\d(?:$|-))"),
    key_env=("OPENAI_API_KEY",),
    history_key="input",
    bare_tools=(BARE_TOOL,),
    named_events=True,
    route=re.compile(r"^(?:/v1)?/responses$"),
    route_help=("POST /v1/responses",),
    errors=errors,
    snippet=SNIPPET,
    main_field="output",
    # request validation texts [3P: brekkylab/ailoy#109, 5ire#33]
    name_errors=(
        "Invalid 'tools[{i}].name': string does not match pattern. Expected a string that "
        "matches the pattern '^[a-zA-Z0-9_-]+$'.",
        "Invalid 'tools[{i}].name': string too long. Expected a string with maximum length "
        "{limit}, but got a string with length {length} instead.",
    ),
    lint=LINT,
    stream_arguments=stream_arguments,
    sdk="openai",
    sdk_sender="flowdebug.players.live.openai",
    sdk_loggers=("openai",),
    sdk_headers_env="OPENAI_CUSTOM_HEADERS",
    sdk_method="responses.create",
    token_count=TOKEN_COUNT,
)
