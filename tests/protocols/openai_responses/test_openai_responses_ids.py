"""The item ids the Responses codec makes up for content that arrived without one: the search
for a free one is linear in the payload (it was quadratic in the number of equal contents:
0.3 s to encode a request of 1,000 messages) and gives the same ids as the plain definition."""

from __future__ import annotations

import random

import pytest

from flowdebug.model import Conversation, Message, Text
from flowdebug.protocols.openai_responses import parts as item_parts
from flowdebug.protocols.openai_responses.codec import CODEC
from flowdebug.protocols.openai_responses.parts import DerivedIds, derived_id
from tests import cases

NAME = "openai-responses"


def _first_free(prefix: str, basis: str, used: set[str]) -> str:
    """The definition: the first of basis, basis#1, basis#2... whose derived id is unused."""
    candidate, n = derived_id(prefix, basis), 0
    while candidate in used:
        n += 1
        candidate = derived_id(prefix, f"{basis}\x00#{n}")
    return candidate


def _plain_next(self: DerivedIds, prefix: str, basis: str) -> str:
    return _first_free(prefix, basis, self.used)


def _replies(texts: list[str], explicit: dict[int, str] | None = None) -> Conversation:
    """A user turn then one assistant message per text; ``explicit``: index -> the item id
    the message arrived with."""
    messages = [Message(role="user", parts=[Text(text="go")])]
    for i, text in enumerate(texts):
        details = {NAME: {"id": explicit[i]}} if explicit and i in explicit else None
        messages.append(
            Message(role="assistant", parts=[Text(text=text, provider_details=details)])
        )
    return Conversation(tools=[cases.WEATHER_TOOL], messages=messages)


def test_derived_ids_are_the_first_free_ones_whatever_is_added_between() -> None:
    rng = random.Random(29)
    ids, used = DerivedIds(), set()
    bases = ["ok", "done", "", "ok\x00#1"]
    for _ in range(2000):
        basis = rng.choice(bases)
        if rng.random() < 0.2:  # an id that arrived with the content, maybe a future derived one
            explicit = derived_id("msg", f"{basis}\x00#{rng.randrange(6)}")
            ids.add(explicit)
            used.add(explicit)
            continue
        got = ids.next("msg", basis)
        assert got == _first_free("msg", basis, used)
        if rng.random() < 0.9:  # the decoder adds the id it read, not always the candidate
            ids.add(got)
            used.add(got)


@pytest.mark.parametrize("with_explicit", [False, True])
def test_encoded_and_decoded_requests_are_those_of_the_plain_search(
    monkeypatch: pytest.MonkeyPatch, with_explicit: bool
) -> None:
    texts = ["ok" if i % 3 else "done" for i in range(300)]
    # ids the content arrived with that the search would make up later: it skips them
    explicit = {5: derived_id("msg", "ok\x00#7"), 40: derived_id("msg", "done\x00#20")}
    conv = _replies(texts, explicit if with_explicit else None)
    fast = CODEC.encode_request(conv).value
    fast_back = CODEC.decode_request(fast).value
    monkeypatch.setattr(item_parts.DerivedIds, "next", _plain_next)
    plain = CODEC.encode_request(conv).value
    assert fast == plain
    assert fast_back == CODEC.decode_request(plain).value
    ids = [item["id"] for item in fast["input"] if item.get("type") == "message"]
    assert len(ids) == len(set(ids)) == 300
    parts = [p for m in fast_back.messages[1:] for p in m.parts]  # one assistant turn
    assert [p.text for p in parts] == texts
    # every made-up id recognised as such (none kept as an id the content arrived with)
    kept = [p.provider_details for p in parts if p.provider_details]
    assert len(kept) == (2 if with_explicit else 0)


def test_a_thousand_equal_messages_take_a_few_digests_each_not_one_per_earlier_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    digests = 0

    def counted(prefix: str, basis: str) -> str:
        nonlocal digests
        digests += 1
        return derived_id(prefix, basis)

    monkeypatch.setattr(item_parts, "derived_id", counted)
    payload = CODEC.encode_request(_replies(["ok"] * 1000)).value
    assert digests <= 2 * 1000  # the plain search: 1 + 2 + ... + 1000, half a million
    digests = 0
    CODEC.decode_request(payload)
    assert digests <= 2 * 1000
