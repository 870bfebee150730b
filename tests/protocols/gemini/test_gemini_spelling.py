"""Gemini's reader normalises by one rule over the schema it reads: snake_case or camelCase,
and a single value wherever a repeated field is expected (the proto JSON mapping's leniency).
The schema's repeated fields are checked against google-genai's own types."""

from __future__ import annotations

import inspect
import types as pytypes
import typing
from typing import Any

import pytest
from google.genai import types
from pydantic import BaseModel

from flowdebug.protocols.convert import decode
from flowdebug.protocols.gemini.spelling import SCHEMA, camel, normalize_request


def _field(annotation: Any) -> tuple[Any, bool]:
    """The item type of a google-genai field and whether it is a list."""
    repeated = False
    while True:
        origin = typing.get_origin(annotation)
        if origin in (typing.Union, pytypes.UnionType):
            annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
        elif origin is list:
            repeated, annotation = True, typing.get_args(annotation)[0]
        else:
            return annotation, repeated


SDK_TYPES = sorted(name for name in SCHEMA if name != "GenerateContentRequest")


@pytest.mark.parametrize("name", SDK_TYPES)
def test_schema_lists_every_repeated_field_of_the_sdk_type(name: str) -> None:
    model = getattr(types, name)
    sdk = {camel(f): _field(info.annotation) for f, info in model.model_fields.items()}
    repeated = {f for f, (_, is_list) in sdk.items() if is_list}
    ours = SCHEMA[name]
    assert {f for f, (_, is_list) in ours.items() if is_list} == repeated
    for field, (child, _) in ours.items():
        item = sdk[field][0]
        if child is not None:
            assert inspect.isclass(item) and issubclass(item, BaseModel)
            assert item.__name__ == child


def test_request_schema_children_are_sdk_types() -> None:
    # The REST request has no SDK type of its own (the SDK flattens it into
    # GenerateContentConfig): its children are SDK types and its lists are the REST API's.
    request = SCHEMA["GenerateContentRequest"]
    assert all(child is None or hasattr(types, child) for child, _ in request.values())
    assert {f for f, (_, repeated) in request.items() if repeated} == {
        "contents",
        "tools",
        "safetySettings",
    }


SINGLETONS = {
    "one part": {"contents": {"role": "user", "parts": {"text": "hi"}}},
    "system parts object": {
        "system_instruction": {"parts": {"text": "be brief"}},
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
    },
    "one tool, one declaration": {
        "tools": {"function_declarations": {"name": "f", "description": "d"}},
        "tool_config": {"function_calling_config": {"mode": "ANY", "allowed_function_names": "f"}},
        "contents": {"parts": {"text": "hi"}},
    },
    "camelCase singletons": {
        "systemInstruction": {"parts": {"text": "be brief"}},
        "tools": {"functionDeclarations": {"name": "f"}},
        "contents": {"role": "user", "parts": {"text": "hi"}},
    },
}


@pytest.mark.parametrize("name", SINGLETONS)
def test_singletons_read_as_lists_of_one(name: str) -> None:
    body = normalize_request(SINGLETONS[name])
    assert isinstance(body["contents"], list)
    assert all(isinstance(c["parts"], list) for c in body["contents"])
    for tool in body.get("tools", []):
        assert isinstance(tool["functionDeclarations"], list)
    got = decode(SINGLETONS[name])
    assert (got.protocol, got.kind, got.warnings) == ("gemini", "request", [])
    assert [p.text for p in got.conversation.messages[0].parts] == ["hi"]  # type: ignore[union-attr]
    if "system" in name:
        assert got.conversation.system == "be brief"  # type: ignore[union-attr]
    if "tool" in name:
        assert [t.name for t in got.conversation.tools] == ["f"]  # type: ignore[union-attr]


def test_snake_case_tool_config_and_system_instruction_are_recognised() -> None:
    got = decode(
        {
            "system_instruction": {"parts": [{"text": "be brief"}]},
            "tool_config": {"function_calling_config": {"mode": "ANY"}},
            "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        }
    )
    assert (got.protocol, got.kind) == ("gemini", "request")
    assert got.conversation.system == "be brief"  # type: ignore[union-attr]


def test_function_response_parts_object_is_read_as_its_media() -> None:
    got = decode(
        {
            "contents": [
                {
                    "role": "model",
                    "parts": {"function_call": {"name": "snap", "args": {}, "id": "c1"}},
                },
                {
                    "role": "user",
                    "parts": {
                        "function_response": {
                            "name": "snap",
                            "id": "c1",
                            "response": {"ok": True},
                            "parts": {
                                "inline_data": {"mime_type": "image/png", "data": "iVBORw0K"}
                            },
                        }
                    },
                },
            ]
        }
    )
    result = got.conversation.messages[1].parts[0]  # type: ignore[union-attr]
    assert [type(c).__name__ for c in result.content] == ["Text", "Image"]  # type: ignore[union-attr]
    assert result.content[1].data == "iVBORw0K"  # type: ignore[union-attr]


def test_user_data_keeps_its_spelling_and_shape() -> None:
    body = normalize_request(
        {
            "contents": {
                "parts": {"function_call": {"name": "f", "args": {"a_b": {"parts": {"x": 1}}}}}
            }
        }
    )
    assert body["contents"][0]["parts"][0]["functionCall"]["args"] == {"a_b": {"parts": {"x": 1}}}


def test_canonical_spelling_is_returned_without_a_copy() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    assert normalize_request(body) is body


def test_snake_case_media_inside_a_camel_case_function_response_is_read() -> None:
    got = decode(
        {
            "contents": [
                {
                    "role": "model",
                    "parts": [{"functionCall": {"name": "snap", "args": {}, "id": "c1"}}],
                },
                {
                    "role": "user",
                    "parts": [
                        {
                            "functionResponse": {
                                "name": "snap",
                                "id": "c1",
                                "response": {"ok": True},
                                "parts": [
                                    {"inline_data": {"mime_type": "image/png", "data": "iVBORw0K"}}
                                ],
                            }
                        }
                    ],
                },
            ]
        }
    )
    image = got.conversation.messages[1].parts[0].content[1]  # type: ignore[union-attr]
    assert (image.media_type, image.data) == ("image/png", "iVBORw0K")  # type: ignore[union-attr]
