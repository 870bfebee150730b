"""Bedrock against every other protocol: A -> Bedrock -> A and Bedrock -> B -> Bedrock keep
every call id, name and argument and every result's pairing, content and error flag, or the
warnings name the loss; what a conversion changes is named at its canonical path; every
payload emitted along the way passes botocore's validation."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from flowdebug import protocols
from flowdebug.model import Conversation, ModelResponse, dump
from flowdebug.protocols.bedrock import CODEC
from tests import cases
from tests.hypothesis_profiles import examples
from tests.paths import REAL, WIRE
from tests.protocols.bedrock.botocheck import request_problems, response_problems
from tests.protocols.bedrock.helpers import through_bedrock
from tests.protocols.test_no_silent_change import silent
from tests.protocols.test_roundtrip import (
    LOSS_CODES,
    conversations,
    each_pair_keeps_or_warns,
    losses,
    roundtrip,
)

OTHERS = [n for n in protocols.PROTOCOLS if n != "bedrock"]
MODEL_PROTOCOLS = [n for n in OTHERS if n != "mcp"]


PAIRS = [(a, "bedrock") for a in OTHERS] + [("bedrock", b) for b in OTHERS]


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[f"{a}->{b}" for a, b in PAIRS])
def test_weather_survives_every_pair_with_bedrock_without_loss(a, b):
    start, back, _ = roundtrip(cases.WEATHER_CONTINUATION, a, b)
    assert losses(start, back) == set()


# Every pair (and, below, every other vendor) takes every drawn conversation, as in
# tests/protocols/test_roundtrip.py: they share the draws, which were most of the time of a test
# per pair drawing its own. Each still gets every example; a failure names it.
@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv=conversations())
def test_a_to_b_to_a_with_bedrock_keeps_calls_and_results_or_warns(conv):
    each_pair_keeps_or_warns(conv, PAIRS)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv=conversations())
def test_bedrock_round_trip_is_exact_and_every_request_validates(conv):
    first = CODEC.encode_request(conv)
    assert request_problems(first.value) == ""
    decoded = CODEC.decode_request(first.value).value
    again = CODEC.encode_request(decoded)
    assert again.value == first.value and again.warnings == []
    assert CODEC.decode_request(again.value).value == decoded


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv=conversations())
def test_warnings_name_every_path_a_conversion_to_and_from_bedrock_changes(conv):
    for b in OTHERS:
        # canonical (as Bedrock reads it) -> B, and canonical (as B reads it) -> Bedrock.
        start = CODEC.decode_request(CODEC.encode_request(conv).value).value
        there = protocols.get(b).encode_request(start)
        back = protocols.get(b).decode_request(there.value)
        lost = silent(dump(start), dump(back.value), [*there.warnings, *back.warnings])
        assert lost == [], f"bedrock -> {b}: {lost}"
        start = protocols.get(b).decode_request(protocols.get(b).encode_request(conv).value).value
        back, found = through_bedrock(start)
        warnings = [*CODEC.encode_request(start).warnings]
        assert silent(dump(start), dump(back), warnings) == [], (b, found)


def _other_references() -> list[str]:
    return sorted(
        p.name
        for p in WIRE.glob("*.json")
        if not p.name.startswith(("bedrock.", "mcp."))
        and (".request." in p.name or ".response." in p.name or ".stream." in p.name)
        and ".variant." not in p.name
    )


@pytest.mark.parametrize("fname", _other_references())
def test_other_references_convert_to_valid_bedrock_and_name_every_change(fname):
    payload = json.loads((WIRE / fname).read_text())
    protocol = protocols.detect(payload)
    assert protocol is not None
    name, kind = protocol
    codec = protocols.get(name)
    if kind == "request":
        original = codec.decode_request(payload).value
        there = CODEC.encode_request(original)
        assert request_problems(there.value) == ""
        back = CODEC.decode_request(there.value).value
    else:
        decode = codec.decode_response if kind == "response" else codec.decode_stream
        original = decode(payload).value
        there = CODEC.encode_response(original)
        assert response_problems(there.value) == []
        back = CODEC.decode_response(there.value).value
        streamed = CODEC.decode_stream(CODEC.encode_stream(original).value).value
        assert streamed == back
    assert silent(dump(original), dump(back), there.warnings) == []
    if isinstance(original, Conversation):
        assert losses(original, back) == set()
    else:
        assert isinstance(back, ModelResponse)
        assert [(c.id, c.name, c.arguments) for c in back.message.tool_calls] == [
            (c.id, c.name, c.arguments) for c in original.message.tool_calls
        ]


def _other_real_requests() -> list[str]:
    out = []
    for p in sorted(REAL.glob("*.json")):
        if p.name.startswith(("mcp.", "bedrock.")):
            continue
        try:
            payload = json.loads(p.read_text())
        except ValueError:
            continue
        found = protocols.detect(payload)
        if found is not None and found[1] == "request":
            out.append(p.name)
    return out


@pytest.mark.parametrize("fname", _other_real_requests())
def test_other_vendors_real_requests_become_valid_bedrock_requests(fname):
    payload = json.loads((REAL / fname).read_text())
    name, _ = protocols.detect(payload)
    original = protocols.get(name).decode_request(payload).value
    there = CODEC.encode_request(original)
    assert request_problems(there.value) == ""
    back = CODEC.decode_request(there.value).value
    assert silent(dump(original), dump(back), there.warnings) == []
    found = {w.code for w in there.warnings}
    for invariant in losses(original, back):
        assert found & LOSS_CODES[invariant], (fname, invariant, sorted(found))


def test_the_registry_detects_every_bedrock_payload_as_bedrock():
    for path in [*WIRE.glob("bedrock.*.json"), *REAL.glob("bedrock.*.json")]:
        payload = json.loads(path.read_text())
        kind = CODEC.detect(payload)
        assert kind is not None, path.name
        assert protocols.detect(payload) == ("bedrock", kind), path.name


def test_bedrock_detects_no_other_protocols_payload():
    for folder in (WIRE, REAL):
        for path in folder.glob("*.json"):
            if path.name.startswith("bedrock."):
                continue
            try:
                payload = json.loads(path.read_text())
            except ValueError:
                continue
            assert CODEC.detect(payload) is None, path.name
            assert CODEC.fragment(payload) is None, path.name


def _other_real(kinds: tuple[str, ...]) -> list[str]:
    out = []
    for p in sorted(REAL.glob("*.json")):
        if p.name.startswith("bedrock."):
            continue
        try:
            payload = json.loads(p.read_text())
        except ValueError:
            continue
        found = protocols.detect(payload)
        if found is not None and found[0] != "mcp" and found[1] in kinds:
            out.append(p.name)
    return out


@pytest.mark.parametrize("fname", _other_real(("response", "stream")))
def test_other_vendors_real_turns_become_valid_bedrock_responses_and_streams(fname):
    payload = json.loads((REAL / fname).read_text())
    name, kind = protocols.detect(payload)
    codec = protocols.get(name)
    original = (codec.decode_response if kind == "response" else codec.decode_stream)(payload).value
    there = CODEC.encode_response(original)
    assert response_problems(there.value) == []
    back = CODEC.decode_response(there.value).value
    assert silent(dump(original), dump(back), there.warnings) == []
    events = CODEC.encode_stream(original).value
    assert CODEC.decode_stream(events).value == back
