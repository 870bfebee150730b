"""A grid (st.dataframe) shows its cells as plain text: what it holds must be the text itself,
never Markdown-escaped for st.table (a person saw ``get\\_weather`` and ``\\{\\"location\\"``
in the A/B's runs and the re-run's differences)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

COMPARE = Path(__file__).resolve().parents[2] / "pages" / "compare.py"


@pytest.fixture(scope="module", autouse=True)
def _stop_the_shared_emulator():
    yield
    from ui import lifetime

    lifetime._emulator.clear()  # its on_release stops it, before pytest closes its logs


def test_the_ab_runs_grid_shows_each_phrasing_and_its_arguments_as_sent():
    at = AppTest.from_file(str(COMPARE), default_timeout=90)
    at.run()
    at.number_input(key="ab_runs").set_value(2).run()
    at.button(key="ab_run").click().run()
    assert not at.exception
    runs = at.session_state.fd_ab_runs
    grid = at.dataframe[-1].value
    assert list(grid["request"]) == [r["request"] for r in runs]
    assert list(grid["chosen"]) == [r["chosen"] for r in runs]
    called = [r for r in runs if r["chosen"] == "get_weather"]
    assert called, "the offline model called the tool at least once"
    shown = grid[grid["chosen"] == "get_weather"]["arguments"].iloc[0]
    assert json.loads(shown)["location"] == "Paris"
    assert not any("\\" in str(v) for v in grid.to_numpy().ravel())
