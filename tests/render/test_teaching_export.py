"""The teaching picture exported for slides (issue 29 item 6): SVG and PNG drawn on the server
from the same row table as the page's component, with no two labels overlapping."""

from __future__ import annotations

import io
import itertools
import xml.etree.ElementTree as ET

import pytest
from PIL import Image

from flowdebug import protocols
from flowdebug.engine.execution.faults import parse_fault
from flowdebug.engine.session.debugger import Session
from flowdebug.render.teaching import SIZE, to_png, to_svg, wrap
from flowdebug.views.debugger import refusals
from flowdebug.views.teaching import picture

ALL = list(protocols.PROTOCOLS)
NS = "{http://www.w3.org/2000/svg}"


def _run(faults: str | None = None) -> Session:
    s = Session.from_scenario("weather")
    if faults:
        s.set_faults([parse_fault(faults)])
    s.run()
    return s


def _data(s: Session, names: list[str]) -> dict:
    refused = refusals(s.conversation, s.state.events, names)
    return picture(s.state, names, refused, window=None).data()


def text_boxes(svg: str) -> list[tuple[str, float, float, float, float]]:
    """(text, left, top, right, bottom) of every text, as a monospaced face draws it (0.6 em
    a character), from its baseline: ascent 0.8 em, descent 0.2 em."""
    root = ET.fromstring(svg)
    out = []
    for t in root.iter(f"{NS}text"):
        text = t.text or ""
        x, y = float(t.get("x", 0)), float(t.get("y", 0))
        out.append((text, x, y - 0.8 * SIZE, x + 0.6 * SIZE * len(text), y + 0.2 * SIZE))
    return out


def overlapping(boxes):
    return [
        (a[0], b[0])
        for a, b in itertools.combinations(boxes, 2)
        if a[1] < b[3] and b[1] < a[3] and a[2] < b[4] and b[2] < a[4]
    ]


@pytest.mark.parametrize("names", [ALL, ["anthropic", "gemini"], ["mcp"]])
def test_no_two_labels_of_the_exported_svg_overlap(names):
    svg = to_svg(_data(_run(), names))
    boxes = text_boxes(svg)
    assert len(boxes) > 20
    assert overlapping(boxes) == []
    width = float(ET.fromstring(svg).get("width", 0))
    assert all(left >= 0 and right <= width for _, left, _, right, _ in boxes)


def test_the_svg_names_every_vendor_and_links_each_result_to_its_call():
    svg = to_svg(_data(_run(), ALL))
    text = " ".join(t.text or "" for t in ET.fromstring(svg).iter(f"{NS}text"))
    for short in ("Anthropic", "OpenAI Chat", "OpenAI Responses", "Gemini", "MCP", "Bedrock"):
        assert short in text
    for term in ("tool_use_id:", "is_error: true", "tool_call_id:", "toolUseId:", "isError:"):
        assert term in text, term
    assert "get_weather(Tokyo) → timeout" in text


def test_hostile_labels_are_text_and_still_do_not_overlap():
    s = _run("drop_result@#1")
    hostile = "</text><script>alert(1)</script> " + "x" * 300 + " \x1b"
    data = _data(s, ALL)
    data["rows"][0]["label"] = hostile
    cell = next(c for r in data["rows"] for c in r["cells"] if c)
    cell["lines"].append([[hostile, "error"]])
    svg = to_svg(data)
    root = ET.fromstring(svg)  # well-formed: the markup stayed text
    assert not list(root.iter(f"{NS}script"))
    joined = "".join(t.text or "" for t in root.iter(f"{NS}text"))
    assert "<script>alert(1)</script>" in joined and "\\x1b" in joined
    assert overlapping(text_boxes(svg)) == []


def test_the_png_is_the_same_layout_as_the_svg():
    data = _data(_run(), ALL)
    root = ET.fromstring(to_svg(data))
    png = Image.open(io.BytesIO(to_png(data)))
    assert png.format == "PNG"
    assert png.size == (int(root.get("width", 0)), int(root.get("height", 0)))


def test_wrap_breaks_at_spaces_before_inside_a_name():
    assert wrap('call_id: "call_1" · no error flag', 200) == [
        'call_id: "call_1"',
        "· no error flag",
    ]
    assert wrap("functionResponse ×2", 150) == ["function", "Response ×2"]
