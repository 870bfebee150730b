"""Validate emitted payloads against the vendor SDKs' own types.

pydantic silently drops unknown keys when validating a TypedDict, so ``assert_params`` also
diffs the validated value against the input: a misspelled key fails the test. ``Iterable[...]``
fields (e.g. ``messages``) validate lazily into an iterator whose items are checked only when
consumed, so ``_plain`` consumes them (while the adapter is still alive).
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, TypeAdapter


def _diff(
    expected: Any, got: Any, path: str = "$", allowed: frozenset[str] = frozenset()
) -> list[str]:
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return [f"{path}: became {type(got).__name__}"]
        out = [
            f"{path}.{k}: dropped by the SDK type"
            for k in expected
            if k not in got and k not in allowed
        ]
        for k in expected:
            if k in got:
                out += _diff(expected[k], got[k], f"{path}.{k}", allowed)
        return out
    if isinstance(expected, list):
        if not isinstance(got, list | tuple) or len(got) != len(expected):
            return [f"{path}: list changed"]
        return [
            d
            for i, (e, g) in enumerate(zip(expected, got, strict=True))
            for d in _diff(e, g, f"{path}[{i}]", allowed)
        ]
    return []


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | Iterator):
        return [_plain(v) for v in value]
    return value


@functools.cache
def _adapter(tp: Any) -> TypeAdapter[Any]:
    """One adapter per SDK type: building one takes ~0.1 s (the stream event unions more)."""
    return TypeAdapter(tp)


def assert_params(typed_dict: Any, payload: Any, allowed: frozenset[str] = frozenset()) -> None:
    """``payload`` validates as the SDK's request TypedDict and keeps every key (but the
    ``allowed`` vendor extensions the SDK passes through untyped)."""
    # Keep the adapter alive while _plain walks the result: Iterable fields validate lazily
    # (ValidatorIterator) and iterating them after the adapter is freed panics in pydantic-core.
    adapter = _adapter(typed_dict)
    got = _plain(adapter.validate_python(payload))
    problems = _diff(payload, got, allowed=allowed)
    assert not problems, "\n".join(problems)


def _extras(model: Any, path: str = "$", allowed: frozenset[str] = frozenset()) -> list[str]:
    out = []
    if isinstance(model, BaseModel):
        for k in model.__pydantic_extra__ or {}:
            if k not in allowed:
                out.append(f"{path}.{k}: not a field of {type(model).__name__}")
        for name in type(model).model_fields:
            out += _extras(getattr(model, name), f"{path}.{name}", allowed)
    elif isinstance(model, list | tuple):
        for i, v in enumerate(model):
            out += _extras(v, f"{path}[{i}]", allowed)
    elif isinstance(model, dict):
        for k, v in model.items():
            out += _extras(v, f"{path}.{k}", allowed)
    return out


def assert_model(model_cls: Any, payload: Any, allowed: frozenset[str] = frozenset()) -> Any:
    """``payload`` validates as the SDK's response model with no unknown fields anywhere (but
    the ``allowed`` vendor extensions the SDK keeps as extras)."""
    if isinstance(model_cls, type) and issubclass(model_cls, BaseModel):
        model = model_cls.model_validate(payload)
    else:
        model = _adapter(model_cls).validate_python(payload)
    problems = _extras(model, allowed=allowed)
    assert not problems, "\n".join(problems)
    return model


def _as_bytes(text: str) -> bytes:
    text = text.replace("-", "+").replace("_", "/")
    return base64.b64decode(text + "=" * (-len(text) % 4))


def _normal(value: Any) -> Any:
    """JSON with base64 fields as bytes, so the SDK's URL-safe re-encoding compares equal, and
    without null fields (an optional field sent as null is unset to the SDK)."""
    if isinstance(value, dict):
        return {
            k: _as_bytes(v)
            if k in ("thoughtSignature", "data") and isinstance(v, str)
            else _normal(v)
            for k, v in value.items()
            if v is not None
        }
    if isinstance(value, list):
        return [_normal(v) for v in value]
    return value


def assert_genai(model_cls: Any, payload: Any) -> Any:
    """``payload`` is a valid google-genai ``model_cls`` (no unknown key anywhere, as its types
    forbid extras) that dumps back to it."""
    model = model_cls.model_validate_json(json.dumps(payload))
    again = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert _normal(again) == _normal(payload)
    return model


def gemini_request(body: dict[str, Any]) -> None:
    """A generateContent request body, field by field against google-genai's types."""
    from google.genai import types

    assert set(body) <= {"systemInstruction", "contents", "tools", "toolConfig", "generationConfig"}
    for content in body["contents"]:
        assert_genai(types.Content, content)
    for tool in body.get("tools", []):
        assert_genai(types.Tool, tool)
    if "toolConfig" in body:
        assert_genai(types.ToolConfig, body["toolConfig"])
    if "systemInstruction" in body:
        assert_genai(types.Content, body["systemInstruction"])
    if "generationConfig" in body:
        assert_genai(types.GenerationConfig, body["generationConfig"])


