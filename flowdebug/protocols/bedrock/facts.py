"""What flowdebug knows about Amazon Bedrock Converse, declared once.

Checked against botocore's service model for ``bedrock-runtime`` (2023-09-30), as loaded by
``botocore.session.get_session().get_service_model("bedrock-runtime")``.
"""

from __future__ import annotations

import re

from flowdebug.protocols.bedrock import errors, eventstream
from flowdebug.protocols.bedrock.parts import PROTOCOL
from flowdebug.protocols.bedrock.stream import stream_arguments
from flowdebug.protocols.facts import (
    BareTool,
    Facts,
    Fields,
    Snippet,
    Terms,
    TokenCount,
    TurnRules,
    kept,
)

TITLE = "Bedrock Converse"
# The model id is part of the URL, never of the body: POST /model/{modelId}/converse
# (and /converse-stream), URL-encoded (``...v1%3A0``).
ENDPOINT = "/model/{modelId}/converse"
STREAM_ENDPOINT = "/model/{modelId}/converse-stream"
# CountTokens (botocore's operation): POST /model/{modelId}/count-tokens with
# {"input": {"converse": {messages, system, toolConfig, additionalModelRequestFields}}},
# answered {"inputTokens": n}. Only some models count (the others answer a
# ValidationException).
TOKEN_COUNT = TokenCount(
    endpoint="POST /model/{modelId}/count-tokens",
    docs="https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokens.html",
    route=re.compile(r"^/model/(?P<model>[^/]+)/count-tokens$"),
    body=lambda body, model: {
        "input": {
            "converse": kept(
                body, ("messages", "system", "toolConfig", "additionalModelRequestFields")
            )
        }
    },
    answer=lambda n: {"inputTokens": n},
    read=lambda answer: int(answer["inputTokens"]),
    sdk_method="count_tokens",
)

# botocore ToolName: pattern [a-zA-Z0-9_-]+, length 1-64.
NAME_RULE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
NAME_LIMIT = 64
# botocore ToolUseId: pattern [a-zA-Z0-9_.:-]+, length 1-64 (older models only [a-zA-Z0-9_-]).
ID_RULE = re.compile(r"^[a-zA-Z0-9_.:-]{1,64}$")
ID_LIMIT = 64

CALL = '''

def blobs(value, shape):
    """``value`` with base64 text decoded where the API takes bytes (boto3 encodes them)."""
    if shape.type_name == "blob" and isinstance(value, str):
        return base64.b64decode(value)
    if shape.type_name == "structure" and isinstance(value, dict) and not shape.is_document_type:
        members = shape.members
        return {k: blobs(v, members[k]) if k in members else v for k, v in value.items()}
    if shape.type_name == "list" and isinstance(value, list):
        return [blobs(v, shape.member) for v in value]
    return value


client = boto3.client("bedrock-runtime", region_name=os.environ.get("AWS_REGION", "us-east-1"))
shape = client.meta.service_model.operation_model("Converse").input_shape
response = client.converse(**{**blobs(REQUEST, shape), "modelId": MODEL})
response.pop("ResponseMetadata", None)
print(json.dumps(response, indent=2, default=str))
'''

SNIPPET = Snippet(
    "boto3",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
    "import boto3",
    CALL[1:],  # two blank lines after REQUEST
    stdlib=("base64", "json", "os"),
    model_in_url=True,
)

# One entry of ``toolConfig.tools``: ``{"toolSpec": {name, description, inputSchema: {json}}}``.
BARE_TOOL = BareTool(
    title="Bedrock toolSpec",
    keys='"toolSpec"',
    recognise=lambda tool: "toolSpec" in tool,
    request=lambda tools: {"messages": [], "toolConfig": {"tools": tools}},
    inner="$.toolConfig.tools",
)

