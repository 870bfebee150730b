"""The teaching picture: the cycle drawn once, each chosen vendor's words beside each event.

A helper of the pages, not a page. The picture is a Streamlit custom component
(``st.components.v2``): its HTML, CSS and JavaScript ship inside the package
(``flowdebug/views/picture/``), and it receives the row table of
:func:`flowdebug.views.teaching.picture` as data. A click on an event lights it in every
column and tells the server through the component's state.
"""

from __future__ import annotations

from functools import partial
from importlib import resources
from typing import Any

import streamlit as st
from streamlit.components.v2.get_bidi_component_manager import get_bidi_component_manager

from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.session_state import SessionState
from flowdebug.render import teaching as slide
from flowdebug.views.teaching_payload import drawn
from ui import common
from ui import graphs as drawing

_NAME = "flowdebug.teaching_picture"


def _asset(name: str) -> str:
    """``name`` as a file Streamlit serves once to each browser, when it found the component's
    ``asset_dir`` in the installed package (pyproject.toml's ``[[tool.streamlit.component.
    components]]``); otherwise its text, which every message that draws the picture carries
    (12 KB a Step)."""
    if get_bidi_component_manager().get_component_asset_root(_NAME) is not None:
        return name
    return (resources.files("flowdebug.views") / "picture" / name).read_text(encoding="utf-8")


_PICTURE = st.components.v2.component(
    _NAME,
    html="",
    css=_asset("picture.css"),
    js=_asset("picture.js"),
    isolate_styles=False,  # plain page DOM: the picture's header sticks under the control bar
)
LIT = "fd_event"  # the event lit in every column (shared with the aligned view's picker)


def _clicked() -> None:
    seq = st.session_state.get("fd_picture", {}).get("lit")
    if isinstance(seq, int):
        st.session_state[LIT] = seq


def draw_picture(
    state: SessionState, chosen: list[str], window: int | None, upto: int | None = None
) -> None:
    """The teaching picture of ``state`` for the vendors ``chosen``. ``upto``: the last event
    Play has revealed (None: all of them)."""
    # The same state and view send the same bytes, built once (a Play beat, a rerun).
    made = drawn(state, chosen, window, _picked(), upto)
    table, refused = made.table, made.refused
    _PICTURE(data=made.data, key="fd_picture", default={"lit": None},
             on_lit_change=_clicked)  # fmt: skip
    for name, r in refused.items():
        if name in chosen:
            st.error(
                common.literal(
                    f"{common.title(name)} refuses this request (HTTP {r.status}), so its "
                    f"cycle stops: {r.message}"
                ),
                icon="⛔",
            )
    if table.hidden:
        st.caption(f"{table.hidden} events outside this window are hidden.")


def _picked() -> int | None:
    """The event a person lit in every column (its seq), None when none is."""
    picked = st.session_state.get(LIT, -1)
    return None if picked is None or picked < 0 else picked


def slide_data(
    session: Session, chosen: list[str], window: int | None, selected: int | None
) -> dict[str, Any]:
    """The picture of ``session`` as it stands now, as the slides draw it."""
    return drawn(session.state, chosen, window, selected).table.data()


def exports(session: Session, chosen: list[str], window: int | None) -> None:
    """The picture for slides, drawn on the server from the same table (SVG and PNG). The page
    draws the panel outside the fragment a Step reruns, so a Step does not send it; its buttons
    (drawn only while it is open) make the file from the session as it is when clicked."""
    box = st.expander("Export the picture for slides", key="teaching_export_open",
                      on_change="rerun")  # fmt: skip
    if not box.open:
        return
    now = partial(slide_data, session, chosen, window, _picked())
    name = "teaching-" + "-".join(chosen) if len(chosen) < 6 else "teaching"
    files: list[drawing.Export] = [
        ("SVG", lambda: slide.to_svg(now()), "svg", "image/svg+xml"),
        ("PNG", lambda: slide.to_png(now()), "png", "image/png"),
    ]
    drawing.export_buttons(box.container(horizontal=True, gap="small"), name, files,
                           key_prefix="teaching_")  # fmt: skip
