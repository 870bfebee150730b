"""The aligned view, its exports, its select box and Play's captions under attack (issue 13
items 3 and 6): whatever a person, a model, a tool or an import supplies is drawn as text, never
as markup, and does not break the picture, however long or strange.

A scenario file full of vectors (tool name, description, arguments, call id, result, user and
model text) is run with a dropped result, so every vendor but one also refuses a request with
its own message quoting the hostile id. The SVG is parsed and checked element by element
against what our renderer draws; each label reads back as the input made visible.
"""

from __future__ import annotations

import json
import re
import shutil
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from flowdebug import protocols
from flowdebug.engine.execution.faults import parse_fault
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.tracing.trace import PHASES
from flowdebug.render import safe, to_png, to_svg
from flowdebug.render.aligned_svg import MONO, SANS
from flowdebug.views.debugger import aligned, refusals
from flowdebug.views.story import caption

SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"
ALL = list(protocols.PROTOCOLS)

# One string per family of attack: markup, markup the Markdown around the SVG could make,
# entities that decode to markup, what DOT and Mermaid read, characters that break a picture.
VECTORS = (
    "{ } \\G \\N \\E \\L \\l \\n \\",
    "</svg><script>window.__pwned=1</script>",
    "]]><!-- <foreignObject><iframe srcdoc='<script>parent.__pwned=1</script>'/>",
    "[link](javascript:window.__pwned=1) javascript:alert(1)",
    "$$x^2$$ $y$ :smile: :material/home: :red[red] **bold** `tick`",
    "&lt;img src=x onerror=window.__pwned=1&gt; &#60;b&#62;",
    "%% ; # --> end",
    "nul\x00 esc\x1b[31m fffe\ufffe ffff\uffff rtl\u202eevil\u2066 ls\u2028ps\u2029",
    "two\n\nlines\r\n<img src=x onerror=window.__pwned=1>",
)
HOSTILE = " ".join(VECTORS)
# Each field starts with what a short label keeps: an RTL override and an ESC.
LEAD = "\u202e\x1b "

# What our renderer draws, and with which attributes: nothing else may appear.
ATTRS = {
    "svg": {"class", "width", "height", "viewBox", "role"},
    "style": set(),
    "g": {"class", "data-kind", "data-protocol", "transform"},
    "title": set(),
    "rect": {"class", "x", "y", "width", "height", "rx", "fill", "fill-opacity", "stroke"}
    | {"stroke-width", "stroke-dasharray"},
    "line": {"class", "x1", "y1", "x2", "y2", "stroke", "stroke-width", "stroke-dasharray"}
    | {"stroke-opacity"},
    "polygon": {"class", "points", "fill"},
    "text": {"class", "x", "y", "font-family", "font-size", "fill", "text-anchor", "font-weight"},
    "tspan": {"x", "y", "fill", "font-weight"},
}
CLASSES = {
    "svg": r"fd-aligned",
    "g": r"fd-vendor|ev ev-\d+( current)?( selected)?",
    "rect": r"bg|after-halt|band band-(" + "|".join(PHASES) + ")",
    "line": r"ln",
    "polygon": r"head",
    "text": r"lane|label|delta|phase|title|vendor-tag|halted",
}
NUMBER = re.compile(r"-?\d+(\.\d+)?")
VALUES = {
    "fill": r"#[0-9a-f]{6}([0-9a-f]{2})?",
    "stroke": r"#[0-9a-f]{6}|none",
    "font-family": re.escape(SANS) + "|" + re.escape(MONO),
    "text-anchor": r"start|middle",
    "font-weight": r"bold",
    "data-kind": r"arrow|self|note|delta|rejection",
    "data-protocol": "|".join(map(re.escape, ALL)),
    "role": r"img",
    "points": r"[-\d., ]+",
    "viewBox": r"[-\d. ]+",
    "stroke-dasharray": r"[\d.,]+",
    "transform": r"translate\(0 -?\d+(\.\d+)?\)",
}


