"""The aligned view, Play's captions, streamed rows and the exports in Chromium, over a session
full of vectors (issue 13 item 3): nothing runs, nothing but our SVG is drawn, and the text
shows as typed.

The aligned SVG is put in the page with ``st.markdown(..., unsafe_allow_html=True)`` (st.html's
sanitizer drops SVG), so besides markup the vectors aim at what Streamlit's Markdown makes
around raw HTML: blank lines, ``$$`` math, ``:emoji:`` and ``:color[...]`` directives,
``[link](javascript:...)`` and entities that decode to ``<``. Each vector sets
``window.__pwned``, opens a dialog or fetches from a local "pixel" server if it ever acts.

The session is a scenario run with its result dropped, saved to the store before the app
starts, so most vendors also refuse a request with a message quoting the hostile call id.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from playwright.sync_api import expect

from flowdebug.engine.execution.faults import parse_fault
from flowdebug.engine.session.debugger import Session
from flowdebug.store.sessions import open_store
from tests import http_stub
from tests.e2e.app_server import app_server, wait_idle

pytestmark = pytest.mark.browser

# What the aligned view's box may hold: our SVG's elements, in Streamlit's wrappers.
OURS = {"div", "svg", "style", "g", "title", "rect", "line", "polygon", "text", "tspan"}
MADE = "a, img, iframe, script, foreignObject, object, embed, math, .katex, [href], [src]"
# Every element of the box whose tag is not ours, or with an on* attribute.
FOREIGN = f"""() => {{
  const box = document.querySelector('.fd-aligned-scroll');
  if (!box) return ['no aligned view'];
  const ours = new Set({json.dumps(sorted(OURS))});
  return [box, ...box.querySelectorAll('*')].filter(e => !ours.has(e.localName)
    || [...e.attributes].some(a => /^on/i.test(a.name))).map(e => e.outerHTML.slice(0, 120));
}}"""


class _Pixel(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.server.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def vectors(pixel: str) -> str:
    return " ".join(
        [
            "{ } \\G \\N \\L \\",
            "</svg><script>window.__pwned=1</script>",
            "<img src=x onerror=window.__pwned=1>",
            f"]]><!-- <foreignObject><img src='{pixel}/fo'></foreignObject>",
            "[link](javascript:window.__pwned=1)",
            f"![pixel]({pixel}/md)",
            "$$x^2$$ $y$ :smile: :material/home: :red[red] **bold**",
            "&lt;img src=x onerror=window.__pwned=1&gt; &#60;b&#62;",
            "%% ; # -->",
            "esc\x1b nul\x00 rtl\u202eevil",
            "\n\n<img src=x onerror=window.__pwned=1>\n\n<svg onload=window.__pwned=1>",
        ]
    )


@pytest.fixture(scope="module")
def pixel():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pixel)
    server.hits = []
    with http_stub.serving(server):
        yield server


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, pixel):
    """(app URL, session id, the vectors) for a run session with a vector in every field."""
    v = vectors(f"http://127.0.0.1:{pixel.server_address[1]}")
    tmp = tmp_path_factory.mktemp("xss-aligned")
    scenario = {
        "name": "hostile",
        "title": "hostile",
        "user": f"text {v}",
        "tools": [
            {
                "tool": {"name": f"tool {v}", "description": f"description {v}"},
                "handler": {"kind": "fixed", "result": f"result {v}"},
            }
        ],
        "turns": [
            {"calls": [{"name": f"tool {v}", "arguments": {"q": f"arg {v}"}, "id": f"id {v}"}]},
            {"text": f"final {v}"},
        ],
    }
    path = tmp / "hostile.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    session = Session.from_scenario(str(path))
    session.set_faults([parse_fault("drop_result@#1")])
    session.run()
    db = tmp / "sessions.db"
    open_store(str(db)).save(session.state, name=f"session {v}")
    with app_server(db) as app:
        yield app, session.state.id, v


@pytest.fixture(scope="module")
def page(hostile, browser):
    ctx = browser.new_context(viewport={"width": 1600, "height": 1000}, accept_downloads=True)
    pg = ctx.new_page()
    pg.set_default_timeout(30_000)
    pg.dialogs = []
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    app, session_id, _ = hostile
    pg.goto(f"{app}/?session={session_id}", wait_until="domcontentloaded")
    pg.locator("svg.fd-aligned").wait_for()
    wait_idle(pg)
    yield pg
    ctx.close()


def nothing_ran(page, pixel, where: str) -> None:
    page.wait_for_timeout(500)  # time for an injected script or image to act
    assert page.evaluate("window.__pwned") is None, where
    assert not page.dialogs, where
    assert not pixel.hits, (where, pixel.hits)
    assert not page.locator("[data-testid='stException']").count(), where


def aligned_is_ours(page, where: str) -> str:
    """The aligned view's box holds only our SVG; its text (with the hover titles)."""
    assert page.evaluate(FOREIGN) == [], where
    assert not page.locator(f".fd-aligned-scroll :is({MADE})").count(), where
    return page.locator("svg.fd-aligned").text_content()


