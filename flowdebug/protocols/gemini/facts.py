"""Google Gemini generateContent, as the rest of flowdebug needs to know it."""

from __future__ import annotations

import re

from flowdebug.protocols.facts import (
    BareTool,
    Facts,
    Fields,
    SdkRewrite,
    Snippet,
    Terms,
    TokenCount,
    kept,
)
from flowdebug.protocols.gemini import errors
from flowdebug.protocols.gemini.rules import LINT
from flowdebug.protocols.gemini.stream import stream_arguments

# The payload is the REST body of generateContent; the SDK takes typed contents and a config
# that flattens generationConfig next to systemInstruction, tools and toolConfig. Parsing
# from JSON text turns base64 fields (thoughtSignature) into bytes as the SDK expects.
SNIPPET = Snippet(
    "google-genai",
    "GEMINI_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "from google import genai\nfrom google.genai import types",
    """settings = {k: v for k, v in REQUEST.items() if k not in ("contents", "generationConfig")}
config = types.GenerateContentConfig.model_validate_json(
    json.dumps({**settings, **REQUEST.get("generationConfig", {})})
)
contents = [types.Content.model_validate_json(json.dumps(c)) for c in REQUEST["contents"]]

client = genai.Client(api_key=os.environ["GEMINI_API_KEY"])
response = client.models.generate_content(model=MODEL, contents=contents, config=config)
print(response.model_dump_json(indent=2, exclude_none=True))
""",
    stdlib=("json", "os"),
    model_in_url=True,
)

# What google-genai changes in the codec's REST body on its way to the wire: it takes typed
# Content and GenerateContentConfig and serialises them itself (players/live/gemini.py).
SDK_REWRITES = (
    # GenerateContentConfig is serialised into generationConfig even when empty.
    SdkRewrite(
        "added",
        re.compile(r"^\$\.generationConfig$"),
        "google-genai always sends generationConfig, empty when nothing is set",
    ),
    SdkRewrite(
        "added",
        re.compile(r"^\$\.systemInstruction\.role$"),
        "google-genai gives the system instruction the role user",
    ),
    # Proto field names (snake_case) inside function declarations (parameters_json_schema,
    # any_of, ...) and inside nested parts such as functionResponse.parts[].inline_data;
    # proto3 JSON servers accept both spellings.
    SdkRewrite(
        "renamed",
        re.compile(r"\.functionDeclarations\["),
        "google-genai spells function declaration fields in snake_case",
    ),
    SdkRewrite(
        "renamed",
        re.compile(""),
        "google-genai sends the proto field name; the API accepts both spellings",
    ),
    # Bytes fields are bytes to the SDK; it re-encodes them as URL-safe base64, which proto3
    # JSON servers accept like the standard alphabet.
    SdkRewrite(
        "changed",
        re.compile(r"\.(thoughtSignature|data)$"),
        "google-genai re-encodes bytes as URL-safe base64 (same bytes)",
        same="base64",
    ),
)

# A Tool object (holding ``functionDeclarations``), or one FunctionDeclaration, in the REST
# spelling or the SDK's snake_case.
_PARAMETERS = ("parametersJsonSchema", "parameters_json_schema", "parameters")
BARE_TOOLS = (
    BareTool(
        title="Gemini tool",
        keys='"functionDeclarations"',
        recognise=lambda tool: "functionDeclarations" in tool or "function_declarations" in tool,
        request=lambda tools: {"contents": [], "tools": tools},
    ),
    BareTool(
        title="Gemini functionDeclaration",
        keys='"parameters"',
        recognise=lambda tool: "name" in tool and any(k in tool for k in _PARAMETERS),
        request=lambda tools: {"contents": [], "tools": [{"functionDeclarations": tools}]},
        inner="$.tools[0].functionDeclarations",
    ),
)

# POST /v1beta/{model=models/*}:countTokens: tools and the system instruction are counted
# only inside a whole ``generateContentRequest`` (plain ``contents`` count the prompt alone);
# the answer is {"totalTokens": n}. google-genai's count_tokens refuses tools outside
# Vertex AI, so the live player posts the body itself.
TOKEN_COUNT = TokenCount(
    endpoint="POST /v1beta/models/{model}:countTokens",
    docs="https://ai.google.dev/api/tokens",
    route=re.compile(
        r"^/(?P<version>v1|v1beta|v1alpha)/(?:models/)?(?P<model>[^/:]+):countTokens$"
    ),
    body=lambda body, model: {
        "generateContentRequest": {
            "model": model if model.startswith("models/") else f"models/{model}",
            **kept(body, ("contents", "tools", "toolConfig", "systemInstruction")),
        }
    },
    answer=lambda n: {"totalTokens": n},
    read=lambda answer: int(answer["totalTokens"]),
)

FACTS = Facts(
    name="gemini",
    title="Google Gemini",
    short="Gemini",
    api="Gemini generateContent",
    terms=Terms(
        declare="generateContent · functionDeclarations[{n}]",
        tool_call="functionCall {name} id={id}",
        tool_call_no_id="functionCall {name}",
        continuation="functionResponse ×{n}",
        final_answer="text · finishReason: STOP",
        text="text part",
        hosted={"code_execution": "executableCode", "*": "grounding"},
        hosted_result={"code_execution": "codeExecutionResult", "*": "{term} result"},
    ),
    fields=Fields(
        declaration="`tools[].functionDeclarations[]` `{name, description, parameters}`",
        request="`parts[].functionCall` `{name, args, id?}`; finishReason stays `STOP`",
        answer="`parts[].text`, no `functionCall`; `finishReason: STOP`",
        execution="runtime-side: `args` is validated and dispatched",
        continuation="one user content with `functionResponse {name, id, response}` parts; "
        "`response` is an object: `{output}` or `{error}`",
    ),
    # function names: start with a letter or underscore, [A-Za-z0-9_.:-], at most 128
    name_rule=re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$"),
    name_limit=128,
    name_chars="_.:-",
    id_rule=re.compile(r"^.{1,256}$", re.S),
    endpoint="POST /v1beta/models/{model}:generateContent",
    base_url="https://generativelanguage.googleapis.com",
    default_model="gemini-2.5-flash",
    model_ids=re.compile(r"^(?:models/|tunedModels/)?(?:gemini-|gemma-|learnlm-)"),
    key_env=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    history_key="contents",
    declaration_path=("functionDeclarations", 0),
    bare_tools=BARE_TOOLS,
    # the model is in the path, and streaming is its own method
    route=re.compile(
        r"^/(?P<version>v1|v1beta|v1alpha)/(?:models/)?(?P<model>[^/:]+)"
        r":(?:generateContent|(?P<stream>streamGenerateContent))$"
    ),
    route_help=(
        "POST /{v1,v1beta}/models/{model}:generateContent",
        "POST /{v1,v1beta}/models/{model}:streamGenerateContent?alt=sse",
    ),
    errors=errors,
    snippet=SNIPPET,
    main_field="candidates",
    # [3P google-gemini/gemini-cli#2966]
    name_errors=(
        "* GenerateContentRequest.tools[0].function_declarations[{i}].name: Invalid "
        "function name. Must start with a letter or an underscore. Must be alphameric "
        "(a-z, A-Z, 0-9), underscores (_), dots (.) or dashes (-), with a maximum length of "
        "64.",
    )
    * 2,
    lint=LINT,
    stream_arguments=stream_arguments,
    sdk="google-genai",
    sdk_sender="flowdebug.players.live.gemini",
    sdk_loggers=("google_genai",),
    sdk_method="models.generate_content",
    sdk_rewrites=SDK_REWRITES,
    token_count=TOKEN_COUNT,
)
