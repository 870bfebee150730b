"""Streamlit glue shared by the pages: the browser session's debugger session and sidebar.

Everything here is per browser session (st.session_state); two people on one server never
share a debugger session. The sidebar is drawn once, by app.py, around whichever page runs.
What the debugger session starts is held for this browser session (ui/lifetime.py).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import get_script_run_ctx

from flowdebug import protocols
from flowdebug.engine.session import scenarios
from flowdebug.render import Style
from flowdebug.views import vendors
from flowdebug.views.debugger import status_words
from flowdebug.views.new_session import session_name
from ui import flash, lifetime, player
from ui.browser import keep_owner_cookie

# The open session and the player, which every page reaches through this module.
from ui.opened import DEFAULT_SCENARIO as DEFAULT_SCENARIO
from ui.opened import load_scenario as load_scenario
from ui.opened import notice_newer as notice_newer
from ui.opened import open_saved as open_saved
from ui.opened import reload
from ui.opened import session as session
from ui.opened import set_session as set_session
from ui.opened import store as store
from ui.player import MODEL_KEY as MODEL_KEY
from ui.player import PLAYER_KEYS as PLAYER_KEYS
from ui.player import player_choice as player_choice
from ui.text import literal

APP_SCRIPT = "app.py"  # the app's entry point, which draws the sidebar around every page
# Presenter mode enlarges the reading text of the main area; headings, buttons and the
# sidebar keep their sizes so nothing is cut off. The main area loses its wide side margins:
# graphs side by side scale with their columns. A graph alone on its row gets a larger style.
CSS_PRESENTER = """
<style>
  section.main p, section.main li, [data-testid="stMain"] p, [data-testid="stMain"] li,
  [data-testid="stAlert"] p { font-size: 1.35rem !important; }
  [data-testid="stMain"] code { font-size: 1.15rem !important; }
  [data-testid="stMain"] textarea { font-size: 1.2rem !important; line-height: 1.45 !important; }
  [data-testid="stMainBlockContainer"] { padding-left: 1rem; padding-right: 1rem; }
