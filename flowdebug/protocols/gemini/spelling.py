"""Gemini field spellings and singletons: what the REST API's proto JSON mapping accepts.

The REST API parses requests with the proto3 JSON rules, so ``function_call``,
``inline_data``, ``thought_signature``, ``tool_config``, ``system_instruction``... mean the same
as their camelCase names (the google-genai SDK itself sends snake_case to Vertex), and a
repeated field also takes a single value (``"parts": {"text": "hi"}`` is a one-part list, as
pasted from many examples). The codec reads both by normalising first, by one rule over the
schema it reads (:data:`SCHEMA`): every field name folded to camelCase, every repeated field's
single value made a list (pure re-spellings: no warning). It always encodes camelCase lists.

Only field names are folded, never data: the values of the keys in :data:`_OPAQUE` are user
JSON (call arguments, function responses, JSON Schemas, labels) whose keys must stay as sent.
``parameters`` / ``response`` schemas keep their spelling here because
:func:`flowdebug.protocols.gemini.tools.from_schema` folds the Schema keywords itself.
"""

from __future__ import annotations

from typing import Any

# camelCase names whose value is free JSON: a google.protobuf.Struct / Value or a JSON Schema.
_OPAQUE = frozenset(
    {
        "args",
        "response",
        "parameters",
        "parametersJsonSchema",
        "responseJsonSchema",
        "responseSchema",
        "labels",
        "partMetadata",
        "structValue",
        "listValue",
    }
)

_LIST = (None, True)  # a repeated field whose items the reader does not descend into by type

# The messages the reader reads, by google-genai's type names: each one's repeated fields
# (all of them: tests/protocols/gemini/test_gemini_spelling.py checks them against the SDK's types)
# and the message-typed fields that lead to more of them, as (type, repeated).
SCHEMA: dict[str, dict[str, tuple[str | None, bool]]] = {
    "GenerateContentRequest": {
        "contents": ("Content", True),
        "systemInstruction": ("Content", False),
        "tools": ("Tool", True),
        "toolConfig": ("ToolConfig", False),
        "generationConfig": ("GenerationConfig", False),
        "safetySettings": _LIST,
    },
    "Content": {"parts": ("Part", True)},
    "Part": {
        "functionCall": ("FunctionCall", False),
        "functionResponse": ("FunctionResponse", False),
        "videoMetadata": ("VideoMetadata", False),
        "documentMetadata": ("DocumentMetadata", False),
        "spreadsheetMetadata": ("SpreadsheetMetadata", False),
        "audioTranscription": ("Transcription", False),
    },
    "FunctionCall": {"partialArgs": _LIST},
    "FunctionResponse": {"parts": ("FunctionResponsePart", True)},
    "FunctionResponsePart": {
        "videoMetadata": ("VideoMetadata", False),
        "documentMetadata": ("DocumentMetadata", False),
        "spreadsheetMetadata": ("SpreadsheetMetadata", False),
    },
    "VideoMetadata": {"contentLayers": _LIST},
    "DocumentMetadata": {"contentLayers": _LIST},
    "SpreadsheetMetadata": {"contentLayers": _LIST},
    "Transcription": {"words": _LIST},
    "Tool": {
        "functionDeclarations": ("FunctionDeclaration", True),
        "mcpServers": _LIST,
        "computerUse": ("ComputerUse", False),
        "fileSearch": ("FileSearch", False),
        "googleSearch": ("GoogleSearch", False),
        "enterpriseWebSearch": ("EnterpriseWebSearch", False),
    },
    "FunctionDeclaration": {},
    "ComputerUse": {"excludedPredefinedFunctions": _LIST, "disabledSafetyPolicies": _LIST},
    "FileSearch": {"fileSearchStoreNames": _LIST},
    "GoogleSearch": {"excludeDomains": _LIST},
    "EnterpriseWebSearch": {"excludeDomains": _LIST},
    "ToolConfig": {"functionCallingConfig": ("FunctionCallingConfig", False)},
    "FunctionCallingConfig": {"allowedFunctionNames": _LIST},
    "GenerationConfig": {
        "responseModalities": _LIST,
        "stopSequences": _LIST,
        "responseFormat": _LIST,
    },
    "GenerateContentResponse": {
        "candidates": ("Candidate", True),
        "promptFeedback": ("GenerateContentResponsePromptFeedback", False),
        "usageMetadata": ("GenerateContentResponseUsageMetadata", False),
        "automaticFunctionCallingHistory": ("Content", True),
    },
    "Candidate": {
        "content": ("Content", False),
        "citationMetadata": ("CitationMetadata", False),
        "groundingMetadata": ("GroundingMetadata", False),
        "urlContextMetadata": ("UrlContextMetadata", False),
        "logprobsResult": ("LogprobsResult", False),
        "safetyRatings": _LIST,
    },
    "CitationMetadata": {"citations": _LIST},
    "GroundingMetadata": {
        "groundingChunks": _LIST,
        "groundingSupports": ("GroundingSupport", True),
        "imageSearchQueries": _LIST,
        "webSearchQueries": _LIST,
        "retrievalQueries": _LIST,
        "sourceFlaggingUris": _LIST,
    },
    "GroundingSupport": {
        "confidenceScores": _LIST,
        "groundingChunkIndices": _LIST,
        "renderedParts": _LIST,
    },
    "UrlContextMetadata": {"urlMetadata": _LIST},
    "LogprobsResult": {
        "chosenCandidates": _LIST,
        "topCandidates": ("LogprobsResultTopCandidates", True),
    },
    "LogprobsResultTopCandidates": {"candidates": _LIST},
    "GenerateContentResponsePromptFeedback": {"safetyRatings": _LIST},
    "GenerateContentResponseUsageMetadata": {
        "cacheTokensDetails": _LIST,
        "candidatesTokensDetails": _LIST,
        "promptTokensDetails": _LIST,
        "toolUsePromptTokensDetails": _LIST,
    },
}