# Fields OpenAI-compatible servers define beyond OpenAI's own types, which the SDK sends and
# keeps untyped: Gemini's OpenAI endpoint wants its thought signature back on each tool call
# (`extra_content.google.thought_signature`).
# Reasoning servers add theirs: DeepSeek's `reasoning_content` (in answers, and echoed back in
# the assistant turns of a tool-call loop) and its usage's `prompt_cache_hit_tokens` and
# `prompt_cache_miss_tokens`; Ollama's and OpenRouter's `reasoning`; Gemini's
# `thought_signature` on the message. The SDK keeps them as extras.
CHAT_EXTENSIONS = frozenset(
    {
        "extra_content",
        "reasoning_content",
        "reasoning",
        "thought_signature",
        "prompt_cache_hit_tokens",
        "prompt_cache_miss_tokens",
    }
)
# Fields the Responses API returns on a Response that this SDK's type does not declare yet (it
# keeps them as extras): a response read from the API and encoded back to it keeps them.
RESPONSES_EXTENSIONS = frozenset({"billing", "store", "frequency_penalty", "presence_penalty"})


def _has_block(payload: Any, types: tuple[str, ...]) -> bool:
    text = json.dumps(payload)
    return any(f'"type": "{t}"' in text for t in types)


def validate_wire(protocol: str, kind: str, payload: Any) -> None:
    """``payload`` (what a codec emitted) validates against that vendor SDK's own types.

    ``kind`` is ``request``, ``response`` or ``stream`` (a list of event objects); MCP
    payloads are transcripts and are checked by ``tests/protocols/mcp/test_mcp.py``'s rules.
    """
    if protocol == "anthropic":
        from anthropic.types import Message, RawMessageStreamEvent
        from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

        if _has_block(payload, ("mcp_tool_use", "mcp_tool_result")):
            # The MCP connector's blocks are typed only in the SDK's beta namespace (the
            # request needs the mcp-client beta header).
            from anthropic.types.beta import BetaMessage as Message
            from anthropic.types.beta import BetaRawMessageStreamEvent as RawMessageStreamEvent
            from anthropic.types.beta.message_create_params import (
                MessageCreateParamsNonStreaming,
            )

        if kind == "request":
            assert_params(MessageCreateParamsNonStreaming, payload)
        elif kind == "response":
            assert_model(Message, payload)
        else:
            for event in payload:
                assert_model(RawMessageStreamEvent, event.get("data", event))
    elif protocol == "openai-chat":
        from openai.types.chat import ChatCompletion, ChatCompletionChunk
        from openai.types.chat.completion_create_params import (
            CompletionCreateParamsNonStreaming,
        )

        if kind == "request":
            assert_params(CompletionCreateParamsNonStreaming, payload, CHAT_EXTENSIONS)
        elif kind == "response":
            assert_model(ChatCompletion, payload, CHAT_EXTENSIONS)
        else:
            for event in payload:
                assert_model(ChatCompletionChunk, event, CHAT_EXTENSIONS)
    elif protocol == "openai-responses":
        from openai.types.responses import Response, ResponseStreamEvent
        from openai.types.responses.response_create_params import (
            ResponseCreateParamsNonStreaming,
        )

        if kind == "request":
            assert_params(ResponseCreateParamsNonStreaming, payload)
        elif kind == "response":
            assert_model(Response, payload, RESPONSES_EXTENSIONS)
        else:
            for event in payload:
                assert_model(ResponseStreamEvent, event, RESPONSES_EXTENSIONS)
    elif protocol == "gemini":
        from google.genai import types

        if kind == "request":
            gemini_request(payload)
        else:
            for chunk in payload if kind == "stream" else [payload]:
                assert_genai(types.GenerateContentResponse, chunk)
    elif protocol == "bedrock":
        # boto3 has no typed models: botocore's service model for bedrock-runtime is the SDK's
        # own truth (ParamValidator for requests, the output shapes walked for the rest).
        from tests.protocols.bedrock.botocheck import (
            request_problems,
            response_problems,
            stream_event_problems,
        )

        if kind == "request":
            report = request_problems(payload)
            assert report == "", report
        elif kind == "response":
            problems = response_problems(payload)
            assert problems == [], "\n".join(problems)
        else:
            problems = [p for event in payload for p in stream_event_problems(event)]
            assert problems == [], "\n".join(problems)
    elif protocol == "mcp":
        from tests.protocols.mcp.test_mcp import validate_transcript

        if isinstance(payload, list):
            validate_transcript(payload)
    else:
        raise AssertionError(f"no SDK types known for {protocol}")
