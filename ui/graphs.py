"""The Debugger's aligned view: every chosen vendor on shared rows, with its exports.

A helper of the pages, not a page: app.py lists the pages st.navigation runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from flowdebug import protocols
from flowdebug.engine.session.session_state import SessionState
from flowdebug.render import Style, to_png
from flowdebug.views.debugger import AlignedView, aligned, refusals
from ui import common, projector

# The SVG keeps its natural size (type as laid out, one scale for all vendors); a view wider
# than the page scrolls sideways inside its own box instead of shrinking. The box is drawn
# once and stays (its Markdown never changes, so React keeps the element); a script fills it
# with the drawing (innerHTML: the browser parses it itself, where Markdown's HTML pipeline
# took 0.5-0.8 s of the page's main thread at every Step). Replacing the drawing in place
# never empties the page under a reader who scrolled. The SVG travels as a JSON string with
# every "<" escaped, so nothing in it can end the script early. On a page's first load the
# script can run before Streamlit has put the box in the page (its Markdown is drawn later):
# it then waits for the box, unless a newer drawing's script has run since.
BOX = (
    '<div class="fd-aligned-scroll" style="overflow-x:auto; overflow-y:hidden; '
    'max-width:100%; border:1px solid rgba(128,128,128,0.25); border-radius:6px"></div>'
)
PLAYED = BOX.replace("></div>", ">{svg}</div>")
FILL = (
    "<script>(() => {{ const svg = {svg}; "
    "const mine = window.__fdFill = (window.__fdFill || 0) + 1; "
    "const fill = () => {{ "
    "if (mine !== window.__fdFill) return true; "
    'const boxes = document.querySelectorAll(".fd-aligned-scroll"); '
    "for (const box of boxes) box.innerHTML = svg; "
    "if (boxes.length) {{ {then} }} "
    "return boxes.length > 0; }}; "
    "if (fill()) return; "
    "const wait = new MutationObserver(() => {{ if (fill()) wait.disconnect(); }}); "
    "wait.observe(document.body, {{childList: true, subtree: true}}); "
    "setTimeout(() => wait.disconnect(), 15000); "
    "}})();</script>"
)
NO_EVENT = -1


def fill_script(svg: str, then: str = "") -> str:
    """The script that puts ``svg`` (ours, its text escaped) in the aligned view's box, then
    runs ``then`` (ours: the view following the step)."""
    return FILL.format(svg=json.dumps(svg).replace("<", "\\u003c"), then=then)


class Raw:
    """HTML handed to ``st.html`` as it is. A plain string is dedented and stripped first (a
    copy and a pass over each line of the 250 KB drawing, at every Step); an object with
    ``_repr_html_`` is taken as it comes. The script has no leading blank or indent to lose."""

    def __init__(self, html: str):
        self.html = html

    def _repr_html_(self) -> str:
        return self.html


def _pick_event(view_events: tuple[tuple[int, str], ...]) -> None:
    """A select box that lights one event in every vendor (and centres the window on it)."""
    labels = dict(view_events)
    options = [NO_EVENT, *labels]
    if st.session_state.get("fd_event", NO_EVENT) not in options:
        st.session_state.fd_event = NO_EVENT  # the event left the window, or was undone
    st.selectbox(
        "Light one event in every vendor",
        options,
        key="fd_event",
        format_func=lambda n: (
            "(none: hover an arrow to light it everywhere)"
            if n == NO_EVENT
            else labels.get(n, str(n))
        ),
    )


def _png(view: AlignedView, protocol: str) -> bytes:
    return to_png(view.export_dot(protocol))


Export = tuple[str, Callable[[], str | bytes], str, str]  # label, data, extension, MIME type


def export_buttons(
    row: DeltaGenerator, protocol: str, exports: list[Export], key_prefix: str = ""
) -> None:
    """A download button in ``row`` for each of ``protocol``'s exports (made when clicked)."""
    for label, data, ext, mime in exports:
        row.download_button(
            label,
            data=data,
            file_name=f"flowdebug-{protocol}.{ext}",
            mime=mime,
            key=f"{key_prefix}{ext}_{protocol}",
            on_click="ignore",
        )


