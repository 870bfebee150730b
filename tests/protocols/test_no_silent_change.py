"""No silent change: every JSON path of the canonical conversation that a conversion loses or
alters is named by one of its warnings.

A conversion A -> B is judged on the canonical form: what A's payload means (decoded), and
what the payload emitted for B means when B decodes it. Pure re-spellings do not show there
(they decode to the same canonical value); everything else must be covered by a warning
whose ``path`` is that path or a prefix of it.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from flowdebug import protocols
from flowdebug.model import (
    Conversation,
    Image,
    Message,
    ModelResponse,
    Text,
    Tool,
    ToolCall,
    ToolResult,
    dump,
)
from flowdebug.protocols.base import ConversionWarning
from flowdebug.protocols.schema_rewrites import OBJECT_ROOT, REWRITES
from tests.hypothesis_profiles import examples
from tests.protocols.test_real_fixtures import FILES, MCP_KINDS, _decode, _load, _split
from tests.protocols.test_roundtrip import conversations

NAMES = list(protocols.PROTOCOLS)
PAIRS = list(itertools.permutations(NAMES, 2))


def leaves(value: Any, path: str = "") -> dict[str, Any]:
    """Every scalar (and empty container) of ``value`` by its canonical path."""
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out |= leaves(v, f"{path}.{k}" if path else k)
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, v in enumerate(value):
            out |= leaves(v, f"{path}[{i}]")
        return out
    return {path: value}


def changed_paths(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    a, b = leaves(before), leaves(after)
    return {p for p in a.keys() | b.keys() if a.get(p, ...) != b.get(p, ...)}


def _prefix(path: str) -> str:
    return re.sub(r"^\$\.?", "", path)


def covered(path: str, warnings: list[ConversionWarning]) -> bool:
    for w in warnings:
        wp = _prefix(w.path)
        if wp == "" or path == wp or path.startswith((wp + ".", wp + "[")):
            return True
    return False


def _inside(path: str, warnings: list[ConversionWarning]) -> bool:
    return any(_prefix(w.path).startswith((path + ".", path + "[")) for w in warnings)


def silent(before: dict[str, Any], after: dict[str, Any], warnings) -> list[str]:
    """The changed paths no warning names. A list or object emptied (or filled) shows as a
    leaf of its own: it is named when its elements are (a warning inside it)."""
    a, b = leaves(before), leaves(after)
    emptied = {p for p, v in (a | b).items() if v in ([], {})}
    return sorted(
        p
        for p in changed_paths(before, after)
        if not covered(p, warnings) and not (p in emptied and _inside(p, warnings))
    )


def convert_canonical(value: Conversation | ModelResponse, target: str):
    codec = protocols.get(target)
    if isinstance(value, Conversation):
        there = codec.encode_request(value)
        back = codec.decode_request(there.value)
    else:
        there = codec.encode_response(value)
        back = codec.decode_response(there.value)
    return back.value, [*there.warnings, *back.warnings]


def _dump(value: Conversation | ModelResponse) -> dict[str, Any]:
    return dump(value)


CASES = [
    (f, t) for f in FILES for t in NAMES if t != _split(f)[0] and _split(f)[1] not in MCP_KINDS
]


@pytest.mark.parametrize(("fname", "target"), CASES, ids=[f"{f[:-5]}->{t}" for f, t in CASES])
def test_warnings_name_every_path_a_real_payload_loses(fname, target):
    protocol, kind = _split(fname)
    original, _ = _decode(protocol, kind, _load(fname))
    back, warnings = convert_canonical(original, target)
    lost = silent(_dump(original), _dump(back), warnings)
    assert lost == [], f"{fname} -> {target}: changed without a warning: {lost[:12]}"


# Every ordered pair takes every drawn conversation, as in tests/protocols/test_roundtrip.py:
# the pairs share the draws (a test per pair was 30 tests, 8.5 s of CPU, most of it drawing).
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv=conversations())
def test_warnings_name_every_path_a_conversion_loses(conv):
    for a, b in PAIRS:
        codec = protocols.get(a)
        start = codec.decode_request(codec.encode_request(conv).value).value
        back, warnings = convert_canonical(start, b)
        lost = silent(_dump(start), _dump(back), warnings)
        assert lost == [], f"{a} -> {b}: changed without a warning: {lost[:12]}"


# -- tool schemas: every rewrite an encoder makes is one of REWRITES, and warned -------------

# A catalogue of schemas that tempt a vendor to change them (no root type, $defs and $ref,
# const, oneOf/allOf, additionalProperties, $schema, formats, integer enums, nested untyped
# objects, annotations), with each rewrite's own example.
SCHEMAS = [
    *(r.example for r in REWRITES),
    {},
    {"type": "object"},
    {"type": ["object", "null"], "properties": {}},
    {
        "type": "object",
        "$defs": {"c": {"type": "string"}},
        "properties": {"a": {"$ref": "#/$defs/c"}},
    },
    {
        "type": "object",
        "properties": {
            "a": {"const": 1},
            "b": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        },
        "additionalProperties": False,
    },
    {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"d": {"type": "string", "format": "uuid"}},
    },
    {
        "type": "object",
        "properties": {"n": {"type": "integer", "enum": [1, 2]}, "o": {"properties": {"x": {}}}},
        "required": ["n"],
    },
    {
        "type": "object",
        "properties": {"a": {"type": "string", "title": "A", "default": "x", "examples": ["y"]}},
        "allOf": [{"required": ["a"]}],
    },
]

# Which vendors make each rewrite (a vendor that starts or stops rewriting changes this table).
REWRITTEN_BY = {OBJECT_ROOT.code: {"anthropic", "bedrock", "mcp"}}


def _declaring(schema: dict[str, Any]) -> Conversation:
    return Conversation(
        tools=[Tool(name="lookup", parameters=schema)],
        messages=[Message(role="user", parts=[Text(text="hi")])],
    )


def _sent_schema(protocol: str, schema: dict[str, Any]) -> tuple[Any, list[ConversionWarning]]:
    codec = protocols.get(protocol)
    there = codec.encode_request(_declaring(schema))
    back = codec.decode_request(there.value).value
    return back.tools[0].parameters, there.warnings


@pytest.mark.parametrize("rewrite", REWRITES, ids=[r.code for r in REWRITES])
def test_each_schema_rewrite_is_made_by_its_vendors_and_each_emits_its_warning(rewrite):
    rewriters = set()
    for protocol in NAMES:
        sent, warnings = _sent_schema(protocol, rewrite.example)
        if sent != rewrite.example:
            rewriters.add(protocol)
            assert sent == rewrite.rewrite(rewrite.example), protocol
            assert [w.path for w in warnings if w.code == rewrite.code] == ["tools[0].parameters"]
        else:
            assert [w for w in warnings if w.code == rewrite.code] == [], protocol
    assert rewriters == REWRITTEN_BY[rewrite.code]


@pytest.mark.parametrize("protocol", NAMES)
@pytest.mark.parametrize("schema", SCHEMAS, ids=[f"schema{i}" for i in range(len(SCHEMAS))])
def test_no_encoder_changes_a_tool_schema_without_a_warning(protocol, schema):
    conv = _declaring(schema)
    back, warnings = convert_canonical(conv, protocol)
    tools = [p for p in changed_paths(_dump(conv), _dump(back)) if p.startswith("tools")]
    assert [p for p in tools if not covered(p, warnings)] == []
    rewrites = {w.code for w in warnings if w.path.startswith("tools[0].parameters")}
    assert rewrites <= {r.code for r in REWRITES}


# -- what the long generated-payload run found ------------------------------------------------


def test_a_result_whose_call_openai_chat_drops_says_it_loses_its_name():
    # A call inside a user message cannot be sent to OpenAI Chat; its result then reads back
    # without the tool name (a tool message names none) and says so.
    conv = Conversation(
        tools=[Tool(name="get_weather", parameters={"type": "object"})],
        messages=[
            Message(role="user", parts=[Text(text="hi"), ToolCall(id="t1", name="get_weather")]),
            Message(
                role="tool", parts=[ToolResult(call_id="t1", name="get_weather", content="18C")]
            ),
        ],
    )
    back, warnings = convert_canonical(conv, "openai-chat")
    assert back.messages[1].parts[0].name is None
    assert "result_name_dropped" in {w.code for w in warnings}
    assert silent(_dump(conv), _dump(back), warnings) == []


def test_an_image_of_no_media_type_stays_so_through_openai_responses():
    image = Image(media_type="", data="aGk=")
    conv = Conversation(
        tools=[Tool(name="see", parameters={"type": "object"})],
        messages=[
            Message(role="user", parts=[Text(text="look")]),
            Message(role="assistant", parts=[ToolCall(id="c1", name="see")]),
            Message(role="tool", parts=[ToolResult(call_id="c1", name="see", content=[image])]),
        ],
    )
    back, warnings = convert_canonical(conv, "openai-responses")
    assert back.messages[2].parts[0].content == [image]
    assert silent(_dump(conv), _dump(back), warnings) == []
