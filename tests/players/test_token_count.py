"""Token counts from each vendor's count-tokens endpoint, sent through its SDK's live
transport, against the emulator (which answers chars / 4 of the body it received)."""

from __future__ import annotations

import pytest

from flowdebug import protocols
from flowdebug.engine.execution import toolsets
from flowdebug.errors import ProviderError, UsageError
from flowdebug.players.live.counting import can_count, count_tokens, footprint
from flowdebug.players.live.settings import LiveSettings
from flowdebug.protocols.token_estimate import compact, estimate_tokens, footprint_request

COUNTED = ["anthropic", "openai-responses", "gemini", "bedrock"]
# Each vendor's count-tokens path on the wire, and where its body puts the tool's name.
PATHS = {
    "anthropic": "/v1/messages/count_tokens",
    "openai-responses": "/v1/responses/input_tokens",
    "gemini": "/v1beta/models/gemini-2.5-flash:countTokens",
    "bedrock": "/model/anthropic.claude-sonnet-4-20250514-v1%3A0/count-tokens",
}


def settings(emulator, protocol: str, **more) -> LiveSettings:
    # Bedrock signs with SigV4 keys over plain HTTP (a bearer token needs HTTPS).
    key = "AKID:SECRET" if protocol == "bedrock" else "test-key"
    return LiveSettings(protocol, base_url=emulator.base_url(protocol), api_key=key, **more)


def test_the_vendors_with_a_count_endpoint_and_a_live_sender_can_count():
    assert [n for n in protocols.PROTOCOLS if can_count(n)] == COUNTED


@pytest.mark.parametrize("protocol", COUNTED)
def test_a_footprint_is_the_vendors_count_with_the_tools_less_without(emulator, protocol):
    tools = toolsets.load("weather").tools
    tokens = footprint(tools, settings(emulator, protocol))
    with_tools, without = (r["body"] for r in list(emulator.requests)[-2:])
    assert [r["path"] for r in list(emulator.requests)[-2:]] == [PATHS[protocol]] * 2
    assert '"get_weather"' in compact(with_tools) and "get_weather" not in compact(without)
    assert tokens == estimate_tokens(with_tools) - estimate_tokens(without)
    assert tokens > 50  # the weather tool's schema, not an empty list


@pytest.mark.parametrize("protocol", COUNTED)
def test_the_key_never_reaches_the_count_request_body(emulator, protocol):
    count_tokens(footprint_request([]), settings(emulator, protocol))
    assert "test-key" not in compact(emulator.requests[-1]["body"])
    assert "SECRET" not in compact(emulator.requests[-1]["body"])


def test_a_vendor_without_a_count_endpoint_says_so():
    with pytest.raises(UsageError, match=r"OpenAI Chat.* has no count-tokens endpoint"):
        count_tokens(footprint_request([]), LiveSettings("openai-chat", api_key="k"))


@pytest.mark.parametrize("protocol", COUNTED)
def test_a_vendor_error_on_a_count_is_a_provider_error_with_its_status(emulator, protocol):
    with pytest.raises(ProviderError) as err:
        count_tokens(footprint_request([]), settings(emulator, protocol, model="error-429"))
    assert err.value.status == 429
