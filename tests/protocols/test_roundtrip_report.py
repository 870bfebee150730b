"""The round-trip loss report (issue 30 item 7): protocols/roundtrip.py and
``flowdebug roundtrip``."""

from __future__ import annotations

import json

import pytest

from flowdebug.cli.main import main
from flowdebug.engine.session.debugger import Session
from flowdebug.exchange.exports import trace
from flowdebug.model import Thinking
from flowdebug.protocols.roundtrip import ASPECTS, roundtrip
from tests import cases

MODEL_VENDORS = ["anthropic", "openai-chat", "openai-responses", "gemini", "bedrock"]
CARRIED = ("call_ids", "names", "arguments", "pairing", "results", "error_flags", "text")


def finished_weather() -> Session:
    """The weather scenario stepped to its end (its Tokyo call times out)."""
    session = Session.from_scenario("weather")
    while session.state.status != "finished":
        session.step()
    return session


weather = pytest.fixture(scope="module", name="weather")(finished_weather)


def test_the_weather_scenario_keeps_every_call_result_and_text_through_every_pair(weather):
    rows = roundtrip(weather.state.conversation)
    assert [(r.source, r.via) for r in rows] == [
        (a, b) for a in MODEL_VENDORS for b in MODEL_VENDORS if a != b
    ]
    for r in rows:
        assert r.error is None
        assert {a: r.aspects[a] for a in CARRIED} == dict.fromkeys(CARRIED, "kept"), r
        assert (r.aspects["thinking"], r.aspects["images"]) == ("none", "none")
    by_pair = {(r.source, r.via): r for r in rows}
    assert by_pair["anthropic", "openai-chat"].warnings == []
    assert by_pair["anthropic", "openai-chat"].lossless
    assert by_pair["openai-chat", "anthropic"].warnings == [
        "model_replaced",
        "max_tokens_filled_in",
    ]
    # Chat keeps any model id (OpenAI-compatible servers): Anthropic's default comes back.
    assert by_pair["openai-chat", "anthropic"].aspects["model"] == "changed"
    assert by_pair["anthropic", "gemini"].warnings == ["model_replaced", "model_filled_in"]
    assert by_pair["anthropic", "gemini"].aspects["model"] == "kept"


def test_thinking_and_images_lost_on_the_way_are_named():
    conv = cases.CONVERSATIONS["weather_complete"]
    m = conv.messages
    thinking = Thinking(text="Two cities: two calls.", signature="sig", source="anthropic")
    turn = m[1].model_copy(update={"parts": [thinking, *m[1].parts]})
    conv = conv.model_copy(update={"messages": [m[0], turn, *m[2:]]})
    [row] = [r for r in roundtrip(conv, ["anthropic", "openai-chat"]) if r.source == "anthropic"]
    assert row.aspects["thinking"] == "lost" and not row.lossless
    assert row.warnings == ["thinking_dropped", "thinking_signature_dropped"]
    [row] = roundtrip(cases.CONVERSATIONS["image_result"], ["anthropic", "openai-chat"])[:1]
    assert (row.aspects["images"], row.aspects["results"]) == ("lost", "changed")
    assert "image_in_result_dropped" in row.warnings


def test_flowdebug_roundtrip_prints_one_row_per_ordered_pair(weather, tmp_path, capsys):
    path = tmp_path / "weather.json"
    path.write_text(json.dumps(trace(weather.state, name="weather")))
    assert main(["roundtrip", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 20
    first = lines[0].split("\t")
    assert first[:2] == ["anthropic", "openai-chat"]
    assert first[2:] == [*(f"{a}=kept" for a in CARRIED), "thinking=none", "images=none",
                         "model=kept", "warnings=-"]  # fmt: skip
    assert len(ASPECTS) + 3 == len(first)


def test_flowdebug_roundtrip_reads_a_vendor_payload_and_prints_json(tmp_path, capsys):
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(body))
    assert main(["roundtrip", str(path), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 20
    row = next(r for r in rows if (r["from"], r["via"]) == ("openai-chat", "gemini"))
    # gpt-4o is no Gemini model: gemini-2.5-flash replaced it and comes back.
    assert (row["text"], row["model"], row["call_ids"]) == ("kept", "changed", "none")
    assert row["warnings"] == "model_replaced, model_filled_in"


def test_flowdebug_roundtrip_refuses_bad_input_with_exit_2(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text('{"nothing": 1}')
    assert main(["roundtrip", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("flowdebug: input: $: not a payload of any supported protocol")
    assert err.count("\n") == 1
