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
from flowdebug.model import Conversation, ModelResponse, dump
from flowdebug.protocols.base import ConversionWarning
from tests.test_real_fixtures import FILES, MCP_KINDS, _decode, _load, _split
from tests.test_roundtrip import conversations

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


def silent(before: dict[str, Any], after: dict[str, Any], warnings) -> list[str]:
    return sorted(p for p in changed_paths(before, after) if not covered(p, warnings))


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


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[f"{a}->{b}" for a, b in PAIRS])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv=conversations())
def test_warnings_name_every_path_a_conversion_loses(conv, a, b):
    codec = protocols.get(a)
    start = codec.decode_request(codec.encode_request(conv).value).value
    back, warnings = convert_canonical(start, b)
    lost = silent(_dump(start), _dump(back), warnings)
    assert lost == [], f"{a} -> {b}: changed without a warning: {lost[:12]}"