def test_the_aligned_view_draws_vectors_as_text(page, pixel):
    text = aligned_is_ours(page, "aligned")
    # Labels are wrapped and cut: their heads, with escapes shown as typed.
    assert "tool { } \\G \\N" in text
    # A refusal's hover title holds the vendor's whole message, quoting the call id literally.
    titles = page.locator("svg.fd-aligned title").all_text_contents()
    quoting = [t for t in titles if "id { } " in t]
    assert len(quoting) >= 3, titles
    for title in quoting:
        assert "</svg><script>window.__pwned=1</script> <img src=x onerror=" in title
        assert "[link](javascript:window.__pwned=1)" in title
        # (A vendor's id rules may rewrite the "/" of :material/home:; nothing else changes.)
        assert "$$x^2$$ $y$ :smile: :material" in title and ":red[red] **bold**" in title
        assert "&lt;img src=x onerror=window.__pwned=1&gt; &#60;b&#62;" in title
        assert "esc\\x1b nul\\x00 rtl\\u202eevil" in title
    # Each refusal's whole sentence under the view, as typed (Markdown made literal).
    shown = page.locator("[data-testid='stAlert']").all_inner_texts()
    assert any("[link](javascript:window.__pwned=1)" in s for s in shown), shown
    nothing_ran(page, pixel, "aligned")


# What the teaching picture (a custom component drawing with textContent) may hold.
PICTURE_OURS = {"div", "span", "wbr", "pre", "svg", "line", "path", "circle"}
PICTURE_FOREIGN = f"""() => {{
  const box = document.querySelector('.fdp');
  if (!box) return ['no teaching picture'];
  const ours = new Set({json.dumps(sorted(PICTURE_OURS))});
  return [box, ...box.querySelectorAll('*')].filter(e => !ours.has(e.localName)
    || [...e.attributes].some(a => /^on/i.test(a.name))).map(e => e.outerHTML.slice(0, 120));
}}"""


def test_the_teaching_picture_draws_vectors_as_text(page, hostile, pixel):
    from tests.e2e.test_projector import choose_layout

    choose_layout(page, "Teaching picture")
    page.wait_for_function("() => document.querySelectorAll('.fdp-row').length > 0")
    assert page.evaluate(PICTURE_FOREIGN) == []
    assert not page.locator(f".fdp :is({MADE})").count()
    text = page.locator(".fdp").text_content()
    assert "</svg><script>window.__pwned=1</script> <img src=x onerror=" in text
    assert "[link](javascript:window.__pwned=1)" in text
    assert "$$x^2$$ $y$ :smile:" in text and "&#60;b&#62;" in text
    # A click lights a hostile event in every column; its wire reads as typed.
    page.locator(".fdp-row[data-kind='tool_call']").first.click()
    wait_idle(page)
    assert page.locator(".fdp-row.fdp-lit").count() == 1
    assert page.evaluate(PICTURE_FOREIGN) == []
    assert "<img src=x onerror=" in page.locator(".fdp-row.fdp-lit").text_content()
    nothing_ran(page, pixel, "teaching picture")
    choose_layout(page, "Aligned lanes per vendor")


def test_selecting_an_event_lights_it_and_its_label_reads_as_typed(page, hostile, pixel):
    box = page.get_by_role("combobox", name="Light one event in every vendor")
    box.click()
    box.fill("3 · request")
    page.keyboard.press("Enter")
    wait_idle(page)
    assert page.locator("svg.fd-aligned .ev-3.selected").count() >= 5
    # The chosen label, as the select box shows it: the tool's name as typed.
    chosen = (
        page.locator(".st-key-fd_event input").input_value()
        + page.locator(".st-key-fd_event").inner_text()
    )
    assert "3 · request · tool { } \\G \\N \\L" in chosen, chosen
    assert not page.locator(f".st-key-fd_event :is({MADE})").count()
    aligned_is_ours(page, "selected")
    nothing_ran(page, pixel, "selected")


