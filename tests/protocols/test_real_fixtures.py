"""Real payloads written by others (SDK tests, cassettes, vendor docs) through our codecs.

Each file in ``tests/fixtures/real`` (sources in its README) is detected, decoded and checked
against values read off the payload, then converted to every other protocol and back: call ids,
names, arguments and the pairing of results must survive, or the warnings must name what was
lost.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from flowdebug.lint.linter import format_finding, lint_payload
from flowdebug.model import (
    Conversation,
    HostedCall,
    HostedResult,
    ModelResponse,
    Thinking,
    ToolCall,
    ToolResult,
)
from flowdebug.protocols import PROTOCOLS, ConversionWarning, detect, get
from flowdebug.protocols.base import safe_call_id, safe_name
from flowdebug.protocols.convert import decode
from tests.paths import REAL
from tests.protocols.real_expect import Call, Expect, Result, more_expectations
from tests.sdkcheck import validate_wire

FILES = sorted(p.name for p in REAL.glob("*.json"))
MCP_KINDS = {"tools_list", "tools_call", "call_result", "transcript"}


WEATHER_SF_C = {"location": "San Francisco, CA", "units": "c"}
QUERY_ARGS = {
    "name": "May 2022 Fulfilled Orders Not Delivered on Time",
    "table_name": "orders",
    "columns": [
        "id",
        "status",
        "expected_delivery_date",
        "delivered_at",
        "shipped_at",
        "ordered_at",
        "canceled_at",
    ],
    "conditions": [
        {"column": "ordered_at", "operator": ">=", "value": "2022-05-01"},
        {"column": "ordered_at", "operator": "<=", "value": "2022-05-31"},
        {"column": "status", "operator": "=", "value": "fulfilled"},
        {
            "column": "delivered_at",
            "operator": ">",
            "value": {"column_name": "expected_delivery_date"},
        },
    ],
    "order_by": "asc",
}
THEATERS = {
    "name": "find_theaters",
    "content": {
        "movie": "Barbie",
        "theaters": [
            {
                "name": "AMC Mountain View 16",
                "address": "2000 W El Camino Real, Mountain View, CA 94040",
            },
            {"name": "Regal Edwards 14", "address": "245 Castro St, Mountain View, CA 94040"},
        ],
    },
}
PYD_IDS = (
    "pyd_ai_309104509f9445698b90dfc90c6480e7",
    "pyd_ai_58dcf1120deb437ba26b915fbcd2a96a",
    "pyd_ai_950dc7a3c30c4e32a3dc205b2c86e08d",
)
MCP_STRUCTURED = {"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65}

EXPECTED: dict[str, Expect] = {
    # --- Anthropic ------------------------------------------------------------------------
    "anthropic.request.sdk-runner-sf-tool-result.json": Expect(
        tools=("get_weather",),
        required={"get_weather": ["location", "units"]},
        calls=(Call("toolu_01RVA12CSF1d8nekhZFR7Bcb", "get_weather", WEATHER_SF_C),),
        results=(
            Result(
                "toolu_01RVA12CSF1d8nekhZFR7Bcb",
                "get_weather",
                "The weather in San Francisco, CA is currently sunny with a temperature of 20°C.",
            ),
        ),
    ),
    "anthropic.response.sdk-runner-sf-weather.json": Expect(
        calls=(Call("toolu_01RVA12CSF1d8nekhZFR7Bcb", "get_weather", WEATHER_SF_C),),
        stop_reason="tool_use",
        text="",
    ),
    "anthropic.stream.sdk-runner-sf-text-then-tool.json": Expect(
        calls=(
            Call(
                "toolu_01BxxZChiKMMRsAWwPDpTQdT",
                "get_weather",
                {"location": "San Francisco, CA", "units": "f"},
            ),
        ),
        stop_reason="tool_use",
        text="I'll look up the weather in San Francisco for you.",
    ),
    "anthropic.stream.sdk-tool-use-paris.json": Expect(
        calls=(Call("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", {"location": "Paris"}),),
        stop_reason="tool_use",
        text="I'll check the current weather in Paris for you.",
    ),
    "anthropic.response.pydantic-ai-cassette-thinking-then-tool.json": Expect(
        calls=(Call("toolu_01YGzqpRE16Vricda3Aqcejo", "get_user_country", {}),),
        stop_reason="tool_use",
        text="I'll help you find the largest city in your country. First, let me determine "
        "which country you're from.",
        thinking=("The user is asking about the largest city", "EqEECkYICxgCKkAo3UA4"),
    ),
    "anthropic.request.pydantic-ai-cassette-thinking-replay-tool-result.json": Expect(
        tools=("get_user_country",),
        tool_choice="auto",
        calls=(Call("toolu_01YGzqpRE16Vricda3Aqcejo", "get_user_country", {}),),
        results=(Result("toolu_01YGzqpRE16Vricda3Aqcejo", "get_user_country", "Mexico"),),
        thinking=("The user is asking about the largest city", "EqEECkYICxgCKkAo3UA4"),
    ),
    # --- OpenAI Chat ----------------------------------------------------------------------
    "openai-chat.request.llm-cassette-two-sequential-calls.json": Expect(
        tools=("lookup_population", "can_have_dragons"),
        required={"lookup_population": ["country"], "can_have_dragons": ["population"]},
        calls=(
            Call("call_TTY8UFNo7rNCaOBUNtlRSvMG", "lookup_population", {"country": "Crumpet"}),
            Call("call_aq9UyiSFkzX6W8Ydc33DoI9Y", "can_have_dragons", {"population": 123124}),
        ),
        results=(
            Result("call_TTY8UFNo7rNCaOBUNtlRSvMG", "lookup_population", "123124"),
            Result("call_aq9UyiSFkzX6W8Ydc33DoI9Y", "can_have_dragons", "true"),
        ),
    ),
    "openai-chat.response.sdk-parallel-weather-and-stock.json": Expect(
        calls=(
            Call(
                "call_fdNz3vOBKYgOIpMdWotB9MjY",
                "GetWeatherArgs",
                {"city": "Edinburgh", "country": "GB", "units": "c"},
            ),
            Call(
                "call_h1DWI1POMJLb0KwIyQHWXD4p",
                "get_stock_price",
                {"ticker": "AAPL", "exchange": "NASDAQ"},
            ),
        ),
        stop_reason="tool_use",
        text="",
    ),
    "openai-chat.response.sdk-query-nested-arguments.json": Expect(
        calls=(Call("call_NKpApJybW1MzOjZO2FzwYw0d", "Query", QUERY_ARGS),),
        stop_reason="tool_use",
    ),
    "openai-chat.stream.sdk-parallel-weather-and-stock.json": Expect(
        calls=(
            Call(
                "call_lQnnsesjFMWMQ5IeWPHzR4th",
                "GetWeatherArgs",
                {"city": "Edinburgh", "country": "UK", "units": "c"},
            ),
            Call(
                "call_2xjOUgaCdiwAcl9ZBL9LyMUU",
                "get_stock_price",
                {"ticker": "AAPL", "exchange": "NASDAQ"},
            ),
        ),
        stop_reason="tool_use",
        text="",
    ),
    "openai-chat.stream.sdk-get-weather-nyc.json": Expect(
        calls=(Call("call_5uxEBMFySqqQGu02I5QHA8k6", "get_weather", {"city": "New York City"}),),
        stop_reason="tool_use",
    ),
    # --- OpenAI Responses -----------------------------------------------------------------
    "openai-responses.request.llm-cassette-multiply-output.json": Expect(
        tools=("multiply",),
        required={"multiply": ["a", "b"]},
        calls=(Call("call_nJmCK7SJe3ajdYYplIbH0KgL", "multiply", {"a": 1231, "b": 2331}),),
        results=(Result("call_nJmCK7SJe3ajdYYplIbH0KgL", "multiply", "2869461"),),
    ),
    "openai-responses.response.llm-cassette-multiply.json": Expect(
        calls=(Call("call_nJmCK7SJe3ajdYYplIbH0KgL", "multiply", {"a": 1231, "b": 2331}),),
        item_ids={0: "fc_05c01d5dceb461c50169fab1bc6a208196a8f7957526d1ef99"},
        stop_reason="tool_use",
    ),
    "openai-responses.stream.llm-cassette-multiply.json": Expect(
        calls=(Call("call_sVidsfFJ6zlzRpelrPkTPlpd", "multiply", {"a": 1231, "b": 2331}),),
        item_ids={0: "fc_00d64fa806f333310169fab1bf324481a0852cda3180856290"},
        stop_reason="tool_use",
    ),
    "openai-responses.response.pydantic-ai-cassette-parallel-locations.json": Expect(
        calls=(
            Call("call_8b62trAHmINdlPZmlMeMfFWF", "get_location", {"loc_name": "Londos"}),
            Call("call_WwN2wkgN4Rd3KNJZDj2nMXuO", "get_location", {"loc_name": "London"}),
        ),
        item_ids={
            0: "fc_0a4779586464cbd900697ccca057908195ae0f71a641babecf",
            1: "fc_0a4779586464cbd900697ccca05de88195ae0972ae4dd26603",
        },
        stop_reason="tool_use",
    ),
    "openai-responses.request.pydantic-ai-cassette-retry-and-result.json": Expect(
        tools=("get_location",),
        required={"get_location": ["loc_name"]},
        tool_choice="auto",
        calls=(
            Call("call_8b62trAHmINdlPZmlMeMfFWF", "get_location", {"loc_name": "Londos"}),
            Call("call_WwN2wkgN4Rd3KNJZDj2nMXuO", "get_location", {"loc_name": "London"}),
        ),
        results=(
            Result(
                "call_8b62trAHmINdlPZmlMeMfFWF",
                "get_location",
                'Wrong location, I only know about "London".\n\nFix the errors and try again.',
            ),
            Result("call_WwN2wkgN4Rd3KNJZDj2nMXuO", "get_location", '{"lat": 51, "lng": 0}'),
        ),
    ),
    # --- Gemini ---------------------------------------------------------------------------
    "gemini.request.pydantic-ai-cassette-foreign-call-id.json": Expect(
        tools=("get_answer",),
        required={"get_answer": []},
        calls=(Call("call_openai_xyz", "get_answer", {}),),
        results=(Result("call_openai_xyz", "get_answer", {"return_value": 42}),),
        signatures={0: "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="},
    ),
    "gemini.request.pydantic-ai-cassette-get-country-result.json": Expect(
        tools=("get_country",),
        calls=(Call("pyd_ai_2c58246573624ed1a963f429338ded57", "get_country", {}),),
        results=(
            Result(
                "pyd_ai_2c58246573624ed1a963f429338ded57", "get_country", {"return_value": "Mexico"}
            ),
        ),
        signatures={0: "Et8ECtwEAXLI2nyCB1jKZUE4ZxdH07XhZlpU7X7tlcbNO8oQurN910Rmh6fTq1azIzM7kzq_x"},
    ),
    "gemini.stream.pydantic-ai-cassette-thought-signature.json": Expect(
        calls=(Call(None, "get_country", {}),),
        signatures={0: "Et8ECtwEAXLI2nyCB1jKZUE4ZxdH07XhZlpU7X7tlcbNO8oQurN910Rmh6fTq1azIzM7kzq/x"},
    ),
    "gemini.response.pydantic-ai-cassette-three-parallel-calls.json": Expect(
        calls=(Call(None, "generate_topic", {}),) * 3,
        signatures={0: "EqoICqcIAXLI2nzcOyNtSiJhND+bU4eI7ZVnOTaxeFLUMDAkmiNa6Fzu"},
    ),
    "gemini.request.pydantic-ai-cassette-three-parallel-results.json": Expect(
        tools=("generate_topic", "final_result"),
        required={"final_result": ["response"]},
        system="Tell three jokes. Generate topics with the generate_topic tool.",
        tool_choice="required",
        calls=tuple(Call(i, "generate_topic", {}) for i in PYD_IDS),
        results=(
            Result(PYD_IDS[0], "generate_topic", {"return_value": "golf"}),
            Result(PYD_IDS[1], "generate_topic", {"return_value": "golf"}),
            Result(PYD_IDS[2], "generate_topic", {"return_value": "penguins"}),
        ),
        signatures={0: "EqoICqcIAXLI2nzcOyNtSiJhND-bU4eI7ZVnOTaxeFLUMDAkmiNa6Fzu"},
    ),
    "gemini.response.cookbook-find-theaters.json": Expect(
        calls=(Call(None, "find_theaters", {"movie": "Barbie", "location": "Mountain View, CA"}),),
    ),
    "gemini.request.cookbook-find-theaters-function-role.json": Expect(
        tools=("find_movies", "find_theaters", "get_showtimes"),
        required={
            "find_movies": ["description"],
            "find_theaters": ["location"],
            "get_showtimes": ["location", "movie", "theater", "date"],
        },
        calls=(Call(None, "find_theaters", {"location": "Mountain View, CA", "movie": "Barbie"}),),
        results=(Result(0, "find_theaters", THEATERS),),
    ),
    # --- MCP ------------------------------------------------------------------------------
    "mcp.tools_list.spec-get-weather-icons.json": Expect(
        tools=("get_weather",),
        required={"get_weather": ["location"]},
    ),
    "mcp.tools_list.schema-draft-string-id.json": Expect(
        tools=("get_weather",),
        required={"get_weather": ["location"]},
    ),
    "mcp.tools_call.spec-get-weather-new-york.json": Expect(
        calls=(Call("2", "get_weather", {"location": "New York"}),),
    ),
    "mcp.call_result.spec-get-weather-new-york.json": Expect(
        results=(
            Result(
                "2",
                None,
                "Current weather in New York:\nTemperature: 72°F\nConditions: Partly cloudy",
            ),
        ),
    ),
    "mcp.call_result.spec-structured-content.json": Expect(
        results=(Result("5", None, MCP_STRUCTURED),),
        structured=MCP_STRUCTURED,
    ),
    "mcp.call_result.spec-execution-error.json": Expect(
        results=(
            Result(
                "4",
                None,
                "Invalid departure date: must be in the future. Current date is 08/08/2025.",
                is_error=True,
            ),
        ),
    ),
}

EXPECTED.update(more_expectations())


# --- helpers ----------------------------------------------------------------------------------


def _split(fname: str) -> tuple[str, str]:
    protocol, kind, _ = fname.split(".", 2)
    return protocol, kind


def _load(fname: str) -> Any:
    return json.loads((REAL / fname).read_text(encoding="utf-8"))


def _decode(protocol: str, kind: str, payload: Any) -> tuple[Conversation | ModelResponse, list]:
    if kind == "fragment":  # one message or content array: read as the payload it stands for
        decoded = decode(payload)
        value = decoded.response if decoded.response is not None else decoded.conversation
        return value, decoded.warnings
    codec = get(protocol)
    if kind == "request" or kind in MCP_KINDS:
        out = codec.decode_request(payload)
    elif kind == "response":
        out = codec.decode_response(payload)
    else:
        out = codec.decode_stream(payload)
    return out.value, out.warnings


def _parts(value: Conversation | ModelResponse) -> list[Any]:
    messages = value.messages if isinstance(value, Conversation) else [value.message]
    return [p for m in messages for p in m.parts]


def _calls(value: Conversation | ModelResponse) -> list[ToolCall]:
    return [p for p in _parts(value) if isinstance(p, ToolCall)]


def _results(value: Conversation | ModelResponse) -> list[ToolResult]:
    return [p for p in _parts(value) if isinstance(p, ToolResult)]


def _hosted(value: Conversation | ModelResponse) -> list[HostedCall]:
    return [p for p in _parts(value) if isinstance(p, HostedCall)]


def _hosted_results(value: Conversation | ModelResponse) -> list[HostedResult]:
    return [p for p in _parts(value) if isinstance(p, HostedResult)]


def _thinking(value: Conversation | ModelResponse) -> list[Thinking]:
    return [p for p in _parts(value) if isinstance(p, Thinking)]


def _content_matches(result: ToolResult, expected: str | dict[str, Any]) -> bool:
    if isinstance(expected, str):
        return result.text == expected
    try:
        return json.loads(result.text) == expected
    except json.JSONDecodeError:
        return False


def _codes(warnings: list[ConversionWarning]) -> set[str]:
    return {w.code for w in warnings}


# --- the fixture set --------------------------------------------------------------------------


def test_every_real_fixture_has_expectations_and_a_named_source():
    readme = (REAL / "README.md").read_text(encoding="utf-8")
    assert len(FILES) >= 20
    assert set(FILES) == set(EXPECTED)
    for fname in FILES:
        assert f"`{fname}`" in readme, f"{fname} has no source in README.md"
    assert {_split(f)[0] for f in FILES} == set(PROTOCOLS)
    kinds = {_split(f)[1] for f in FILES}
    assert {"request", "response", "stream", "tools_list", "tools_call", "call_result"} <= kinds


# --- (a) detection ----------------------------------------------------------------------------


@pytest.mark.parametrize("fname", FILES)
def test_detect_names_the_protocol_and_kind_in_the_file_name(fname):
    protocol, kind = _split(fname)
    if kind != "fragment":
        assert detect(_load(fname)) == (protocol, kind)
        return
    # a fragment is no whole payload; it is read as one, saying in one line what was assumed
    assert detect(_load(fname)) is None
    decoded = decode(_load(fname))
    assert decoded.protocol == protocol
    (note,) = [w for w in decoded.warnings if w.code == "fragment_assumed"]
    assert "\n" not in note.message and note.message


# --- (b) decoding -----------------------------------------------------------------------------


@pytest.mark.parametrize("fname", FILES)
def test_decode_gives_the_tools_calls_and_results_in_the_payload(fname):
    protocol, kind = _split(fname)
    exp = EXPECTED[fname]
    value, _ = _decode(protocol, kind, _load(fname))

    if isinstance(value, Conversation):
        assert [t.name for t in value.tools] == list(exp.tools)
        for name, required in exp.required.items():
            assert list(value.tool(name).parameters.get("required", [])) == required
        if exp.system is not None:
            assert value.system == exp.system
        if exp.tool_choice is not None:
            assert value.tool_choice is not None and value.tool_choice.mode == exp.tool_choice
    else:
        assert not exp.tools
        if exp.stop_reason is not None:
            assert value.stop_reason == exp.stop_reason
        if exp.text is not None:
            assert value.message.text == exp.text

    calls = _calls(value)
    assert [c.name for c in calls] == [c.name for c in exp.calls]
    assert [c.arguments for c in calls] == [c.arguments for c in exp.calls]
    for got, want in zip(calls, exp.calls, strict=True):
        if want.id is None:
            assert isinstance(got.id, str) and got.id
        else:
            assert got.id == want.id
        assert got.raw_arguments is None
    assert len({c.id for c in calls}) == len(calls), "call ids must be distinct"

    results = _results(value)
    assert len(results) == len(exp.results)
    for got, want in zip(results, exp.results, strict=True):
        call_id = calls[want.call].id if isinstance(want.call, int) else want.call
        assert got.call_id == call_id
        assert got.name == want.name
        assert _content_matches(got, want.content), got.text
        assert got.is_error is want.is_error
    if exp.structured is not None:
        assert results[0].structured == exp.structured

    for index, prefix in exp.signatures.items():
        details = calls[index].provider_details or {}
        assert str(details.get("gemini", {}).get("thoughtSignature", "")).startswith(prefix)
    for index, item_id in exp.item_ids.items():
        details = calls[index].provider_details or {}
        assert details.get("openai-responses", {}).get("id") == item_id
    assert [h.name for h in _hosted(value)] == list(exp.hosted)
    if exp.thinking is not None:
        (thinking,) = _thinking(value)
        assert thinking.text.startswith(exp.thinking[0])
        assert (thinking.signature or "").startswith(exp.thinking[1])


# --- (c) conversion to every other protocol and back ------------------------------------------

CONVERSIONS = [(f, target) for f in FILES for target in PROTOCOLS if target != _split(f)[0]]


@pytest.mark.parametrize(
    ("fname", "target"), CONVERSIONS, ids=[f"{f[:-5]}->{t}" for f, t in CONVERSIONS]
)
def test_conversion_keeps_call_ids_names_arguments_and_pairing_or_warns(fname, target):
    protocol, kind = _split(fname)
    original, _ = _decode(protocol, kind, _load(fname))
    codec = get(target)
    if isinstance(original, Conversation):
        encoded = codec.encode_request(original)
        back = codec.decode_request(encoded.value)
    else:
        encoded = codec.encode_response(original)
        back = codec.decode_response(encoded.value)
    warnings = [*encoded.warnings, *back.warnings]
    codes = _codes(warnings)
    where = f"{fname} -> {target} -> back; warnings: {sorted(codes)}"
    if target != "mcp":
        validate_wire(
            target, "request" if isinstance(original, Conversation) else "response", encoded.value
        )

    back_hosted = {h.id: h for h in _hosted(back.value)}
    for hosted in _hosted(original):
        if hosted.id not in back_hosted:
            assert "hosted_call_dropped" in codes, f"hosted call {hosted.id} lost: {where}"
    back_hosted_results = {r.call_id for r in _hosted_results(back.value)}
    for hosted_result in _hosted_results(original):
        if hosted_result.call_id not in back_hosted_results:
            assert "hosted_result_dropped" in codes, f"hosted result lost: {where}"

    back_calls = {c.id: c for c in _calls(back.value)}
    for call in _calls(original):
        call_id, name = safe_call_id(target, call.id), safe_name(target, call.name)
        if call_id != call.id:
            assert "call_id_renamed" in codes, where
        if name != call.name:
            assert "tool_name_renamed" in codes, where
        assert call_id in back_calls, f"call {call.id} lost: {where}"
        got = back_calls[call_id]
        assert got.name == name, where
        assert got.arguments == call.arguments, where
        for key, value in (call.provider_details or {}).items():
            if key != target and (got.provider_details or {}).get(key) != value:
                assert "provider_details_dropped" in codes, f"{key} details of {call.id}: {where}"

    back_results = {r.call_id: r for r in _results(back.value)}
    original_call_ids = {c.id for c in _calls(original)}
    for result in _results(original):
        call_id = safe_call_id(target, result.call_id)
        assert call_id in back_results, f"result for {result.call_id} lost: {where}"
        got = back_results[call_id]
        if result.call_id in original_call_ids:
            assert call_id in back_calls, f"result {call_id} unpaired: {where}"
        assert got.text == result.text, where
        if got.is_error != result.is_error:
            assert "error_flag_lost" in codes, where
        if result.structured is not None and got.structured != result.structured:
            assert "structured_content_dropped" in codes, where

    if isinstance(original, Conversation):
        back_tools = [t.name for t in back.value.tools]
        assert back_tools == [safe_name(target, t.name) for t in original.tools], where

    for thinking in _thinking(original):
        kept = any(
            t.text == thinking.text and t.signature == thinking.signature
            for t in _thinking(back.value)
        )
        assert kept or any(c.startswith("thinking") for c in codes), where


# --- (d) lint: what a vendor accepted raises no error under that vendor's rules ---------------


@pytest.mark.parametrize("fname", FILES)
def test_lint_raises_no_error_on_a_payload_its_vendor_accepted(fname):
    protocol, _ = _split(fname)
    findings = lint_payload(_load(fname), protocol)
    errors = [format_finding(f) for f in findings if f.level == "error"]
    assert errors == [], f"{fname}: {errors}"