</style>
"""


def chosen_protocols() -> list[str]:
    """The protocols chosen in the sidebar, in the usual order; all of them when none is
    (the sidebar says so)."""
    names = st.session_state.get("protocols") or list(protocols.PROTOCOLS)
    return [n for n in protocols.PROTOCOLS if n in names]


def presenter() -> bool:
    return bool(st.session_state.get("presenter", False))


def title(name: str) -> str:
    return protocols.get(name).title


def _around_app() -> bool:
    """Whether app.py runs around this page, and so has drawn the sidebar. Not when a page
    runs on its own (AppTest, ``streamlit run pages/x.py``), nor when Streamlit runs a page
    file by its URL the old way (a ``pages/`` folder beside app.py), which it does until the
    first st.navigation call of the server process."""
    ctx = get_script_run_ctx()
    if ctx is None or Path(ctx.main_script_path).name != APP_SCRIPT:
        return False
    return not PagesManager.uses_pages_directory


def sidebar() -> None:
    """The shared sidebar, for a page that runs without app.py around it (see
    :func:`_around_app`); in the app, app.py has drawn it (:func:`draw_sidebar`) and this
    does nothing."""
    if not _around_app():
        st.set_page_config(page_title="flowdebug", page_icon="🔁", layout="wide")
        draw_sidebar()


def draw_sidebar() -> None:
    """Controls every page shares: which protocols to show, presenter mode, the player.
    Also keeps the open session's id in the address bar, so a reload reopens it.

    app.py draws it once, around every page: its widgets are never unmounted by a page
    change, so they keep their values without any copy."""
    keep_owner_cookie()
    # Every run: a browser that reconnected has a new owner, which must hold its session.
    lifetime.hold(session().state.id)
    player.show_kept(session())
    # Starting values that are not the widgets' first options (a widget given a default and a
    # session value both warns, so they are set here).
    st.session_state.setdefault("protocols", list(protocols.PROTOCOLS))
    st.session_state.setdefault("live_protocol", protocols.default_protocol(local=True))
    st.query_params["session"] = session().state.id
    notice_newer()
    with st.sidebar:
        st.multiselect(
            "Protocols shown",
            list(protocols.PROTOCOLS),
            format_func=lambda p: protocols.facts(p).short,  # short enough for a chip
            key="protocols",
        )
        if not st.session_state.protocols:
            st.caption(f":orange[{vendors.none_chosen_note()}]")
        st.toggle("Presenter mode (large type)", key="presenter", on_change=_presenter_changed)
        player.player_panel()
        player.models_panel()
        # The slot belongs to this browser session (a module global would be every session's).
        st.session_state["fd_status_slot"] = st.empty()
        st.session_state.pop("fd_status_text", None)  # a new slot: nothing written in it yet
        refresh_status()
    if presenter():
        st.markdown(CSS_PRESENTER, unsafe_allow_html=True)


COLLAPSE = "fd_collapse_sidebar"  # app.py collapses the sidebar in the next run


def _presenter_changed() -> None:
    """Presenter mode on: the room sees the page, not the sidebar (app.py collapses it)."""
    st.session_state[COLLAPSE] = bool(st.session_state.get("presenter"))


def refresh_status(step: bool = True) -> None:
    """The sidebar's one-line summary of the session; pages that step call it again at the
    end so it shows the step just run. ``step=False``: without the step's number (the
    Debugger's bar says it), so that a Step sends the line only when the status changes."""
    slot = st.session_state.get("fd_status_slot")
    if slot is None:
        return
    s = session()
    at = f" · step {s.state.step}" if step else ""
    status = status_words(s.state.status)  # in words: "waiting for your approval"
    first = next((m.text for m in s.conversation.messages if m.role == "user"), "")
    what = (  # a session of your own, or imported, by its first user message
        f"Scenario **{literal(s.state.scenario)}**"
        if s.state.scenario
        else f"Session **{literal(session_name(first, 40))}**"
    )
    text = f"{what}{at} · {literal(status)}"
    # A Step reruns only its fragment, which may write the slot only if it wrote it in the
    # last full run too (Streamlit reserves the place then): a full run always writes it.
    ctx = get_script_run_ctx()
    full_run = not (ctx and ctx.fragment_ids_this_run)
    if st.session_state.get("fd_status_text") == text and not full_run:  # already in the slot
        return
    st.session_state["fd_status_text"] = text
    slot.caption(text)


def graph_css(style: Style) -> None:
    """Let the graphs keep the type sizes they were laid out with.

    Streamlit's graphviz container forces one small font size on every element inside it,
    which shrinks our labels but not the room graphviz left for them.
    """
    chart = "[data-testid='stGraphVizChart']"
    # Each text element still carries the size it was laid out with (font-size="14.00"):
    # give it back, whatever the element (arrow labels, lane heads, notes).
    rules = " ".join(
        f'{chart} svg text[font-size="{n}.00"] {{font-size: {n}px !important;}}'
        for n in sorted({style.font, style.lane_font})
    )
    st.markdown(f"<style>{rules}</style>", unsafe_allow_html=True)


def code_span(text: str) -> str:
    """``text`` as one inline code span in Markdown, literal whatever it holds: the fence is
    longer than any run of backticks inside (CommonMark), so a name cannot close it early."""
    text = " ".join(str(text).split())
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text[:1] == "`" or text[-1:] == "`" or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def literal_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` for ``st.table``, which renders its cells as Markdown: every text cell literal."""
    return [{k: literal(v) if isinstance(v, str) else v for k, v in r.items()} for r in rows]


def scenario_names() -> list[str]:
    return scenarios.names()


def show_error() -> list[flash.Flash]:
    """The last action's outcome, shown once at the top of the page (and, when this tab's
    copy of the session is older than the saved one, the button that reads it again). A
    message meant for a place further down the page is given back with the others for the
    page to show there (:func:`flash.show`)."""
    said = flash.take()
    flash.show(said)
    if st.session_state.get("fd_stale") == session().state.id:
        st.button(
            "Reload the newer steps",
            key="fd_reload",
            on_click=reload,
            type="primary",
            help="This tab's copy is older than the saved session: read the saved one",
        )
    return said
