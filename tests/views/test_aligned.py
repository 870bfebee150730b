"""The aligned view (issue 12 items 1, 4 and 6): every vendor's arrows on shared rows, one SVG.

Rows come from the canonical trace event; a vendor that needs more (MCP's extra hop, a
stream's deltas, a refusal) stretches the row for everyone; a refusal halts one vendor.
"""

from __future__ import annotations

import re
import shutil
import time
import xml.etree.ElementTree as ET

import pytest

from flowdebug import protocols
from flowdebug.engine.execution.faults import parse_fault
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.tracing.trace import Arrow, lanes, sequence
from flowdebug.render import to_png
from flowdebug.render.aligned import DELTA, EVENT, Column, Delta, Metrics, table
from flowdebug.render.aligned_svg import to_aligned_svg
from flowdebug.render.dot import HIGHLIGHT, Style
from flowdebug.views.aligned import window_of
from flowdebug.views.debugger import aligned, refusals

SVG = "{http://www.w3.org/2000/svg}"
ALL = list(protocols.PROTOCOLS)


@pytest.fixture(scope="module")
def weather() -> Session:
    s = Session.from_scenario("weather")
    s.run()
    return s


@pytest.fixture(scope="module")
def dropped() -> Session:
    s = Session.from_scenario("weather")
    s.set_faults([parse_fault("drop_result@#1")])
    s.run()
    return s


def column(s: Session, protocol: str, **kw) -> Column:
    arrows = tuple(sequence(s.state.events, protocol, kw.pop("rejection", None)))
    return Column(protocol, protocols.get(protocol).title, tuple(lanes(protocol)), arrows, **kw)


