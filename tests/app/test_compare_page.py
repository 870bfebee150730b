"""AppTest: Compare and A/B against the offline emulator, tallies asserted."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.markdown import shown

PAGE = Path(__file__).resolve().parents[2] / "pages" / "compare.py"
PRECISE_WEATHER = "Weather forecast: temperature and conditions for a city."


@pytest.fixture(scope="module", autouse=True)
def _stop_the_shared_emulator():
    yield
    from ui import lifetime

    lifetime._emulator.clear()  # its on_release stops it, before pytest closes its logs


@pytest.fixture
def at() -> AppTest:
    app = AppTest.from_file(str(PAGE), default_timeout=90)
    app.run()
    assert not app.exception
    return app


def test_compare_sends_the_request_to_every_player_and_checks_the_calls(at):
    at.number_input(key="cmp_count").set_value(3).run()
    at.button(key="cmp_run").click().run()
    assert not at.exception
    rows = at.session_state.fd_compare
    assert [r["player"].split(":")[0] for r in rows] == [
        "anthropic",
        "openai-chat",
        "openai-responses",
    ]
    for row in rows:
        assert row["chosen"] == "get_weather, get_weather"
        assert row["valid"] is True
        assert '"location": "Paris"' in row["arguments"]
    assert at.dataframe[0].value.shape[0] == 3


def test_ab_test_tallies_each_description_variant_by_the_offline_model_over_phrasings(at):
    assert at.text_area(key="ab_desc_0").value.startswith("Get the current weather")
    at.text_area(key="ab_desc_1").input(PRECISE_WEATHER)
    at.number_input(key="ab_runs").set_value(4).run()
    at.button(key="ab_run").click().run()
    assert not at.exception
    table = {row["variant"]: row for row in at.session_state.fd_ab}
    runs = at.session_state.fd_ab_runs
    assert [r["run"] for r in runs] == [1, 2, 3, 4, 1, 2, 3, 4]
    # Both variants hear the same four phrasings of the request, in order.
    asked = [r["request"] for r in runs]
    assert asked[:4] == asked[4:] and len(set(asked)) == 4
    for variant in ("A", "B"):
        mine = [r for r in runs if r["variant"] == variant]
        called = sum(r["chosen"] == "get_weather" for r in mine)
        assert table[variant]["runs"] == 4
        assert table[variant].get("get_weather", 0) == called
        assert table[variant].get("(text)", 0) == 4 - called
    # "Weather in Paris and Tokyo?", also asked as forecast, temperature, conditions: the
    # scenario's tool names only weather (and temperature, Paris in its parameters'
    # descriptions), the precise description names them all.
    assert (table["A"]["get_weather"], table["B"]["get_weather"]) == (2, 4)
    assert [r["request"] for r in runs if r["variant"] == "A" and r["chosen"] == "(text)"] == [
        "Forecast in Paris and Tokyo?",
        "Conditions in Paris and Tokyo?",
    ]


def test_compare_with_a_live_player_and_no_key_reports_the_error_per_row(at, monkeypatch):
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    at.toggle(key="cmp_offline").set_value(False).run()
    at.button(key="cmp_run").click().run()
    assert not at.exception
    rows = at.session_state.fd_compare
    assert all("no API key" in (r["error"] or "") for r in rows)
    # the table cuts long text: every error is also written out whole below it
    assert [shown(e.value) for e in at.error] == [
        f"**{r['player']}** failed: {r['error']}" for r in rows
    ]


def test_every_browser_session_shares_the_process_one_emulator(at):
    other = AppTest.from_file(str(PAGE), default_timeout=90)
    other.run()
    for app in (at, other):
        app.button(key="cmp_run").click().run()
        app.button(key="ab_run").click().run()
        assert not app.exception
        assert app.session_state.fd_compare and app.session_state.fd_ab
    emulators = [t for t in threading.enumerate() if t.name == "flowdebug-emulator"]
    assert len(emulators) == 1  # not one per browser session, nor one per scenario or rule


def test_another_scenario_gets_its_own_player_and_old_results_go(at):
    from flowdebug.engine.session.debugger import Session

    at.button(key="cmp_run").click().run()
    assert all(r["chosen"].startswith("get_weather") for r in at.session_state.fd_compare)
    at.session_state.fd_session = Session.from_scenario("tasks")
    at.run()
    assert "fd_compare" not in at.session_state  # the weather answers are not shown for tasks
    at.button(key="cmp_run").click().run()
    rows = at.session_state.fd_compare
    assert rows and all(r["chosen"] == "create_task" and not r["error"] for r in rows)


def test_variant_a_is_prefilled_from_the_tool_chosen_for_the_ab_test():
    from flowdebug.engine.session.debugger import Session
    from flowdebug.store.sessions import open_store

    tasks = Session.from_scenario("tasks")
    open_store().save(tasks.state)
    app = AppTest.from_file(str(PAGE), default_timeout=90)
    app.query_params["session"] = tasks.state.id
    app.run()
    tools = {t.name: t.description for t in tasks.state.conversation.tools}
    assert app.text_area(key="ab_desc_0").value == tools["create_task"]
    app.selectbox(key="ab_tool").set_value("delete_task").run()
    assert app.text_area(key="ab_desc_0").value == tools["delete_task"]
    assert app.text_area(key="ab_desc_1").value == "Look something up."