def _exports(view: AlignedView) -> None:
    # Its buttons are drawn only while it is open: eighteen of them at every Step cost the
    # server and the browser time for a panel most Steps never open.
    box = st.expander(
        "Export one vendor's graph (on the same rows)", key="export_open", on_change="rerun"
    )
    if not box.open:
        return
    with box:
        for col in view.columns:
            row = st.container(horizontal=True, gap="small", vertical_alignment="center")
            row.markdown(f"**{common.literal(col.title)}**", width="content")
            exports: list[Export] = [
                ("SVG", partial(view.export_svg, col.protocol), "svg", "image/svg+xml"),
                ("PNG", partial(_png, view, col.protocol), "png", "image/png"),
                ("Mermaid", partial(view.export_mermaid, col.protocol), "mmd", "text/plain"),
            ]
            export_buttons(row, col.protocol, exports, key_prefix="aligned_")


def draw_aligned(
    state: SessionState,
    chosen: list[str],
    style: Style,
    window: int | None,
    upto: int | None = None,
    played: bool = False,
) -> None:
    """Every chosen vendor on shared rows, in one SVG at its natural size. ``upto``: the last
    event Play has revealed (None: all of them); ``played``: a playback is on screen, which
    draws the view as Play does (see below)."""
    selected = st.session_state.get("fd_event", NO_EVENT)
    if selected == NO_EVENT and upto is not None and upto >= 0:
        selected = upto  # Play lights the event it just revealed, in every vendor
    refused = refusals(state.conversation, state.events, chosen)
    # Streaming shown when the model's turns were streamed (the sidebar's Stream) or asked for.
    stream = bool(st.session_state.get("show_stream", False))
    view = aligned(
        state,
        chosen,
        refused,
        style,
        window=window,
        selected=None if selected == NO_EVENT else selected,
        stream=stream,
        upto_seq=upto,
    )
    if len(view.columns) > 2:  # the view is wider than a screen: say who is off to the right
        # One line (short names), so the arrows start right under it.
        st.caption(
            "Side by side on the same rows: "
            + " · ".join(common.literal(protocols.facts(c.protocol).short) for c in view.columns)
            + " — scroll the view sideways to see them all."
        )
    # The SVG is all ours (flowdebug.render.aligned_svg): every text in it went through
    # flowdebug.render.safe.svg, and tests/views/test_aligned_hostile.py checks that no hostile
    # label makes an element or attribute of its own, so it may be parsed as markup.
    if upto is None and not played:
        st.markdown(BOX, unsafe_allow_html=True)
        # The Step's call to the page's follow (projector.py) rides in the same script: one
        # element fewer for every Step to send.
        then = projector.follow_call(state.step)
        st.html(Raw(fill_script(view.svg, then)), unsafe_allow_javascript=True)
    else:
        # Play redraws the view at every beat inside its fragment, and a reader may have
        # scrolled: React's in-place update of one Markdown element keeps the page still
        # (a script-filled box let it jump by a line under load). One line, no blank line:
        # Markdown leaves an HTML block as it is. The view stays drawn this way once the
        # playback has ended, while its caption stays: going back to the empty box there
        # shortened the page until the script filled it, and the browser scrolled a reader
        # who had scrolled back to the top (the next Step goes back to the box, and follows).
        st.markdown(PLAYED.format(svg=view.svg), unsafe_allow_html=True)
    for _name, sentence in view.refusals:  # the whole message: the arrow carries its first words
        st.error(common.literal(sentence), icon="⛔")
    if stream:
        st.caption(
            "Streamed: the rows under each call are its arguments as that vendor's stream "
            "delivered them, the newest fragment in bold (a vendor that sends each call whole "
            "has one row)."
        )
    # Under the graph: above it, it pushed the arrows below a projector's fold.
    if view.events:
        _pick_event(view.events)
    if view.hidden:
        st.caption(
            f"{view.hidden} events outside this window are hidden — tick *Show the whole trace*, "
            "or pick an event to centre the window on it."
        )
    _exports(view)
