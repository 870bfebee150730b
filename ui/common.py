"""Streamlit glue shared by the pages: the browser session's debugger session and sidebar.

Everything here is per browser session (st.session_state); two people on one server never
share a debugger session. The sidebar is drawn once, by app.py, around whichever page runs.
What the debugger session starts is held for this browser session (ui/lifetime.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import get_script_run_ctx

from flowdebug import hosting, protocols
from flowdebug.engine.execution.handlers import Toolset
from flowdebug.engine.session import scenarios
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.player_choice import (
    KINDS,
    LABELS,
    PlayerChoice,
    default_kind,
    make_player,
)
from flowdebug.engine.session.session_state import PlayerSettings, SessionState
from flowdebug.errors import FlowdebugError
from flowdebug.players.live.settings import LIVE_PROTOCOLS
from flowdebug.redact import register_secret, url_secrets
from flowdebug.render import Style
from flowdebug.store.owners import NotOwner
from flowdebug.store.sessions import StaleSession, Store, open_store
from flowdebug.views import vendors
from flowdebug.views.debugger import status_words
from flowdebug.views.new_session import session_name
from ui import flash, lifetime
from ui.browser import keep_owner_cookie, owner
from ui.text import literal

DEFAULT_SCENARIO = "weather"
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


@st.cache_resource(show_spinner=False)
def _open_store(url: str | None) -> Store:
    return open_store(url)


def store() -> Store:
    """The session store: $FLOWDEBUG_DB, else a SQLite file in the user's data directory."""
    return _open_store(os.environ.get("FLOWDEBUG_DB"))


# -- the open session, saved after every change ------------------------------------------------


def _revisions() -> dict[str, int]:
    """The revision each session this tab holds was read or last saved at: a save says so, and
    the store refuses it when another tab saved in between."""
    return st.session_state.setdefault("fd_revisions", {})


def _store_save(
    state: SessionState, parent: str | None = None, undo: Sequence[SessionState] = ()
) -> None:
    revisions = _revisions()
    try:
        saved = store().save(
            state, parent=parent, expected=revisions.get(state.id, 0), owner=owner(), undo=undo
        )
    except StaleSession as e:  # the newer steps stay saved; this tab says how to see them
        flash.error(str(e))
        st.session_state.fd_stale = state.id
        return
    except Exception as e:  # the session in memory is intact; say so, do not lose it
        flash.error(f"could not save the session: {e}")
        return
    revisions[state.id] = saved.revision


def session() -> Session:
    """This browser session's debugger session: the one named in the URL (?session=ID, so a
    reload or a server restart resumes it), else the one saved last (this browser's own on a
    shared server), else a new weather scenario. On a shared server a
    link to another browser's session opens nothing of it: the page says why."""
    if "fd_session" not in st.session_state:
        wanted = st.query_params.get("session")
        if wanted:
            try:
                open_saved(wanted)
            except NotOwner as e:
                flash.error(str(e))
            except FlowdebugError as e:
                flash.error(f"could not reopen session {wanted}: {e}")
        elif hosting.resume_last() and (
            last := next(
                # opening the app resumes the session saved last, rather than a new one; one
                # that another browser session has open stays its own (a room of attendees on a
                # server without owners each starts their own, not the session saved last)
                (s for s in store().list(owner=owner()) if not lifetime.held_elsewhere(s.id)),
                None,
            )
        ):
            try:
                open_saved(last.id)
            except FlowdebugError as e:
                flash.error(f"could not reopen your last session: {e}")
        if "fd_session" not in st.session_state:
            set_session(Session.from_scenario(DEFAULT_SCENARIO))
    return st.session_state.fd_session


def open_saved(session_id: str) -> Session:
    """Open a saved session (this browser's own, on a shared server) as this tab's session."""
    opened, revision = store().resume_at(session_id, owner=owner())
    set_session(opened, revision=revision)
    return opened


def set_session(value: Session, parent: str | None = None, revision: int | None = None) -> None:
    """Make ``value`` this browser session's session: saved now and after every change.
    ``revision``: it was just read from the store at this revision, so there is nothing to
    save yet (a save would make another tab holding it stale for nothing)."""
    # Saved with its undo history, so Undo (and Undo tool edit) still works after a reload.
    value.on_change = lambda state: _store_save(state, undo=value.undo_stack)
    previous = st.session_state.get("fd_session")
    if previous is not None and previous.state.id != value.state.id:
        lifetime.let_go(previous.state.id)  # its MCP servers end, unless another tab holds it
    lifetime.hold(value.state.id)
    st.session_state.fd_session = value
    st.session_state.pop("fd_stale", None)
    if revision is None:
        _store_save(value.state, parent, value.undo_stack)
    else:
        _revisions()[value.state.id] = revision
    st.query_params["session"] = value.state.id


def notice_newer() -> None:
    """Once a run: when another tab or app server saved this tab's session since this tab read
    it, say so now, with the Reload button, rather than only when a change here is refused."""
    sid = session().state.id
    known = _revisions().get(sid)
    if known is None or st.session_state.get("fd_stale") == sid:
        return
    try:
        stored = store().revision(sid)
    except Exception:  # unreachable now: the next save says so
        return
    if stored is not None and stored != known:
        st.session_state.fd_stale = sid
        flash.error(
            "this session was changed in another tab or on another app server since this tab "
            "read it: reload to see the newer steps (a change made here would be refused, "
            "and nothing saved would be overwritten)"
        )


