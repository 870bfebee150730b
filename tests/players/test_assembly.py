"""The argument replay: each vendor's stream, as its codec writes it, read back by the reader
its folder declares (``Facts.stream_arguments``) into arguments growing call by call."""

from __future__ import annotations

import itertools
import json

import pytest

from flowdebug import protocols
from flowdebug.players.assembly import ArgumentAssembler, ArgumentSnapshot, assemble
from tests import cases

STREAMED = [n for n in protocols.model_protocols() if protocols.facts(n).stream_arguments]


@pytest.mark.parametrize("name", STREAMED)
def test_the_last_snapshot_of_each_call_is_its_arguments(name):
    resp = cases.WEATHER_TOOL_USE
    events = protocols.get(name).encode_stream(resp).value
    snaps = assemble(name, events)
    for index, call in enumerate(resp.message.tool_calls):
        texts = [s.text for s in snaps if s.index == index]
        assert texts, f"no snapshot for call {index}"
        assert json.loads(texts[-1]) == call.arguments
        # Each snapshot extends the one before: the arguments grow, they are never rewritten.
        assert all(b.startswith(a) for a, b in itertools.pairwise(texts))


@pytest.mark.parametrize("name", ["anthropic", "openai-chat", "openai-responses", "bedrock"])
def test_fragmented_vendors_show_arguments_in_more_than_one_step(name):
    events = protocols.get(name).encode_stream(cases.WEATHER_TOOL_USE).value
    snaps = assemble(name, events)
    assert len(snaps) > len(cases.WEATHER_TOOL_USE.message.tool_calls)


def test_feed_returns_what_each_event_adds_and_keeps_every_step():
    assembler = ArgumentAssembler("anthropic")
    start = {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use"}}
    delta = {"type": "content_block_delta", "index": 1}
    assert assembler.feed(start) == []
    first = assembler.feed(delta | {"delta": {"type": "input_json_delta", "partial_json": '{"a"'}})
    second = assembler.feed(delta | {"delta": {"type": "input_json_delta", "partial_json": ": 1}"}})
    assert first == [ArgumentSnapshot(0, '{"a"')]
    assert second == [ArgumentSnapshot(0, '{"a": 1}')]
    assert assembler.snapshots == first + second


def test_a_delta_for_a_block_no_tool_use_opened_is_not_an_argument():
    assembler = ArgumentAssembler("anthropic")
    event = {"type": "content_block_delta", "index": 0}
    assert (
        assembler.feed(event | {"delta": {"type": "input_json_delta", "partial_json": "{"}}) == []
    )


@pytest.mark.parametrize("name", [*protocols.PROTOCOLS, "no-such-protocol"])
def test_odd_events_are_skipped_never_raised(name):
    odd = [
        None,
        1,
        "data",
        [],
        {"type": "content_block_start", "index": [1], "content_block": {"type": "tool_use"}},
        {"choices": [{"index": {}, "delta": {"tool_calls": [{"index": 0}]}}]},
        {"contentBlockStart": {"contentBlockIndex": {}, "start": {"toolUse": {}}}},
        {"candidates": [{"content": {"parts": [{"functionCall": {"args": "x"}}]}}]},
    ]
    assembler = ArgumentAssembler(name)
    for event in odd:
        assert all(isinstance(s, ArgumentSnapshot) for s in assembler.feed(event))


def test_a_protocol_without_a_stream_reader_gives_no_snapshots():
    events = [{"jsonrpc": "2.0", "id": 1, "result": {"content": []}}]
    assert assemble("mcp", events) == []
