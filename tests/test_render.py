"""Sequence graphs as DOT, SVG, PNG and Mermaid, built from a real weather run."""

from __future__ import annotations

import re
import shutil

import pytest

from flowdebug import protocols
from flowdebug.engine.debugger import Session
from flowdebug.engine.trace import lanes, sequence
from flowdebug.render import Style, to_dot, to_mermaid, to_png, to_svg
from flowdebug.render.dot import ERROR_COLOR, HIGHLIGHT, PHASE_COLORS

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz not installed")

CALL_LABELS = {
    "anthropic": "tool_use call_1 get_weather",
    "openai-chat": "tool_calls[0] call_1 get_weather",
    "openai-responses": "function_call call_id=call_1 get_weather",
    "gemini": "functionCall get_weather id=call_1",
    "mcp": "tools/call get_weather id=call_1",
    "bedrock": "toolUse call_1 get_weather",
}


@pytest.fixture(scope="module")
def weather():
    session = Session.from_scenario("weather")
    session.run()
    return session.state


def edges(dot: str) -> list[str]:
    return [
        line
        for line in dot.splitlines()
        if " -> " in line and "xlabel" not in line and "label=<" in line
    ]


@pytest.mark.parametrize("protocol", list(protocols.PROTOCOLS))
def test_dot_labels_arrows_in_the_protocols_own_terms(weather, protocol):
    dot = to_dot(sequence(weather.events, protocol), lanes(protocol), protocol)
    assert CALL_LABELS[protocol] in dot.replace("<BR/>", " ")
    labelled = edges(dot)
    # user message, declaration, 2 calls, 2 dispatches, 2 results, continuation, answer x2
    # (+ tools/list on MCP)
    assert len(labelled) == (12 if protocol == "mcp" else 11)
    assert sum(ERROR_COLOR in e for e in labelled) == 1
    assert "2 calls run in parallel" in dot and "one response · 2 calls" in dot


def test_dot_colours_arrows_by_phase_and_errors_red(weather):
    dot = to_dot(sequence(weather.events, "anthropic"), lanes("anthropic"))
    timeout = next(e for e in edges(dot) if "timeout" in e.replace("<BR/>", " "))
    assert ERROR_COLOR in timeout
    declare = next(e for e in edges(dot) if "POST /v1/messages" in e.replace("<BR/>", " "))
    assert PHASE_COLORS["declaration"] in declare
    cont = next(e for e in edges(dot) if "tool_result ×2" in e.replace("<BR/>", " "))
    assert PHASE_COLORS["continuation"] in cont


def test_dot_highlights_the_current_step(weather):
    dot = to_dot(sequence(weather.events, "gemini"), lanes("gemini"), current_step=3)
    highlighted = [e for e in edges(dot) if HIGHLIGHT in e]
    assert len(highlighted) == 4  # two dispatches, two results
    assert all("get_weather" in e or "timeout" in e or "Paris" in e for e in highlighted)


def test_mcp_graph_has_an_mcp_server_lane_and_other_protocols_a_tool_lane(weather):
    assert '"h_mcp"' in to_dot(sequence(weather.events, "mcp"), lanes("mcp"))
    dot = to_dot(sequence(weather.events, "openai-chat"), lanes("openai-chat"))
    assert '"h_tool"' in dot and '"h_mcp"' not in dot and "tools/list" not in dot


def test_presenter_style_uses_larger_type(weather):
    arrows = sequence(weather.events, "anthropic")
    normal = to_dot(arrows, lanes("anthropic"))
    big = to_dot(arrows, lanes("anthropic"), style=Style.presenter())
    assert 'POINT-SIZE="22"' in big and 'POINT-SIZE="22"' not in normal


@needs_dot
@pytest.mark.parametrize("protocol", list(protocols.PROTOCOLS))
def test_svg_has_the_arrows_of_the_cycle(weather, protocol):
    svg = to_svg(to_dot(sequence(weather.events, protocol), lanes(protocol)))
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg
    text = " ".join(re.findall(r">([^<]+)</text>", svg))
    assert CALL_LABELS[protocol] in text.replace("&#45;", "-")
    assert "timeout" in text
    assert svg.count(ERROR_COLOR.lower()) + svg.count(ERROR_COLOR) >= 1


@needs_dot
def test_png_export_is_a_png(weather):
    png = to_png(to_dot(sequence(weather.events, "anthropic"), lanes("anthropic")))
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_mermaid_is_a_sequence_diagram_with_parallel_blocks(weather):
    text = to_mermaid(
        sequence(weather.events, "openai-responses"), lanes("openai-responses"), "OpenAI Responses"
    )
    lines = text.splitlines()
    assert lines[0] == "sequenceDiagram"
    assert "    participant model as Model API" in lines
    assert lines.count("    par parallel ×2") == 1
    assert lines.count("    par one response ×2") == 1
    assert lines.count("    end") == 3  # two par blocks and the red rect
    assert any("runtime->>model: POST /responses · tools[1]" in line for line in lines)
    assert any(line.strip().startswith("tool--)runtime: timeout") for line in lines)