def _reload() -> None:
    """Drop this tab's copy of the session: the next run reads the newer one from the store."""
    st.session_state.pop("fd_session", None)
    st.session_state.pop("fd_stale", None)


def load_scenario(name: str, tools: Toolset | None = None) -> None:
    """Open scenario ``name`` as a new session, with the player chosen in the sidebar when it
    is not the script; ``tools``: the tools it declares instead of its own (a Reset keeps the
    tools as edited)."""
    fresh = Session.from_scenario(name)
    choice = st.session_state.get("fd_player_choice")
    if choice is not None and choice.kind != "scripted":
        fresh.player = make_player(choice, name)
        fresh.state.player = choice.settings()
    if tools is not None:
        fresh.use_tools(tools)
    set_session(fresh)


def player_choice() -> PlayerChoice:
    """What the sidebar's 'Who plays the model' says (the key stays in this session)."""
    get = st.session_state.get
    return PlayerChoice(
        kind=get("player_kind", "scripted"),
        protocol=get("live_protocol") or protocols.default_protocol(local=True),
        model=get("live_model") or None,
        base_url=get("live_base_url") or None,
        stream=bool(get("live_stream", False)),
        api_key=get("live_key") or None,
    )


def _apply_player() -> None:
    choice = player_choice()
    # Never saved, exported or logged, even by accident: the key and a URL's own credentials.
    for secret in [choice.api_key or "", *url_secrets(choice.base_url or "")]:
        register_secret(secret)
    s = session()
    try:
        s.player = make_player(choice, s.state.scenario, s.state.models)
    except FlowdebugError as e:
        flash.error(str(e))
        return
    st.session_state.fd_player_choice = choice
    s.set_settings(player=choice.settings())  # kept with the session, never the key


PLAYER_KEYS = {  # the sidebar's player widgets and the kept setting each one shows
    "player_kind": "kind",
    "live_protocol": "protocol",
    "live_model": "model",
    "live_base_url": "base_url",
    "live_stream": "stream",
}


MODEL_KEY = "model_for_"  # + a protocol name: the sidebar's model for that vendor


def _keep_models() -> None:
    """The sidebar's model per vendor, kept with the session; a live player without a model
    of its own takes its vendor's."""
    s = session()
    typed = {n: st.session_state.get(MODEL_KEY + n) or "" for n in protocols.model_protocols()}
    s.set_settings(models=typed)
    choice = st.session_state.get("fd_player_choice")
    if choice is not None and choice.kind == "live":
        with suppress(FlowdebugError):
            s.player = make_player(choice, s.state.scenario, s.state.models)


def _models_panel() -> None:
    with st.expander("Model per vendor (this session)", expanded=False):
        for name in protocols.model_protocols():
            facts = protocols.facts(name)
            st.text_input(
                facts.short,
                key=MODEL_KEY + name,
                placeholder=facts.default_model,
                on_change=_keep_models,
            )
        st.caption(
            "Empty: the vendor's default. Used by the encodings, the snippets and a live "
            "player without a model of its own; a source naming another vendor's model gets "
            "this one, and a warning says which replaced which."
        )


def _show_player(s: Session) -> None:
    """Once per session opened: the sidebar's player settings say the player the session kept
    (a reopened live session gets the key typed in this browser session, if any)."""
    if st.session_state.get("fd_player_for") == s.state.id:
        return
    st.session_state.fd_player_for = s.state.id
    kept = s.state.player or PlayerSettings(kind=default_kind(s.state.scenario))
    for key, name in PLAYER_KEYS.items():
        value = getattr(kept, name)
        if key == "live_protocol":
            value = value or protocols.default_protocol(local=True)
        st.session_state[key] = value if value is not None else ""
    for name in protocols.model_protocols():
        st.session_state[MODEL_KEY + name] = s.state.models.get(name, "")
    choice = PlayerChoice.of(kept, st.session_state.get("live_key") or None)
    if kept.kind == default_kind(s.state.scenario):
        # The session's default (a scenario's script, the offline model for one of your
        # own) is nobody's choice: a scenario opened next plays its own script.
        st.session_state.pop("fd_player_choice", None)
    else:
        st.session_state.fd_player_choice = choice
    if kept.kind == "live" and choice.api_key:
        with suppress(FlowdebugError):  # the kept player stays (its key from the environment)
            s.player = make_player(choice, s.state.scenario, s.state.models)


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
    _show_player(session())
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
        with st.expander("Who plays the model", expanded=False):
            kind = st.radio(
                "Player",
                KINDS,
                key="player_kind",
                horizontal=True,
                format_func=LABELS.__getitem__,
            )
            if kind == "live":
                st.selectbox("API", LIVE_PROTOCOLS, key="live_protocol", format_func=title)
                st.text_input("Model (empty: the vendor's default)", key="live_model")
                st.text_input(
                    f"Base URL (a local or {vendors.local_compatible()}-compatible server)",
                    key="live_base_url",
                    placeholder="http://localhost:11434/v1",
                )
                st.text_input(
                    "API key (kept in this browser session only)",
                    key="live_key",
                    type="password",
                    help=protocols.facts(st.session_state.live_protocol).key_help,
                )
                st.checkbox("Stream", key="live_stream")
            st.button("Use this player", key="apply_player", on_click=_apply_player)
            st.caption(f"Now: {literal(getattr(session().player, 'name', '?'))}")
        _models_panel()
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
            on_click=_reload,
            type="primary",
            help="This tab's copy is older than the saved session: read the saved one",
        )
    return said