def camel(name: str) -> str:
    """``function_call`` -> ``functionCall``; a name without ``_`` is returned as is."""
    if "_" not in name or name.startswith("_"):
        return name
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


# SCHEMA resolved for the walk: field -> (the child's fields, repeated, a message type).
_Fields = dict[str, tuple[Any, bool, bool]]
_RESOLVED: dict[str | None, _Fields] = {None: {}}
for _name, _fields in SCHEMA.items():
    _RESOLVED[_name] = {}
for _name, _fields in SCHEMA.items():
    _RESOLVED[_name].update(
        (f, (_RESOLVED[child] if child else _RESOLVED[None], repeated, child is not None))
        for f, (child, repeated) in _fields.items()
    )


def _fold_list(value: list[Any], fields: _Fields) -> list[Any]:
    out: list[Any] | None = None
    for i, item in enumerate(value):
        t = type(item)
        new = _fold_dict(item, fields) if t is dict else _fold_list(item, {}) if t is list else item
        if out is None and new is not item:
            out = value[:i]
        if out is not None:
            out.append(new)
    return value if out is None else out


def _fold_dict(value: dict[Any, Any], fields: _Fields) -> dict[Any, Any]:
    """``value`` read as the message whose fields are ``fields``, normalised; the very same
    object when nothing changes, so a long history in canonical spelling is walked, never
    copied (the loop is the codec's hot path: the common key takes the first ``else``)."""
    out: dict[Any, Any] | None = None
    for key, item in value.items():
        t = type(item)
        if type(key) is str and "_" in key:
            name = camel(key)
        elif key in fields or ((t is dict or t is list) and key not in _OPAQUE):
            name = key
        else:
            if out is not None:
                out[key] = item
            continue
        spec = fields.get(name)
        if name in _OPAQUE:
            new = item
        elif t is list:
            new = _fold_list(item, spec[0] if spec else {})
        elif t is dict:
            new = _fold_dict(item, spec[0] if spec else {})
            if spec and spec[1]:
                new = [new]  # a repeated field's single value
        elif spec and spec[1] and not spec[2] and item is not None:
            new = [item]  # a repeated scalar field's single value
        else:
            new = item
        if out is None:
            if name is key and new is item:
                continue
            out = {}
            for before, kept in value.items():
                if before is key:
                    break
                out[before] = kept
        # Both spellings present: the camelCase one (canonical) wins.
        if name is key or name not in value:
            out[name] = new
    return value if out is None else out


def _fold(value: Any, typ: str | None) -> Any:
    if type(value) is list:
        return _fold_list(value, _RESOLVED[typ])
    if type(value) is dict:
        return _fold_dict(value, _RESOLVED[typ])
    return value


def fold(value: Any, typ: str | None = None) -> Any:
    """``value`` (a ``typ`` message of :data:`SCHEMA`, or untyped) with every proto field name
    in camelCase and every repeated field a list (user data left untouched)."""
    return _fold(value, typ)


def normalize_request(payload: Any) -> Any:
    """A generateContent request in camelCase, every repeated field a list (``contents``,
    ``parts``, ``systemInstruction.parts``, ``tools``, ``functionDeclarations``...)."""
    return _fold(payload, "GenerateContentRequest")


def normalize(payload: Any) -> Any:
    """A response (or a stream's chunk list) in camelCase, every repeated field a list."""
    return _fold(payload, "GenerateContentResponse")
