"""The offline token estimate: chars / 4 of the tools JSON a vendor declares, and tiktoken's
count only where the vendor names its encoding and tiktoken's cache already holds it (no
encoding file can be fetched here, so the tiktoken module is a small stand-in)."""

from __future__ import annotations

import hashlib
import sys
import types

import pytest

from flowdebug import protocols
from flowdebug.engine.execution import toolsets
from flowdebug.protocols.token_estimate import (
    compact,
    declarations,
    estimate_tokens,
    tiktoken_cached,
    tools_estimate,
)

WEATHER = toolsets.load("weather").tools
O200K = protocols.facts("openai-chat").tokenizer_file  # where tiktoken fetches o200k_base


def test_the_estimate_rounds_up_a_quarter_of_the_characters():
    assert [estimate_tokens("x" * n) for n in (0, 1, 4, 5, 8)] == [0, 1, 1, 2, 2]
    assert estimate_tokens({"b": 1, "a": [1, 2]}) == 5  # '{"a":[1,2],"b":1}': 17 characters


def test_declarations_are_the_tools_in_each_vendors_own_spelling():
    assert "input_schema" in declarations("anthropic", WEATHER)[0]
    assert declarations("openai-chat", WEATHER)[0]["type"] == "function"
    assert "functionDeclarations" in declarations("gemini", WEATHER)[0]
    assert "toolSpec" in declarations("bedrock", WEATHER)[0]


@pytest.fixture
def fake_tiktoken(monkeypatch, tmp_path):
    """tiktoken as a module whose encodings count words, and its cache folder."""
    module = types.ModuleType("tiktoken")

    class Words:
        def encode(self, text: str, disallowed_special=()) -> list[str]:
            return text.split('"')

    module.get_encoding = lambda name: Words()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tiktoken", module)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    return tmp_path


def _cache(folder, url: str | None) -> None:
    assert url is not None
    name = hashlib.sha1(url.encode()).hexdigest()
    (folder / name).write_bytes(b"ranks")


def test_without_the_cached_encoding_every_vendor_is_estimated_by_characters(fake_tiktoken):
    assert not tiktoken_cached(O200K)
    for name in ("anthropic", "openai-chat", "openai-responses"):
        text = compact(declarations(name, WEATHER))
        assert tools_estimate(name, WEATHER) == (
            estimate_tokens(text),
            "chars/4 of the encoded tools JSON",
        )


def test_with_the_cached_encoding_openai_is_counted_by_tiktoken_and_the_others_are_not(
    fake_tiktoken,
):
    _cache(fake_tiktoken, O200K)
    assert tiktoken_cached(O200K)
    text = compact(declarations("openai-chat", WEATHER))
    assert tools_estimate("openai-chat", WEATHER) == (
        len(text.split('"')),
        "tiktoken o200k_base of the encoded tools JSON",
    )
    anthropic = compact(declarations("anthropic", WEATHER))
    assert tools_estimate("anthropic", WEATHER)[0] == estimate_tokens(anthropic)
    assert protocols.facts("anthropic").tokenizer is None


def test_an_empty_cache_variable_turns_tiktoken_off(fake_tiktoken, monkeypatch):
    _cache(fake_tiktoken, O200K)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert not tiktoken_cached(O200K)
    assert tools_estimate("openai-chat", WEATHER)[1] == "chars/4 of the encoded tools JSON"