FACTS = Facts(
    name=PROTOCOL,
    title=TITLE,
    short="Bedrock",
    api="Bedrock Converse",
    terms=Terms(
        declare="POST /model/{{modelId}}/converse · toolConfig.tools[{n}]",
        tool_call="toolUse {id} {name}",
        continuation="user turn: toolResult ×{n}",
        final_answer="text · stopReason: end_turn",
        text="text block",
    ),
    fields=Fields(
        declaration="`toolConfig.tools[].toolSpec` `{name, description, inputSchema: {json}}` "
        "in POST /model/{modelId}/converse",
        request="`output.message.content[]` blocks `{toolUse: {toolUseId, name, input}}`; "
        "`stopReason: tool_use`",
        answer="`output.message.content[]` `{text}` blocks; `stopReason: end_turn`",
        execution="runtime-side: each `toolUse.input` is validated and dispatched",
        continuation="one user turn of `{toolResult: {toolUseId, content: [{json}|{text}], "
        "status}}` blocks; `status: error` marks a failure",
    ),
    name_rule=NAME_RULE,
    name_limit=NAME_LIMIT,
    id_rule=ID_RULE,
    id_chars="_.:-",
    endpoint="POST " + ENDPOINT,
    base_url="https://bedrock-runtime.us-east-1.amazonaws.com",
    default_model="anthropic.claude-sonnet-4-20250514-v1:0",
    # provider ids (anthropic.claude-..., amazon.nova-...), with a cross-region inference
    # profile prefix (us., eu., apac., global.) or as an ARN
    model_ids=re.compile(
        r"^(?:arn:aws[\w-]*:bedrock:|(?:(?:us|eu|apac|ap|ca|jp|au|us-gov|global)\.)?"
        r"(?:anthropic|amazon|meta|mistral|cohere|ai21|deepseek|writer|qwen|openai|stability)\.)"
    ),
    # A Bedrock API key (a bearer token), else the access key id whose secret and
    # session token the live player reads beside it (players/live/bedrock.py).
    key_env=("AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID"),
    key_help="A Bedrock API key (sent as a bearer token, over HTTPS only), or "
    "`ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]` (SigV4). Empty: the server's "
    "`AWS_BEARER_TOKEN_BEDROCK`, else `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` / "
    "`AWS_SESSION_TOKEN`, for the vendor's endpoint only; the region is `AWS_REGION` "
    "(us-east-1 when unset).",
    history_key="messages",
    tools_path=("toolConfig", "tools"),
    stream_framing="event-stream",
    stream_frames=eventstream.stream_frames,
    stream_unframe=eventstream.stream_events,
    stream_content_type=eventstream.CONTENT_TYPE,
    declaration_path=("toolSpec",),
    bare_tools=(BARE_TOOL,),
    route=re.compile(r"^/model/(?P<model>[^/]+)/converse(?P<stream>-stream)?$"),
    route_help=("POST " + ENDPOINT, "POST " + STREAM_ENDPOINT),
    # The ValidationException texts of the Converse API, as reported in public issues
    # (camel-ai/camel#3954, strands-agents/harness-sdk#1435, vxcontrol/pentagi#196).
    # botocore's validation of toolSpec.name (reported in BerriAI/litellm#24668).
    name_errors=(
        "1 validation error detected: Value '{name}' at 'toolConfig.tools.{i1}.member."
        "toolSpec.name' failed to satisfy constraint: Member must satisfy regular "
        "expression pattern: [a-zA-Z0-9_-]+",
        "1 validation error detected: Value '{name}' at 'toolConfig.tools.{i1}.member."
        "toolSpec.name' failed to satisfy constraint: Member must have length less than "
        "or equal to {limit}",
    ),
    turn_rules=TurnRules(
        missing="Expected toolResult blocks at messages.{n}.content for the following Ids: {ids}",
        unexpected="The number of toolResult blocks at messages.{n}.content exceeds the "
        "number of toolUse blocks of previous turn.",
        no_tools="The toolConfig field must be defined when using toolUse and toolResult "
        "content blocks.",
        first_user="A conversation must start with a user message. Try again with a "
        "conversation that starts with a user message.",
        alternate="A conversation must alternate between user and assistant roles. Make "
        "sure the conversation alternates between user and assistant roles and try again.",
        # Claude models on Bedrock pass their own rule on (langchain-ai/langchain-aws#451,
        # Amazon-Q-Developer/language-servers#1235); other models may accept the turn.
        not_first="The model returned the following errors: messages.{n}: Did not find "
        "{k} `tool_result` block(s) at the beginning of this message. Messages following "
        "`tool_use` blocks must begin with a matching number of `tool_result` blocks.",
        not_first_level="warning",
    ),
    errors=errors,
    snippet=SNIPPET,
    main_field="output",
    stream_arguments=stream_arguments,
    # boto3's engine: it signs (SigV4 or the API key), serialises and parses; the client
    # method is ``converse``, ``converse_stream`` when streaming.
    sdk="botocore",
    sdk_sender="flowdebug.players.live.bedrock",
    sdk_loggers=("botocore",),
    sdk_method="converse",
    token_count=TOKEN_COUNT,
)