def _layout(page) -> None:
    """The Graph layout expander, open."""
    if not page.locator(".st-key-show_stream").is_visible():
        page.get_by_text("Graph layout").click()
        page.locator(".st-key-show_stream").wait_for()


def test_streamed_rows_draw_the_arguments_as_text(page, hostile, pixel):
    _layout(page)
    page.locator(".st-key-show_stream label").first.click()
    expect(page.locator(".st-key-show_stream input")).to_be_checked()  # it took the click
    wait_idle(page)
    rows = page.locator("svg.fd-aligned text.delta")
    expect(rows.first).to_be_attached()
    assert rows.count() >= 6
    tails = rows.all_text_contents()
    # The arguments' JSON, its tail shown: the last vector's markup, as typed.
    assert any(t.endswith('svg onload=window.__pwned=1>"}') for t in tails), tails
    assert any("]]><!-- <forei" in t for t in tails), tails
    aligned_is_ours(page, "streamed")
    nothing_ran(page, pixel, "streamed")


RECORD = """() => {
  window.__captions = [];
  const read = () => {
    const cap = document.querySelector('.st-key-fd_play_caption');
    const text = cap ? cap.innerText : '';
    if (text && !window.__captions.includes(text)) window.__captions.push(text);
  };
  new MutationObserver(read).observe(document.body,
    {subtree: true, childList: true, characterData: true});
}"""


def test_play_tells_each_event_with_the_vectors_as_typed(page, hostile, pixel):
    _, _, v = hostile
    page.evaluate(RECORD)
    page.locator(".st-key-play button").first.click()
    # Play reveals the nine events, then turns back into Play.
    page.wait_for_function(
        "() => window.__captions.some(c => /event 9 of 9/.test(c))", timeout=60_000
    )
    page.wait_for_function(
        "() => document.querySelector('.st-key-play button')?.innerText.includes('Play')"
    )
    wait_idle(page)
    captions = "\n".join(page.evaluate("window.__captions"))
    assert "The user asks: “text { } \\G \\N \\L \\ </svg><script>" in captions
    # Captions shorten a long name with an ellipsis: what they show is the name as typed.
    asked = re.search(r"The model asks to run (.+?)… for ", captions)
    assert asked is not None, captions
    assert len(asked.group(1)) >= 40
    assert f"tool {v.splitlines()[0]}".startswith(asked.group(1)), asked.group(1)
    assert not page.locator(f".st-key-fd_play_caption :is({MADE})").count()
    aligned_is_ours(page, "play")
    nothing_ran(page, pixel, "play")


def _download(page, button: str) -> bytes:
    with page.expect_download() as info:
        page.locator(f".st-key-{button} button").first.click()
    return info.value.path().read_bytes()


def test_exports_carry_the_vectors_as_text(page, hostile, pixel):
    page.get_by_text("Export one vendor's graph").click()
    svg = _download(page, "aligned_svg_anthropic").decode("utf-8")
    root = ET.fromstring(svg)
    tags = {el.tag.rsplit("}", 1)[-1] for el in root.iter()}
    assert tags <= OURS - {"div"}, tags
    assert "id { } \\G \\N \\L \\ </svg><script>" in "".join(root.itertext())
    merm = _download(page, "aligned_mmd_anthropic").decode("utf-8")
    for line in merm.splitlines():
        message = line.split(": ", 1)[1] if ": " in line else ""
        assert not re.search(r"[<>\";%]", re.sub(r"#(lt|gt|quot|amp|\d+);", "", message)), line
    assert "#lt;/svg#gt;#lt;script#gt;" in merm
    assert _download(page, "aligned_png_anthropic").startswith(b"\x89PNG")
    nothing_ran(page, pixel, "exports")


def test_separate_graphs_draw_backslashes_and_markup_as_text(page, hostile, pixel):
    _layout(page)
    page.get_by_text("Separate graphs").click()
    wait_idle(page)
    charts = page.locator("[data-testid='stGraphVizChart'] svg")
    charts.first.wait_for()
    text = " ".join(charts.locator("text").all_text_contents())
    # Graphviz in the browser reads DOT escapes: \G would be the graph's name ("sequence").
    assert "{ } \\G \\N \\L" in text, text
    assert "sequence" not in text
    assert not page.locator(
        "[data-testid='stGraphVizChart'] :is(script, foreignObject, img)"
    ).count()
    nothing_ran(page, pixel, "separate")