def tree(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # well-formed XML, or this raises


def label_tops(svg: str, seq: int, kind: str = "arrow") -> dict[str, float]:
    """Per vendor, the y of the first line of event ``seq``'s label."""
    out = {}
    for vendor in tree(svg).iter(f"{SVG}g"):
        if "fd-vendor" not in vendor.get("class", ""):
            continue
        for g in vendor.iter(f"{SVG}g"):
            if f"ev-{seq}" in g.get("class", "").split() and g.get("data-kind") == kind:
                # The cell is drawn at the top and moved down to its row.
                moved = float(g.get("transform", "translate(0 0)")[:-1].split()[-1])
                top = float(next(g.iter(f"{SVG}tspan")).get("y"))
                out[vendor.get("data-protocol")] = moved + top
    return out


def test_every_event_sits_on_the_same_row_in_every_vendor(weather):
    svg = to_aligned_svg([column(weather, p) for p in ALL])
    calls = [e.seq for e in weather.state.events if e.kind == "tool_call"]
    final = next(e.seq for e in weather.state.events if e.kind == "final_answer")
    for seq in [*calls, final]:
        tops = label_tops(svg, seq)
        assert set(tops) == set(ALL), tops
        assert len(set(tops.values())) == 1, tops


def test_every_phase_band_after_the_first_names_each_vendor_over_its_column(weather):
    """Scrolled into a long view, the titles are gone: each band says whose column is whose."""
    svg = to_aligned_svg([column(weather, p) for p in ALL])
    root = tree(svg)
    bands = [r for r in root.iter(f"{SVG}rect") if "band" in r.get("class", "").split()]
    tags = [t for t in root.iter(f"{SVG}text") if t.get("class") == "vendor-tag"]
    names = ["".join(t.itertext()) for t in tags]
    assert len(bands) >= 4
    assert names == [protocols.get(p).title for p in ALL] * (len(bands) - 1)


def test_mcps_extra_hop_stretches_the_row_for_everyone(weather):
    discover = next(e.seq for e in weather.state.events if e.kind == "discover")
    declare = next(e.seq for e in weather.state.events if e.kind == "declare")
    m = Metrics.of(Style())
    alone, _ = table([column(weather, "anthropic")], m, 0)
    both, _ = table([column(weather, "anthropic"), column(weather, "mcp")], m, 0)
    assert (discover, EVENT, 0) not in {r.key for r in alone}
    assert (discover, EVENT, 0) in {r.key for r in both}  # Anthropic has an empty cell there
    svg = to_aligned_svg([column(weather, "anthropic"), column(weather, "mcp")])
    tops = label_tops(svg, declare)
    assert tops["anthropic"] == tops["mcp"]
    alone_svg = to_aligned_svg([column(weather, "anthropic")])
    assert tops["anthropic"] > label_tops(alone_svg, declare)["anthropic"]


def test_a_row_is_as_tall_as_its_tallest_cell(weather):
    m = Metrics.of(Style())
    short = Arrow(0, 1, "declaration", "user", "runtime", "hi")
    long = Arrow(0, 1, "declaration", "user", "runtime", "a long question " * 6)
    a = Column("anthropic", "A", tuple(lanes("anthropic")), (short,))
    b = Column("gemini", "G", tuple(lanes("gemini")), (long,))
    rows_a, _ = table([a], m, 0)
    rows_ab, _ = table([a, b], m, 0)
    assert rows_ab[0].height > rows_a[0].height
    assert rows_ab[0].lines == 3


def test_a_refusal_halts_one_vendor_while_the_others_go_on(dropped):
    refused = refusals(dropped.conversation, dropped.state.events, ["anthropic", "mcp"])
    assert "anthropic" in refused and "mcp" not in refused
    view = aligned(dropped.state, ["anthropic", "mcp"], refused, Style())
    root = tree(view.svg)
    vendors = {g.get("data-protocol"): g for g in root.iter(f"{SVG}g") if g.get("data-protocol")}
    kinds = {p: [g.get("data-kind") for g in v.iter(f"{SVG}g")] for p, v in vendors.items()}
    assert kinds["anthropic"][-1] == "rejection"  # nothing is drawn after it
    assert "rejection" not in kinds["mcp"]
    text = "".join(vendors["anthropic"].itertext())
    assert "400 · tool_use ids were found without tool_result blocks" in text
    assert "cycle halted" in text
    final = next(e.seq for e in dropped.state.events if e.kind == "final_answer")
    assert set(label_tops(view.svg, final)) == {"mcp"}
    # The vendor's whole message is on hover and in the sentence beneath the view.
    assert "Each `tool_use` block must have" in "".join(vendors["anthropic"].itertext())
    assert view.refusals[0][0] == "anthropic" and "HTTP 400" in view.refusals[0][1]
    red = [t for t in vendors["anthropic"].iter(f"{SVG}rect") if t.get("class") == "after-halt"]
    assert len(red) == 1  # the rest of its column is greyed out


def test_stream_deltas_add_rows_under_the_call_for_everyone(weather):
    call = next(e.seq for e in weather.state.events if e.kind == "tool_call")
    view = aligned(weather.state, ["anthropic", "openai-chat", "gemini"], {}, stream=True)
    assert view.streamed
    cols = {c.protocol: c for c in view.columns}
    chat = cols["openai-chat"].deltas[call]
    assert chat[-1].text == '{"location":"Paris","unit":"c"}'
    assert "".join(d.fragment for d in chat) == chat[-1].text  # fragments add up
    assert len(cols["gemini"].deltas[call]) == 1  # Gemini sends the call whole
    assert len(cols["anthropic"].deltas[call]) >= 2  # input_json_delta pieces
    rows, _ = table(view.columns, Metrics.of(Style()), 0)
    deltas = [r for r in rows if r.key[:2] == (call, DELTA)]
    assert len(deltas) == max(len(c.deltas[call]) for c in view.columns)
    # The newest fragment is drawn apart (bold), after the text it joins.
    assert re.search(r'<text class="delta"[^>]*>[^<]*<tspan[^>]*font-weight="bold">', view.svg)
    plain = aligned(weather.state, ["anthropic", "openai-chat", "gemini"], {}, stream=False)
    assert not plain.streamed and 'class="delta"' not in plain.svg


def test_the_lit_step_and_the_selected_event_are_lit_in_every_vendor(weather):
    cols = [column(weather, p) for p in ("anthropic", "gemini")]
    step = weather.state.events[3].step
    svg = to_aligned_svg(cols, current_step=step, selected=10)
    lit = re.findall(
        r'<g class="ev ev-(\d+) current[^"]*"[^>]*><rect class="bg"[^>]*fill="([^"]+)"', svg
    )
    assert lit and all(fill == HIGHLIGHT for _, fill in lit)
    assert {int(n) for n, _ in lit} == {e.seq for e in weather.state.events if e.step == step}
    assert len(re.findall(r'class="ev ev-10[^"]*selected"', svg)) == 2
    # Hovering any element of an event lights it everywhere: one rule per event, no script.
    assert ".fd-aligned:has(.ev-10:hover) .ev-10 .bg" in svg
    assert "<script" not in svg


def test_upto_seq_draws_the_first_events_on_rows_that_do_not_move(weather):
    cols = [column(weather, "anthropic")]
    whole, part = to_aligned_svg(cols), to_aligned_svg(cols, upto_seq=4)
    assert 'class="ev ev-4' in part and 'class="ev ev-5' not in part
    assert tree(whole).get("height") == tree(part).get("height")
    assert label_tops(whole, 3) == label_tops(part, 3)


def test_window_is_centred_on_the_selected_event():
    events = [type("E", (), {"seq": i})() for i in range(200)]
    assert window_of(events, 60, None) == (140, 200)
    assert window_of(events, 60, 100) == (70, 130)
    assert window_of(events, 60, 3) == (0, 60)
    assert window_of(events, None, 3) == (0, 200)


def test_a_window_draws_its_events_and_says_how_many_are_hidden(weather):
    view = aligned(weather.state, ["anthropic"], {}, window=5)
    assert view.hidden == len(weather.state.events) - 5
    assert [seq for seq, _ in view.events] == [e.seq for e in weather.state.events[-5:]]
    drawn = {int(n) for n in re.findall(r'class="ev ev-(\d+)', view.svg)}
    assert drawn <= {seq for seq, _ in view.events}


def test_natural_size_follows_the_style(weather):
    cols = [column(weather, p) for p in ("anthropic", "openai-chat")]
    normal, big = tree(to_aligned_svg(cols)), tree(to_aligned_svg(cols, Style.presenter_pair()))
    assert float(big.get("width")) > float(normal.get("width"))
    sizes = {float(t.get("font-size")) for t in big.iter(f"{SVG}text")}
    assert min(sizes) >= 20  # a room reads it at natural size
    # Two vendors side by side fit a projector's 1280 px (less the page's margins).
    assert float(big.get("width")) <= 1240


HOSTILE = [
    "<script>alert(1)</script>",
    '"><svg onload=alert(1)>',
    "a & b ' \" < >",
    "nul\x00esc\x1b[31mbell\x07",
    "lone \ud800 surrogate and \ufffe noncharacter",
    "rtl \u202e override",
    "",
    "]]><!--",
    "two\nlines; end\r\nsequenceDiagram",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_labels_stay_text(text):
    a = Arrow(0, 1, "request", "model", "runtime", text, kind="tool_call", detail=text or None)
    col = Column("anthropic", text, tuple(lanes("anthropic")), (a,), {0: (Delta(text, text),)})
    svg = to_aligned_svg([col])
    root = tree(svg)  # parses: nothing broke out of its element
    allowed = {"svg", "g", "rect", "line", "polygon", "text", "tspan", "title", "style"}
    for el in root.iter():
        assert el.tag.removeprefix(SVG) in allowed, el.tag
        assert not any(k.lower().startswith("on") for k in el.attrib), el.attrib
    assert "<script" not in svg and "onload=" not in svg.replace("onload=alert", "")
    texts = "".join(root.itertext())
    assert "\x00" not in texts and "\x1b" not in texts and "\ud800" not in texts
    if "\x1b" in text:
        assert "\\x1b" in texts and "\\x00" in texts
    if not text:
        assert "(empty)" in texts
    svg.encode("utf-8")  # no lone surrogate left to encode


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_labels_are_safe_in_dot_and_mermaid(text, weather):
    from flowdebug.render import to_dot, to_mermaid

    a = Arrow(0, 1, "request", "model", "runtime", text, kind="tool_call", detail=text or None)
    dot = to_dot([a], lanes("anthropic"), text)
    dot.encode("utf-8")
    assert "<script" not in dot and "\x00" not in dot and "\x1b" not in dot
    merm = to_mermaid([a], lanes("anthropic"), text)
    merm.encode("utf-8")
    said = [line.split(": ", 1)[1] for line in merm.splitlines() if ": " in line]
    said += [line.split("title ", 1)[1] for line in merm.splitlines() if "title " in line]
    assert said
    # Mermaid's own entity codes: no raw markup, statement end or entity start in a message.
    for message in said:
        assert not re.search(r"[<>\";]", re.sub(r"#(lt|gt|quot|amp|\d+);", "", message))
    # One line per statement: no newline in the text started another one.
    assert len(merm.splitlines()) == 6 + bool(text)


def test_wrapping_is_linear_a_huge_word_takes_well_under_a_second():
    from flowdebug.render import to_dot, to_mermaid
    from flowdebug.render.dot import wrap

    word = "x" * 1_600_000
    start = time.thread_time()  # this thread's CPU: the wall clock would measure the machine
    lines = wrap(word, 16)
    a = Arrow(0, 1, "request", "model", "runtime", word, kind="tool_call", detail=word)
    to_aligned_svg([Column("anthropic", "A", tuple(lanes("anthropic")), (a,))])
    to_dot([a], lanes("anthropic"))
    to_mermaid([a], lanes("anthropic"))
    assert time.thread_time() - start < 1.0
    assert len(lines) == 3 and lines[-1].endswith("…") and all(len(x) <= 24 for x in lines)


def test_wrap_keeps_words_and_says_when_it_cuts():
    from flowdebug.render.dot import wrap

    assert wrap("tool_use call_1 get_weather", 16) == ["tool_use call_1", "get_weather"]
    assert wrap("short", 16) == ["short"]
    assert wrap("a " * 100, 16)[-1].endswith("…")
    assert wrap("end   " + " " * 10_000, 16) == ["end"]


def test_per_vendor_exports_keep_the_shared_rows(weather):
    view = aligned(weather.state, ["anthropic", "mcp"], {})
    one = tree(view.export_svg("anthropic"))
    assert [g.get("data-protocol") for g in one.iter(f"{SVG}g") if g.get("data-protocol")] == [
        "anthropic"
    ]
    assert one.get("height") == tree(view.svg).get("height")  # MCP's row is kept, empty
    dot = view.export_dot("anthropic")
    assert dot.count("{rank=same;") == len(table(view.columns, Metrics.of(Style()), 0)[0]) + 1
    merm = view.export_mermaid("anthropic")
    assert merm.startswith("sequenceDiagram") and "tool_use call_1 get_weather" in merm


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz not installed")
def test_png_export_of_an_aligned_vendor_is_a_png(weather):
    view = aligned(weather.state, ["anthropic", "mcp"], {})
    assert to_png(view.export_dot("anthropic")).startswith(b"\x89PNG")


def test_a_window_that_slides_draws_no_cell_again(weather):
    """A Step moves every row of a window (the oldest event leaves): each cell is drawn at the
    top of the view and moved to its row, so the ones already drawn are found, not drawn."""
    from flowdebug.render import aligned_svg

    full = [column(weather, p) for p in ALL]
    slid = [
        Column(c.protocol, c.title, c.lanes, tuple(a for a in c.arrows if a.seq > 0)) for c in full
    ]
    to_aligned_svg(full)
    before = aligned_svg._cell_body.cache_info()
    svg = to_aligned_svg(slid)
    after = aligned_svg._cell_body.cache_info()
    assert after.misses == before.misses
    assert after.hits - before.hits == svg.count('class="ev ev-')
    # The rows did move: event 1 now sits where event 0 sat.
    assert label_tops(svg, 1) != label_tops(to_aligned_svg(full), 1)


def test_only_labels_of_a_bounded_length_are_remembered():
    from flowdebug.render import aligned

    aligned._wrapped.cache_clear()
    label_lines = aligned.label_lines
    short, long = "get_weather(city=Paris)", "x" * 1_000_000
    assert label_lines(short, 20, 3) == label_lines(short, 20, 3)
    assert label_lines(long, 20, 3)[-1].endswith("…")
    cached = aligned._wrapped.cache_info()
    assert cached.currsize == 1 and cached.hits == 1  # the megabyte is wrapped, not kept