def scenario(tmp: Path, name: str, *, tool: str, text: str, arg: str, result: str, call_id: str):
    """A scenario file whose model calls ``tool`` once, then answers ``text``."""
    data = {
        "name": name,
        "title": name,
        "user": text,
        "tools": [
            {
                "tool": {"name": tool, "description": text},
                "handler": {"kind": "fixed", "result": result},
            }
        ],
        "turns": [
            {"calls": [{"name": tool, "arguments": {"q": arg}, "id": call_id}]},
            {"text": text},
        ],
    }
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def run(path: Path, fault: str | None = None) -> Session:
    s = Session.from_scenario(str(path))
    if fault:
        s.set_faults([parse_fault(fault)])
    s.run()
    return s


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Session:
    """Every field a vector, the result dropped: a refusal quoting the hostile call id."""
    path = scenario(
        tmp_path_factory.mktemp("hostile"),
        "hostile",
        tool=f"tool{LEAD}{HOSTILE}",
        text=f"text{LEAD}{HOSTILE}",
        arg=f"arg{LEAD}{HOSTILE}",
        result=f"result{LEAD}{HOSTILE}",
        call_id=f"id{LEAD}{HOSTILE}",
    )
    return run(path, "drop_result@#1")


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> dict[str, Session]:
    """One session per field holding a megabyte (a word with no space to break it at)."""
    tmp = tmp_path_factory.mktemp("big")
    mb = "x" * 1_000_000
    fields = dict(tool="t", text="t", arg="a", result="r", call_id="c1")
    out = {}
    for name in ("tool", "text", "arg", "result", "call_id"):
        out[name] = run(scenario(tmp, name, **{**fields, name: f"{name}{mb}"}), "drop_result@#1")
    return out


def nospace(text: str) -> str:
    return "".join(text.split())


def text_of(el: ET.Element) -> str:
    return "".join(el.itertext())


def check_ours(svg: str) -> ET.Element:
    """``svg`` parsed, every element, attribute and class one our renderer draws."""
    root = ET.fromstring(svg)  # well-formed: no text closed an element or a CDATA section
    for el in root.iter():
        tag = el.tag.removeprefix(SVG)
        assert el.tag.startswith(SVG) and tag in ATTRS, el.tag
        assert set(el.attrib) <= ATTRS[tag], (tag, el.attrib)
        for name, value in el.attrib.items():
            if name == "class":
                assert re.fullmatch(CLASSES[tag], value), (tag, value)
            elif name in VALUES:
                assert re.fullmatch(VALUES[name], value), (name, value)
            elif name not in ("class",):
                assert NUMBER.fullmatch(value), (tag, name, value)
    (style,) = root.iter(f"{SVG}style")
    css = style.text or ""
    assert re.findall(r"\.ev-(\S+?)[ :)]", css) and all(
        n.isdigit() for n in re.findall(r"\.ev-(\S+?)[ :)]", css)
    )
    assert not re.search(r"url\(|@import|expression|[<\\]", css), css
    # Nothing invisible or unencodable in the picture (every character a person can see).
    assert not safe._INVISIBLE.search(svg)
    svg.encode("utf-8")
    return root


def views(s: Session, **kw):
    refused = refusals(s.conversation, s.state.events, ALL)
    return aligned(s.state, ALL, refused, window=None, **kw), refused


@pytest.mark.parametrize(
    "kw",
    [{}, {"stream": True}, {"selected": 3, "upto_seq": 5}, {"stream": True, "selected": 7}],
    ids=["plain", "stream", "selected-upto", "stream-selected"],
)
def test_hostile_session_draws_only_our_elements(hostile, kw):
    view, refused = views(hostile, **kw)
    assert set(refused) >= {"anthropic", "openai-chat", "openai-responses"}  # quoting the id
    root = check_ours(view.svg)
    for protocol in ALL:
        check_ours(view.export_svg(protocol))
    assert len([g for g in root.iter(f"{SVG}g") if g.get("class") == "fd-vendor"]) == len(ALL)


