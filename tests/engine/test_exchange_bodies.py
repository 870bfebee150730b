"""A session's exchanges kept shared (flowdebug.engine.session.exchange_bodies): a request's
lists hold the objects of the request before where they start with its items, an exact body
text that is its parsed body's compact JSON is a reference, and both give back the exchange
as it went."""

from __future__ import annotations

import json

from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.exchange_bodies import (
    JSON_OF,
    compact,
    expanded,
    raw_text,
    shared,
)
from flowdebug.players.live.player import live_player


def _exchange(turns: int, protocol: str = "anthropic") -> dict:
    request = {
        "model": "m",
        "messages": [{"role": "user", "content": f"t{i}"} for i in range(turns)],
    }
    return {
        "protocol": protocol,
        "request": request,
        "raw_request": compact(request),
        "raw_response": "data: {}\n\n",
        "step": turns,
    }


def test_a_request_shares_the_history_items_of_the_one_before():
    before = shared(_exchange(3), None)
    after = shared(_exchange(5), before)
    old, new = before["request"]["messages"], after["request"]["messages"]
    assert all(a is b for a, b in zip(old, new[:3], strict=True))
    assert new == _exchange(5)["request"]["messages"]


def test_a_history_that_does_not_extend_the_one_before_is_kept_as_it_came():
    before = shared(_exchange(3), None)
    fresh = _exchange(5)
    fresh["request"]["messages"][0] = {"role": "user", "content": "edited"}
    after = shared(fresh, before)
    assert after["request"]["messages"] is fresh["request"]["messages"]


def test_a_history_equal_only_to_python_is_not_shared():
    """True == 1 == 1.0 in Python, not on the wire: the kept request shows what was sent."""
    before = shared(_exchange(3), None)
    before["request"]["messages"][0]["content"] = 1
    fresh = _exchange(5)
    fresh["request"]["messages"][0]["content"] = True
    after = shared(fresh, before)
    assert after["request"]["messages"][0]["content"] is True
    assert json.dumps(after["request"]) == json.dumps(fresh["request"])


def test_another_protocol_shares_nothing():
    before = shared(_exchange(3), None)
    after = shared(_exchange(5, "openai-chat"), before)
    assert after["request"]["messages"][0] is not before["request"]["messages"][0]


def test_an_exact_text_that_is_the_compact_json_is_kept_as_a_reference():
    kept = shared(_exchange(2), None)
    assert kept["raw_request"] == {JSON_OF: "request"}
    assert raw_text(kept, "raw_request") == compact(_exchange(2)["request"])


def test_a_text_sent_otherwise_stays_text():
    spaced = _exchange(2)
    spaced["raw_request"] = json.dumps(spaced["request"])  # ", " and ": " as some SDKs send
    kept = shared(spaced, None)
    assert kept["raw_request"] == spaced["raw_request"]
    assert kept["raw_response"] == "data: {}\n\n"  # a stream, no JSON


def test_expanded_gives_the_exchange_as_it_went_keys_in_order():
    original = _exchange(4)
    got = expanded(shared(original, shared(_exchange(2), None)))
    assert json.dumps(got) == json.dumps(original)


def test_a_live_session_keeps_each_request_sharing_the_history_of_the_one_before(emulator):
    session = Session.from_scenario("weather")
    session.player = live_player("anthropic", base_url=emulator.base_url("anthropic"), api_key="k")
    while session.state.status not in ("finished", "halted"):
        session.step()
    first, second = session.state.exchanges
    old, new = first["request"]["messages"], second["request"]["messages"]
    assert len(new) > len(old) and all(a is b for a, b in zip(old, new, strict=False))
    assert second["raw_request"] == {JSON_OF: "request"}
    assert json.loads(raw_text(second, "raw_request") or "") == emulator.requests[-1]["body"]
