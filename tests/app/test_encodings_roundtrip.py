"""AppTest: the Encodings page's round-trip table (issue 30 item 7): one row per ordered pair
of model vendors, what A → B → A keeps and loses, for the sample, the open session or a
pasted payload, the same verdicts as ``flowdebug roundtrip``."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from flowdebug.protocols.roundtrip import ASPECTS, roundtrip
from tests.paths import REAL

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "encodings.py")
THINKING = REAL / "anthropic.response.pydantic-ai-cassette-thinking-then-tool.json"
VENDORS = ["Anthropic Messages", "OpenAI Chat Completions", "OpenAI Responses", "Google Gemini",
           "Bedrock Converse"]  # fmt: skip


def _trips(app: AppTest):
    assert [h.value for h in app.header][-1] == "Round trip: A → B → A"
    return app.dataframe[-1].value


def test_the_sample_has_a_row_per_ordered_pair_and_keeps_its_calls_and_results():
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.run()
    assert not app.exception
    table = _trips(app)
    pairs = list(zip(table["A"], table["B"], strict=True))
    assert pairs == [(a, b) for a in VENDORS for b in VENDORS if a != b]
    for aspect in ("call_ids", "names", "arguments", "pairing", "results", "error_flags"):
        assert set(table[aspect]) == {"kept"}, aspect
    assert list(table.columns) == ["A", "B", "A → B → A", *ASPECTS, "warnings"]


def test_a_pasted_response_with_reasoning_shows_what_each_trip_loses():
    text = THINKING.read_text()
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.run()
    app.radio(key="enc_source").set_value("paste").run()
    app.text_area(key="enc_paste").input(text).run()
    assert not app.exception
    table = _trips(app)
    first = table.iloc[0]
    assert (first["A"], first["B"], first["thinking"]) == (
        "Anthropic Messages",
        "OpenAI Chat Completions",
        "lost",
    )
    assert first["A → B → A"] == "loses thinking (lost)"
    # The page's verdicts are the command's, row for row.
    cli = roundtrip(json.loads(text))
    assert list(table["thinking"]) == [r.aspects["thinking"] for r in cli]
    assert list(table["warnings"]) == [", ".join(r.warnings) for r in cli]


def test_the_open_sessions_round_trip_follows_its_history():
    app = AppTest.from_file(PAGE, default_timeout=60)
    app.run()
    app.radio(key="enc_source").set_value("session").run()
    assert not app.exception
    conv = app.session_state.fd_session.conversation
    table = _trips(app)
    assert len(table) == 20
    lossless = [r.lossless for r in roundtrip(conv)]
    assert [v == "keeps everything" for v in table["A → B → A"]] == lossless
