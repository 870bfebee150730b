"""The browser session's open debugger session: which one it is (the address bar, the last
one saved, a new weather scenario), and its save after every change, refused when another
tab or app server saved it in between.

A helper of the pages, not a page; the pages reach it through :mod:`ui.common`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

import streamlit as st

from flowdebug import hosting
from flowdebug.engine.execution.handlers import Toolset
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.player_choice import make_player
from flowdebug.engine.session.session_state import SessionState
from flowdebug.errors import FlowdebugError
from flowdebug.store.owners import NotOwner
from flowdebug.store.sessions import StaleSession, Store, open_store
from ui import flash, lifetime
from ui.browser import owner

DEFAULT_SCENARIO = "weather"


_STORES: dict[str | None, Store] = {}
_OPENING = threading.Lock()


def store() -> Store:
    """The session store: $FLOWDEBUG_DB, else a SQLite file in the user's data directory. One
    per database for the process. A dictionary, not ``st.cache_resource``: Streamlit's cache
    hashed its argument and looked up the function's signature at every call (a save and the
    session's lookups call this several times a run)."""
    url = os.environ.get("FLOWDEBUG_DB")
    opened = _STORES.get(url)
    if opened is None:
        with _OPENING:
            opened = _STORES.get(url)
            if opened is None:
                opened = _STORES[url] = open_store(url)
    return opened


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


def reload() -> None:
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
