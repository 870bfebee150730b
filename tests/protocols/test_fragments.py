"""Fragments: one message, item or content entry, or a response's bare content array, as
people paste them from docs and logs, is read as the payload it stands for and says so."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from flowdebug.errors import CodecError
from flowdebug.protocols import detect
from flowdebug.protocols.convert import convert, decode
from tests.paths import WIRE


def wire(name: str):
    return json.loads((WIRE / f"{name}.json").read_text("utf-8"))


# (fragment, the protocol it is, the call ids it holds, the result call ids it holds)
FRAGMENTS = {
    "anthropic assistant message": (
        wire("anthropic.request.continuation")["messages"][1],
        "anthropic",
        ["toolu_01A7Pq3rT9xWcE5bLmN2kVdY", "toolu_01B8Qr4sU0yXdF6cMnO3lWeZ"],
        [],
    ),
    "anthropic user turn of results": (
        wire("anthropic.request.continuation")["messages"][2],
        "anthropic",
        [],
        ["toolu_01A7Pq3rT9xWcE5bLmN2kVdY", "toolu_01B8Qr4sU0yXdF6cMnO3lWeZ"],
    ),
    "anthropic response content": (
        wire("anthropic.response.tool_use")["content"],
        "anthropic",
        ["toolu_01A7Pq3rT9xWcE5bLmN2kVdY", "toolu_01B8Qr4sU0yXdF6cMnO3lWeZ"],
        [],
    ),
    "openai-chat assistant message": (
        wire("openai-chat.request.continuation")["messages"][2],
        "openai-chat",
        ["call_8Kx2vR3mQ1pZ7tY4nW6bL0aD", "call_5Jh9sT2cF8kN1wE3qX7yU4rM"],
        [],
    ),
    "openai-responses function_call item": (
        wire("openai-responses.request.continuation")["input"][1],
        "openai-responses",
        ["call_8Kx2vR3mQ1pZ7tY4nW6bL0aD"],
        [],
    ),
    "gemini model content": (
        wire("gemini.request.continuation")["contents"][1],
        "gemini",
        ["call_4162774a", "call_4162775b"],
        [],
    ),
    "gemini function responses": (
        wire("gemini.request.continuation")["contents"][2],
        "gemini",
        [],
        ["call_4162774a", "call_4162775b"],
    ),
}


def _ids(decoded):
    conv = decoded.as_conversation()
    calls = [c.id for m in conv.messages for c in m.tool_calls]
    results = [r.call_id for m in conv.messages for r in m.tool_results]
    return calls, results


@pytest.mark.parametrize("name", FRAGMENTS)
def test_a_fragment_is_read_as_the_payload_it_stands_for(name):
    fragment, protocol, calls, results = FRAGMENTS[name]
    assert detect(fragment) is None  # no whole payload of any protocol
    decoded = decode(fragment)
    assert decoded.protocol == protocol
    assert _ids(decoded) == (calls, results)
    notes = [w for w in decoded.warnings if w.code == "fragment_assumed"]
    assert len(notes) == 1 and "\n" not in notes[0].message, notes


@pytest.mark.parametrize("name", FRAGMENTS)
def test_a_named_protocol_reads_its_own_fragment(name):
    fragment, protocol, calls, results = FRAGMENTS[name]
    assert _ids(decode(fragment, protocol)) == (calls, results)


@pytest.mark.parametrize("target", ["anthropic", "openai-chat", "openai-responses", "gemini"])
def test_a_fragment_converts_to_every_model_protocol(target):
    fragment = FRAGMENTS["openai-chat assistant message"][0]
    out, warnings = convert(fragment, target)
    assert out and "fragment_assumed" in {w.code for w in warnings}


def test_something_that_is_no_fragment_either_is_refused_with_its_reason():
    with pytest.raises(CodecError, match="nor one message or content array"):
        decode({"hello": "world"})


def test_the_cli_says_in_one_line_what_it_assumed(tmp_path):
    path = tmp_path / "message.json"
    path.write_text(json.dumps(FRAGMENTS["gemini model content"][0]))
    run = subprocess.run(
        [sys.executable, "-m", "flowdebug.cli.main", "convert", str(path), "--to", "anthropic"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assumed = [line for line in run.stderr.splitlines() if "fragment_assumed" in line]
    assert len(assumed) == 1
    # a model turn stands for the response that carried it
    out = json.loads(run.stdout)
    assert out["role"] == "assistant"
    assert [b["type"] for b in out["content"]] == ["tool_use", "tool_use"]


def test_a_responses_response_brings_the_request_fields_it_echoes_into_its_conversation():
    from tests.paths import REAL

    payload = json.loads(
        (REAL / "openai-responses.response.pydantic-ai-cassette-web-search.json").read_text()
    )
    conv = decode(payload).as_conversation()
    assert conv.system == payload["instructions"] == "You are a helpful assistant."
    assert [m.role for m in conv.messages] == ["assistant"]
    hosted = conv.provider_details["openai-responses"]["hosted_tools"]
    assert [t["type"] for t in hosted] == ["web_search"]
