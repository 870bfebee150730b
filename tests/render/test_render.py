"""Sequence graphs as DOT, SVG, PNG and Mermaid, built from a real weather run."""

from __future__ import annotations

import html
import re
import shutil
from xml.etree import ElementTree

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowdebug import protocols
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.tracing.trace import Arrow, lanes, sequence
from flowdebug.render import Style, safe, to_dot, to_mermaid, to_png, to_svg
from flowdebug.render.dot import ERROR_COLOR, HIGHLIGHT, PHASE_COLORS, wrap
from tests.hypothesis_profiles import examples

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
    assert CALL_LABELS[protocol] in html.unescape(dot.replace("<BR/>", " "))
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
    assert any("runtime->>model: POST /responses · tools#91;1#93;" in line for line in lines)
    assert any(line.strip().startswith("tool--)runtime: timeout") for line in lines)


# -- labels can't break drawings ----------------------------------------------------------------

# What a format could read as markup, escapes or statements, and characters no label may carry.
SPECIALS = ["[", "]", '"', "'", "{", "}", "|", "\\", "<", ">", "&", "#", ";", "%", "\n", "\x00",
            "\x1b", "\x7f", "\u202e", "]]>", "\\N", "&amp;", "#35;", "<B>"]  # fmt: skip
POSITIONS = ["alone", "start", "middle", "end"]


def placed(special: str, position: str, word: str = "ab") -> str:
    return {
        "alone": special,
        "start": special + word,
        "middle": word[:1] + special + word[1:],
        "end": word + special,
    }[position]


def arrow(label: str, seq: int = 1, error: bool = False) -> Arrow:
    return Arrow(seq, seq, "request", "runtime", "model", label, error=error)


def svg_texts(svg: str) -> list[str]:
    """Each text of a graphviz SVG, its runs of spaces as one (graphviz writes "a \xa0b")."""
    root = ElementTree.fromstring(svg)
    return [" ".join((t.text or "").split()) for t in root.iter("{http://www.w3.org/2000/svg}text")]


def shown(label: str, width: int = Style().wrap) -> list[str]:
    """The lines a DOT graph shows for ``label`` (a label of spaces shows none)."""
    return [line for line in wrap(safe.visible(label), width) if line]


@needs_dot
def test_an_arrow_label_of_only_a_closing_bracket_renders_in_every_format():
    for error in (False, True):
        svg = to_svg(to_dot([arrow("]", error=error)], ["runtime", "model"]))
        assert "]" in svg_texts(svg)
    assert "runtime->>model: #93;" in to_mermaid([arrow("]")], ["runtime", "model"])


@needs_dot
def test_dot_shows_every_special_character_at_every_position():
    labels = [placed(s, p) for s in SPECIALS for p in POSITIONS]
    arrows = [arrow(label, n, error=n % 2 == 0) for n, label in enumerate(labels, 1)]
    dot = to_dot(arrows, ["runtime", "model"], title='[t] {a|b} \\G "q" ]')
    texts = svg_texts(to_svg(dot))
    assert '[t] {a|b} \\G "q" ]' in texts
    for label in labels:
        for line in shown(label):
            assert line in texts, (label, line)


@needs_dot
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(SPECIALS), min_size=1, max_size=4).map("".join),
    st.sampled_from(POSITIONS),
    st.text(alphabet="abcxyz0 ", max_size=6),
)
def test_dot_renders_any_label_with_its_text_intact(special, position, word):
    label = placed(special, position, word or "w")
    dot = to_dot([arrow(label), arrow(label, 2, error=True)], ["runtime", "model"], title=label)
    texts = svg_texts(to_svg(dot))
    title = " ".join(safe.visible(label).split())
    assert not title or title in texts  # the quoted title
    assert all(line in texts for line in shown(label))


@needs_dot
def test_a_tooltip_keeps_brackets_and_backslashes():
    detail = "] {x|y} C:\\tmp\\new [z"
    a = Arrow(1, 1, "request", "model", "runtime", "HTTP 400", error=True, detail=detail)
    root = ElementTree.fromstring(to_svg(to_dot([a], ["runtime", "model"])))
    titles = {v for el in root.iter() for k, v in el.attrib.items() if k.endswith("title")}
    assert detail in titles


@settings(max_examples=examples(300))
@given(st.text(), st.sampled_from(SPECIALS), st.sampled_from(POSITIONS))
def test_svg_text_parses_back_to_the_label(word, special, position):
    label = placed(special, position, word)
    doc = (
        '<svg xmlns="http://www.w3.org/2000/svg">'
        f'<text data-title="{safe.svg(label)}">{safe.svg(label)}</text></svg>'
    )
    (text,) = ElementTree.fromstring(doc)
    assert text.text == text.get("data-title") == safe.visible(label)


MERMAID_MARKUP = set('"[]{}|<>;\n\r')
MERMAID_CODES = {"lt": "<", "gt": ">", "quot": '"', "amp": "&"}


def mermaid_decoded(text: str) -> str:
    return re.sub(
        r"#(\d+|lt|gt|quot|amp);",
        lambda m: MERMAID_CODES.get(m[1]) or chr(int(m[1])),
        text,
    )


@settings(max_examples=examples(500))
@given(st.text(max_size=80), st.sampled_from(SPECIALS), st.sampled_from(POSITIONS))
def test_mermaid_text_has_no_markup_outside_entity_codes(word, special, position):
    label = placed(special, position, word)
    text = safe.mermaid(label)
    bare = re.sub(r"#(\d+|lt|gt|quot|amp);", "", text)
    assert not MERMAID_MARKUP & set(bare) and "#" not in bare
    assert mermaid_decoded(text) == (" ".join(safe.visible(label).split()) or safe.EMPTY)


def test_mermaid_arrows_and_notes_carry_escaped_brackets_and_pipes():
    lines = to_mermaid(
        [arrow("[a|b]"), Arrow(2, 2, "execution", "runtime", "runtime", "{x}", error=True)],
        ["runtime", "model"],
        title="t]",
    ).splitlines()
    assert "    title t#93;" in lines
    assert "    runtime->>model: #91;a#124;b#93;" in lines
    assert "        Note over runtime: #123;x#125;" in lines
