"""A session as an OpenAI chat fine-tuning example (issue 30 item 8), checked against a JSON
Schema of the documented format (tests/fixtures/openai_finetune_chat.schema.json, its sources in
its $comment)."""

from __future__ import annotations

import json

import jsonschema
import pytest

from flowdebug.cli.main import main
from flowdebug.exchange.exports import trace
from flowdebug.exchange.training import training_example, training_formats, training_line
from flowdebug.model import HostedCall, Thinking
from tests import cases
from tests.paths import FIXTURES
from tests.protocols.test_roundtrip_report import finished_weather

SCHEMA = json.loads((FIXTURES / "openai_finetune_chat.schema.json").read_text())
FORMAT = "openai-finetune"


def _valid(example: dict) -> None:
    jsonschema.validate(example, SCHEMA, cls=jsonschema.Draft202012Validator)


weather = pytest.fixture(scope="module", name="weather")(finished_weather)


def test_the_weather_session_is_one_valid_training_line_with_tools_calls_and_results(weather):
    line, warnings = training_line(weather.state.conversation, FORMAT)
    assert line.endswith("\n") and line.count("\n") == 1
    example = json.loads(line)
    _valid(example)
    assert warnings == []
    assert set(example) == {"messages", "tools"}
    assert [m["role"] for m in example["messages"]] == [
        "system", "user", "assistant", "tool", "tool", "assistant",
    ]  # fmt: skip
    calls = example["messages"][2]["tool_calls"]
    found = [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls
    ]
    assert found == [
        ("call_1", "get_weather", {"location": "Paris", "unit": "c"}),
        ("call_2", "get_weather", {"location": "Tokyo", "unit": "c"}),
    ]  # fmt: skip
    results = example["messages"][3:5]
    assert [r["tool_call_id"] for r in results] == ["call_1", "call_2"]
    assert json.loads(results[1]["content"]) == {"error": "timeout after 1s"}
    assert example["tools"][0]["function"]["name"] == "get_weather"
    assert "model" not in example


def test_what_the_format_cannot_hold_is_warned_and_the_line_stays_valid():
    conv = cases.CONVERSATIONS["weather_complete"]
    m = conv.messages
    thinking = Thinking(text="Two calls.", signature="sig", source="anthropic")
    hosted = HostedCall(id="srvtoolu_1", name="web_search", source="anthropic")
    turn = m[1].model_copy(update={"parts": [thinking, hosted, *m[1].parts]})
    example, warnings = training_example(
        conv.model_copy(update={"messages": [m[0], turn, *m[2:]]}), FORMAT
    )
    _valid(example)
    assert [w.code for w in warnings] == [
        "thinking_dropped", "thinking_signature_dropped", "hosted_call_dropped",
    ]  # fmt: skip
    example, warnings = training_example(cases.CONVERSATIONS["image_result"], FORMAT)
    _valid(example)
    assert "image_in_result_dropped" in [w.code for w in warnings]
    example, warnings = training_example(cases.CONVERSATIONS["weather_initial"], FORMAT)
    _valid(example)
    assert [(w.code, w.path) for w in warnings] == [("finetune_no_assistant", "messages")]


def test_the_schema_refuses_what_the_documented_format_does_not_hold(weather):
    example, _ = training_example(weather.state.conversation, FORMAT)
    for broken in (
        {**example, "model": "gpt-4o"},
        {**example, "messages": [*example["messages"], {"role": "tool", "content": "x"}]},
        {**example, "messages": [{"role": "assistant", "content": None}]},
    ):
        with pytest.raises(jsonschema.ValidationError):
            _valid(broken)


def test_training_formats_come_from_the_registry():
    assert training_formats() == [FORMAT]


def test_flowdebug_export_writes_the_line_and_warnings_apart(weather, tmp_path, capsys):
    path = tmp_path / "weather.json"
    path.write_text(json.dumps(trace(weather.state, name="weather")))
    assert main(["export", str(path), "--format", FORMAT]) == 0
    out = capsys.readouterr()
    assert out.err == "" and out.out.count("\n") == 1
    _valid(json.loads(out.out))
    chat = tmp_path / "chat.json"
    chat.write_text(
        json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]})
    )
    assert main(["export", str(chat), "--format", FORMAT]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out) == {"messages": [{"role": "user", "content": "hi"}]}
    assert "[finetune_no_assistant]" in out.err
