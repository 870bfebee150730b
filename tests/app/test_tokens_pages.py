"""AppTest: the Tools page's token footprint table (estimated offline, counted by the
vendor's endpoint on a button when the live player reaches one) and the History page's
usage per model turn, as each vendor reported it."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from flowdebug.engine.execution import toolsets
from flowdebug.exchange.imports import import_session
from flowdebug.protocols.token_estimate import compact, declarations
from flowdebug.store.sessions import open_store
from tests.app.markdown import cells, shown
from tests.paths import REAL

ROOT = Path(__file__).resolve().parents[2]
TOOLS = str(ROOT / "pages" / "tools.py")
HISTORY = str(ROOT / "pages" / "history.py")
VENDORS = ["Anthropic Messages", "OpenAI Chat Completions", "OpenAI Responses", "Google Gemini",
           "Bedrock Converse"]  # fmt: skip


@pytest.fixture(autouse=True)
def _no_tiktoken_cache(monkeypatch):
    """The estimate by characters everywhere, whatever tiktoken cache this machine has."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")


def _footprint(app: AppTest):
    header = next(i for i, h in enumerate(app.header) if h.value.startswith("Token footprint"))
    assert header >= 0
    return cells(app.table[-1].value)


def test_the_tools_page_shows_each_vendors_estimated_footprint_offline():
    app = AppTest.from_file(TOOLS, default_timeout=60)
    app.run()
    assert not app.exception
    table = _footprint(app)
    assert list(table["vendor"]) == VENDORS
    weather = toolsets.load("weather").tools
    expected = math.ceil(len(compact(declarations("anthropic", weather))) / 4)
    assert table.iloc[0]["tokens"] == f"≈ {expected}"
    assert set(table["how"]) == {"estimated"}
    assert "the vendor has no count-tokens endpoint" in table.iloc[1]["note"]
    assert not [b for b in app.button if b.key == "tokens_count"]


def test_the_live_players_vendor_is_counted_on_the_button(emulator):
    app = AppTest.from_file(TOOLS, default_timeout=60)
    app.run()  # the sidebar shows the session's own player first; then it is changed
    app.session_state["player_kind"] = "live"
    app.session_state["live_protocol"] = "gemini"
    app.session_state["live_base_url"] = emulator.base_url("gemini")
    app.session_state["live_key"] = "k-test-1"
    app.run()
    assert not app.exception
    assert _footprint(app).iloc[3]["note"].endswith("not counted yet")
    app.button(key="tokens_count").click().run()
    assert not app.exception
    table = _footprint(app)
    with_tools, without = (r["body"] for r in list(emulator.requests)[-2:])
    counted = math.ceil(len(compact(with_tools)) / 4) - math.ceil(len(compact(without)) / 4)
    assert dict(table.iloc[3]) == {
        "vendor": "Google Gemini",
        "tokens": str(counted),
        "how": "counted",
        "note": "counted by POST /v1beta/models/{model}:countTokens",
    }
    assert set(table.drop(index=3)["how"]) == {"estimated"}


def test_the_history_page_shows_the_usage_an_imported_response_reported():
    real = REAL / "anthropic.response.sdk-runner-sf-weather.json"
    with open_store() as store:
        imported = import_session(real.read_text(), store=store)
    app = AppTest.from_file(HISTORY, default_timeout=60)
    app.query_params["session"] = imported.state.id
    app.run()
    assert not app.exception, app.exception
    subheads = [shown(h.value) for h in app.subheader]
    assert "Tokens each vendor reported" in subheads
    usage = next(cells(t.value) for t in app.table if "input_tokens" in t.value.columns)
    row = dict(usage.iloc[0])
    assert (row["vendor"], row["model"], row["from"]) == (
        "Anthropic Messages",
        "claude-haiku-4-5-20251001",
        "imported",
    )
    assert (row["input_tokens"], row["output_tokens"]) == (659, 74)


def test_a_session_of_the_scripted_model_says_no_vendor_reported_usage():
    app = AppTest.from_file(HISTORY, default_timeout=60)
    app.run()
    assert not app.exception
    assert any("report no usage" in shown(m.value) for m in app.markdown)