def test_hostile_labels_read_back_as_the_input_made_visible(hostile):
    view, _ = views(hostile)
    root = ET.fromstring(view.svg)
    checked = quoted = 0
    for col, vendor in zip(
        view.columns,
        [g for g in root.iter(f"{SVG}g") if g.get("class") == "fd-vendor"],
        strict=True,
    ):
        labels: dict[int, list[str]] = {}
        for a in col.arrows:
            labels.setdefault(a.seq, []).append(nospace(safe.visible(a.label)))
        for g in vendor.iter(f"{SVG}g"):
            if g.get("data-kind") not in ("arrow", "self", "rejection"):
                continue
            seq = int(g.get("class").split()[1].removeprefix("ev-"))
            (label,) = [t for t in g.iter(f"{SVG}text") if t.get("class") == "label"]
            shown = nospace(text_of(label)).removesuffix("…")
            assert any(full.startswith(shown) for full in labels[seq]), (shown, labels[seq])
            checked += 1
        # A refusal's whole message is its hover title, character for character.
        for title in vendor.iter(f"{SVG}title"):
            details = {safe.visible(a.detail) for a in col.arrows if a.detail}
            assert text_of(title) in details  # short enough to be whole
            if "id\\u202e" in text_of(title):  # the vendor quotes the call's id
                quoted += 1
                assert "</svg><script>window.__pwned=1</script> ]]><!-- <foreignObject>" in (
                    text_of(title)
                )
                assert "\\x00" in text_of(title) and "\\x1b" in text_of(title)
    assert checked > 30 and quoted >= 3
    # The call's label as typed, the RTL override and ESC shown as escapes.
    assert "tool\\u202e\\x1b { } \\G" in text_of(root)


def test_streamed_rows_show_the_arguments_tail_as_text(hostile):
    view, _ = views(hostile, stream=True)
    root = check_ours(view.svg)
    shown = {}
    for vendor in root.iter(f"{SVG}g"):
        if vendor.get("class") == "fd-vendor":
            rows = [text_of(t) for t in vendor.iter(f"{SVG}text") if t.get("class") == "delta"]
            shown[vendor.get("data-protocol")] = rows
    streamed = 0
    for col in view.columns:
        texts = [safe.visible(d.text) for ds in col.deltas.values() for d in ds]
        assert len(shown[col.protocol]) == len(texts)
        for row, full in zip(shown[col.protocol], texts, strict=True):
            assert full.endswith(row.removeprefix("…")), (col.protocol, row)
            streamed += 1
    assert streamed >= 6


def test_the_select_box_labels_name_the_event_in_words(hostile):
    view, _ = views(hostile)
    labels = dict(view.events)
    assert labels[3].startswith("3 · request · tool")
    assert all(len(label) < 100 for label in labels.values())


def test_the_select_box_labels_carry_nothing_invisible(hostile):
    view, _ = views(hostile)
    for _, label in view.events:
        assert not safe._INVISIBLE.search(label), label


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz not installed")
def test_dot_export_draws_hostile_labels_literally(hostile):
    view, _ = views(hostile)
    for protocol in ALL:
        root = ET.fromstring(to_svg(view.export_dot(protocol)))
        for el in root.iter():
            tag = el.tag.removeprefix(SVG)
            assert tag in {"svg", "g", "title", "polygon", "path", "ellipse", "text", "a"}, tag
            assert not any(k.endswith("href") or k.startswith("on") for k in el.attrib), el.attrib
        texts = " ".join(text_of(t) for t in root.iter(f"{SVG}text"))
        # Graphviz reads escapes (\G is the graph's name): each backslash shows as typed.
        assert "\\u202e\\x1b { } \\G \\N" in texts, texts
        assert "sequence" not in texts
        assert to_png(view.export_dot(protocol)).startswith(b"\x89PNG")


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz not installed")
def test_dot_tooltips_of_a_refusal_keep_their_backslashes(hostile):
    view, _ = views(hostile)
    root = ET.fromstring(to_svg(view.export_dot("anthropic")))
    tips = [v for el in root.iter() for k, v in el.attrib.items() if k == f"{XLINK}title"]
    assert tips and all("{ } \\G \\N \\E \\L \\l \\n \\" in t for t in tips), tips


def test_dot_tooltips_are_cut(big):
    view, _ = views(big["call_id"])
    assert len(view.export_dot("anthropic")) < 50_000


_ENTITY = {"#35;": "#", "#59;": ";", "#lt;": "<", "#gt;": ">", "#quot;": '"', "#amp;": "&"}
_ENTITY |= {"#37;": "%", "#123;": "{", "#125;": "}"}
STATEMENT = re.compile(
    r"sequenceDiagram|    title .+|    participant \w+ as [\w ]+|    par .+|    end"
    r"|    rect rgb\(\d+, \d+, \d+\)|\s+(\w+(->>|-->>|--\))\w+|Note over \w+(,\w+)?): .+"
)


