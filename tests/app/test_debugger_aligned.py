"""AppTest: the Debugger's graphs are one aligned view by default; separate graphs on demand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.test_debugger_page import open_layout

PAGES = Path(__file__).resolve().parents[2] / "pages"


@pytest.fixture
def at() -> AppTest:
    app = AppTest.from_file(str(PAGES / "debugger.py"), default_timeout=60)
    app.run()
    assert not app.exception
    return app


SCRIPT = re.compile(r"^<script>\(\(\) => \{ const svg = (.*?); const mine = ", re.S)


def aligned_svg(app: AppTest) -> str:
    """The SVG the page hands the browser (ui/graphs.py: a JSON string its script puts in
    the view's box, drawn once above it)."""
    assert any('class="fd-aligned-scroll"' in m.value for m in app.markdown)
    [found] = [m for h in app.get("html") if (m := SCRIPT.match(h.proto.body))]
    svg = json.loads(found.group(1))
    assert svg.startswith("<svg") and 'class="fd-aligned"' in svg
    return svg


def vendors(svg: str) -> list[str]:
    return re.findall(r'class="fd-vendor" data-protocol="([^"]+)"', svg)


def test_the_page_opens_on_one_aligned_view_of_every_vendor(at):
    assert not at.get("graphviz_chart")
    assert vendors(aligned_svg(at)) == [
        "anthropic",
        "openai-chat",
        "openai-responses",
        "gemini",
        "mcp",
        "bedrock",
    ]


def test_run_draws_the_calls_in_each_vendors_terms_and_the_timeout_in_red(at):
    at.button(key="run").click().run()
    svg = aligned_svg(at)
    text = " ".join(re.sub(r"<[^>]+>", " ", svg).split())
    assert "tool_use call_1 get_weather" in text
    assert "functionCall get_weather id=call_2" in text
    assert 'stroke="#d11f1f"' in svg


def test_protocol_choice_limits_the_vendors(at):
    at.multiselect(key="protocols").set_value(["anthropic", "mcp"]).run()
    assert vendors(aligned_svg(at)) == ["anthropic", "mcp"]
    assert "MCP server" in aligned_svg(at)


def test_separate_graphs_remain_an_option(at):
    open_layout(at).radio(key="graph_layout").set_value("separate").run()
    assert len(at.get("graphviz_chart")) == 6
    assert not [m for m in at.markdown if 'class="fd-aligned"' in m.value]


def test_selecting_an_event_lights_it_in_every_vendor(at):
    at.button(key="run").click().run()
    at.selectbox(key="fd_event").set_value(3).run()
    svg = aligned_svg(at)
    assert len(re.findall(r'class="ev ev-3[^"]*selected" data-kind="arrow"', svg)) == 6


def test_streamed_arguments_are_shown_on_demand(at):
    at.button(key="run").click().run()
    assert 'class="delta"' not in aligned_svg(at)
    open_layout(at).checkbox(key="show_stream").check().run()
    assert 'class="delta"' in aligned_svg(at)
    assert any("Streamed" in c.value for c in at.caption)


def test_the_drawing_travels_as_a_string_that_cannot_end_its_script():
    from ui.graphs import fill_script

    svg = '<svg height="40"><text>a</text></svg></script><script>window.x=1</script><!--'
    html = fill_script(svg)
    assert html.count("</script>") == 1 and html.endswith("</script>")
    assert "<script>window.x" not in html and "<!--" not in html
    found = SCRIPT.match(html)
    assert found is not None and json.loads(found.group(1)) == svg
