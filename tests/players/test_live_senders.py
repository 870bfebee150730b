"""The live player finds the sender of a vendor's SDK through the vendor's facts, which name
the sender's module (``players/live/senders.py``)."""

from __future__ import annotations

import operator

import pytest

from flowdebug import protocols
from flowdebug.errors import UsageError
from flowdebug.players.live import senders

LIVE = [n for n in protocols.PROTOCOLS if protocols.facts(n).sdk is not None]


def test_the_vendors_with_an_sdk_are_the_five_live_ones():
    assert LIVE == ["anthropic", "openai-chat", "openai-responses", "gemini", "bedrock"]


@pytest.mark.parametrize("name", LIVE)
def test_each_sdk_has_a_registered_sender(name):
    assert callable(senders.sender_for(name))


def test_vendors_of_one_sdk_share_its_sender():
    assert senders.sender_for("openai-chat") is senders.sender_for("openai-responses")
    assert senders.sender_for("openai-chat") is not senders.sender_for("gemini")


@pytest.mark.parametrize("name", ["mcp"])
def test_a_vendor_without_an_sdk_has_no_live_player(name):
    with pytest.raises(UsageError, match="no live player"):
        senders.sender_for(name)


@pytest.mark.parametrize("name", ["openai-chat", "openai-responses"])
def test_the_client_method_the_facts_name_exists_in_the_openai_sdk(name):
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(api_key="not-used", base_url="http://127.0.0.1:9")
    method = protocols.facts(name).sdk_method
    assert method is not None
    assert callable(operator.attrgetter(method)(client))


def test_the_client_method_the_gemini_facts_name_exists_in_google_genai():
    genai = pytest.importorskip("google.genai")
    client = genai.Client(api_key="not-used", vertexai=False)
    method = protocols.facts("gemini").sdk_method
    assert method is not None
    assert callable(operator.attrgetter(method)(client))