def test_mermaid_export_is_one_statement_a_line_with_text_as_entities(hostile):
    view, _ = views(hostile)
    for protocol in ALL:
        merm = view.export_mermaid(protocol)
        said = []
        for line in merm.splitlines():
            assert STATEMENT.fullmatch(line), (protocol, line)
            if ": " in line:
                said.append(line.split(": ", 1)[1])
        assert said
        for message in said:
            bare = re.sub(r"#(lt|gt|quot|amp|\d+);", "", message)
            assert not re.search(r"[<>\";#%{}]", bare), message
            assert not safe._INVISIBLE.search(message)
            assert len(message) <= safe.MERMAID_MAX * 6  # each character at most one entity
        # Decoded, a message reads as the label made visible, on one line.
        first = re.sub(r"#(lt|gt|quot|amp|\d+);", lambda m: _ENTITY[m.group()], said[0])
        assert first.endswith("…")  # cut: Mermaid draws nothing past 50,000 characters
        whole = " ".join(safe.visible(f"text{LEAD}{HOSTILE}").split())
        assert whole.startswith(first.removesuffix("…")), first


@pytest.mark.parametrize("field", ["tool", "text", "arg", "result", "call_id"])
def test_a_megabyte_field_renders_well_under_a_second(big, field):
    # CPU time of this thread, not the wall clock: on a shared machine (another run, other
    # workers) the wall clock measured the load, and the 1 s failed at 1.49 s
    s = big[field]
    start = time.thread_time()
    view, _ = views(s, stream=True)
    drawn = time.thread_time() - start
    check_ours(view.svg)
    assert len(view.svg) < 200_000  # labels are wrapped; no megabyte reaches the page
    times = {}
    for protocol in ALL:
        for kind, export in (
            ("svg", view.export_svg),
            ("dot", view.export_dot),
            ("mermaid", view.export_mermaid),
        ):
            start = time.thread_time()
            out = export(protocol)
            times[f"{protocol} {kind}"] = time.thread_time() - start
            if kind != "dot":  # see test_dot_tooltips_are_cut
                assert len(out) < 200_000, (protocol, kind, len(out))
    start = time.thread_time()
    for e in s.state.events:
        caption(e, s.state.events, s.state, {})
    told = time.thread_time() - start
    assert drawn < 1.0, drawn
    assert max(times.values()) < 0.5, times
    assert told < 0.5, told


def test_play_captions_stay_a_sentence_long_with_a_megabyte_tool_name(big):
    s = big["tool"]
    for e in s.state.events:
        assert len(caption(e, s.state.events, s.state, {})) < 1_000, e.kind


def test_play_captions_carry_nothing_invisible(hostile):
    refused = refusals(hostile.conversation, hostile.state.events, ALL)
    for e in hostile.state.events:
        told = caption(e, hostile.state.events, hostile.state, refused)
        assert not safe._INVISIBLE.search(told), (e.kind, told)


def test_play_captions_quote_hostile_text_as_typed(hostile):
    refused = refusals(hostile.conversation, hostile.state.events, ALL)
    told = [caption(e, hostile.state.events, hostile.state, refused) for e in hostile.state.events]
    # (The RTL override and ESC before them may be shown as escapes.)
    assert told[0].startswith("The user asks: “text")
    assert f"{VECTORS[0]} </svg><script>" in told[0]
    assert any(f"{VECTORS[0]} </svg><script>window.__pwned=1" in t for t in told[2:])


DEEP = "[" * 1000 + "]" * 1000  # 2,000 characters: a result short enough to be read out


def test_a_deeply_nested_result_is_told_not_raised(tmp_path):
    path = scenario(tmp_path, "deep", tool="t", text="t", arg="a", result=DEEP, call_id="c1")
    s = Session.from_scenario(str(path))
    s.step()
    s.step()
    s.step()  # the call
    s.step()  # its run and result
    result = next(e for e in s.state.events if e.kind == "result")
    assert "[[[" in caption(result, s.state.events, s.state, {})


def test_a_deeply_nested_result_does_not_stop_the_scripted_model(tmp_path):
    path = scenario(tmp_path, "deep2", tool="t", text="t", arg="a", result=DEEP, call_id="c1")
    s = Session.from_scenario(str(path))
    assert "done" in s.run()
