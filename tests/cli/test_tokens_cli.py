"""``flowdebug tokens FILE``: the tools' footprint per vendor and the usage each reported."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from flowdebug.cli.main import main
from flowdebug.exchange.tool_imports import parse_tools
from flowdebug.model import Conversation
from flowdebug.protocols.token_estimate import compact, declarations
from tests.paths import REAL

ROOT = Path(__file__).resolve().parents[2]
WEATHER = ROOT / "sample_tools" / "weather_conversation.json"
PARALLEL = REAL / "openai-chat.response.sdk-parallel-weather-and-stock.json"


@pytest.fixture(autouse=True)
def _no_tiktoken_cache(monkeypatch):
    """The estimate by characters everywhere, whatever tiktoken cache this machine has."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")


def test_tokens_prints_one_estimated_line_per_model_vendor(capsys):
    assert main(["tokens", str(WEATHER)]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    tools = Conversation.model_validate_json(WEATHER.read_text()).tools
    assert [line[0] for line in lines] == [
        "anthropic", "openai-chat", "openai-responses", "gemini", "bedrock"
    ]  # fmt: skip
    for name, tokens, how, note in lines:
        assert int(tokens) == math.ceil(len(compact(declarations(name, tools))) / 4)
        assert how == "estimated"
        assert note.startswith("chars/4 of the encoded tools JSON")


def test_tokens_lists_the_usage_an_imported_response_reported(capsys):
    assert main(["tokens", str(PARALLEL)]) == 0
    usage = [line for line in capsys.readouterr().out.splitlines() if line.startswith("usage")]
    assert usage == [
        "usage\tstep=2\tvendor=OpenAI Chat Completions\tmodel=gpt-4o-2024-08-06"
        "\tinput_tokens=149\toutput_tokens=60\tfrom=imported"
    ]


def test_tokens_json_holds_both_tables(capsys):
    assert main(["tokens", str(PARALLEL), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["how"] for r in data["footprint"]] == ["estimated"] * 5
    assert data["usage"][0]["input_tokens"] == 149


def test_tokens_reads_declarations_alone_in_any_vendors_spelling(capsys, tmp_path):
    schema = {"type": "object", "properties": {"origin": {"type": "string"}}}
    bare = [{"name": "search_flights", "description": "Searches stuff", "input_schema": schema}]
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(bare))
    assert main(["tokens", str(path)]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    anthropic = compact(declarations("anthropic", parse_tools(bare).tools))
    assert '"search_flights"' in anthropic
    assert lines[0][:3] == ["anthropic", str(math.ceil(len(anthropic) / 4)), "estimated"]
    assert not [line for line in lines if line[0] == "usage"]
