"""What a browser session starts ends with it; what the server process shares is made once.

A helper of the pages, not a page. Each browser session has one owner in the resource
registry (:mod:`flowdebug.engine.execution.resources`), which holds the debugger sessions it has
used;
their MCP servers and connections are held under their ids. The owner is let go of:

- when Streamlit lets the session go: the owner is a session-scoped ``st.cache_resource``,
  whose ``on_release`` Streamlit calls when the browser disconnects and when it drops the
  session (a browser that comes back within the reconnect window gets a new owner, and the
  debugger session starts its servers again on its next step);
- as a backstop, by the process's one :class:`~flowdebug.engine.execution.resources.Reaper`, which
  closes every top-level owner that is no live browser session's (something started after
  its owner was released, by a step abandoned in the background).

The Compare page's emulator is one per process, started on first use and stopped at exit.
What the process built to start (Streamlit, pydantic, the modules the pages use) is frozen out
of Python's collector once (:func:`freeze_startup`).
"""

from __future__ import annotations

import atexit
import gc
import uuid

import streamlit as st
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from flowdebug.emulator.server import Emulator
from flowdebug.engine.execution.resources import RESOURCES, Reaper

PREFIX = "browser:"  # an owner that stands for a browser session: browser:<session id>:<n>


class Holder:
    """One browser session's owner in the registry (a new one each time Streamlit makes it)."""

    def __init__(self, session_id: str):
        self.session_id = session_id
        self.owner = f"{PREFIX}{session_id}:{uuid.uuid4().hex[:8]}"

    def close(self) -> None:
        # Streamlit calls this on its event loop: closing in the background keeps a stdio
        # server's exit (up to seconds) from stalling every other attendee's page.
        RESOURCES.close_later(self.owner)


@st.cache_resource(scope="session", on_release=Holder.close, show_spinner=False)
def _holder() -> Holder:
    ctx = get_script_run_ctx()
    return Holder(ctx.session_id if ctx is not None else "bare")


def hold(session_id: str) -> None:
    """This browser session holds the debugger session ``session_id`` (idempotent: called on
    every run, so a browser that reconnected holds its session again)."""
    RESOURCES.link(_holder().owner, session_id)


def held_elsewhere(session_id: str) -> bool:
    """Whether another live browser session (another tab, another attendee) holds the
    debugger session ``session_id`` now."""
    return bool(RESOURCES.holders(session_id) - {_holder().owner})


def let_go(session_id: str) -> None:
    """This browser session moved on from ``session_id``: its servers close unless another
    browser session holds it too."""
    RESOURCES.let_go(_holder().owner, session_id)


def _live(owner: str) -> bool:
    """Whether ``owner`` is a browser session Streamlit still serves."""
    if not owner.startswith(PREFIX):
        return False  # a debugger session nobody holds any more
    session_id = owner[len(PREFIX) :].rsplit(":", 1)[0]
    return Runtime.instance().is_active_session(session_id)


@st.cache_resource(show_spinner=False, on_release=Reaper.stop)
def _reaper() -> Reaper:
    reaper = Reaper(_live).start()
    atexit.register(reaper.stop)
    return reaper


def start_reaper() -> None:
    """Start the process's reaper (once; app.py calls this on every run)."""
    _reaper()


@st.cache_resource(show_spinner=False, on_release=Emulator.stop)
def _emulator() -> Emulator:
    emulator = Emulator().start()
    atexit.register(emulator.stop)
    return emulator


def shared_emulator() -> Emulator:
    """The process's offline emulator (the Compare page's), started on first use. Each
    caller mounts the player it needs on it (:meth:`Emulator.mount`)."""
    return _emulator()


@st.cache_resource(show_spinner=False)
def _frozen() -> int:
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def freeze_startup() -> None:
    """Move every object alive into the collector's permanent generation (:func:`gc.freeze`),
    once per process: app.py calls this after each run's page, so the first complete run
    freezes what starting the server and drawing a page imported (Streamlit, pydantic, the
    flowdebug modules the pages use: hundreds of thousands of objects held for the life of the
    process). Python's own full collections then walk only what the sessions made. Measured
    with bench/workshop_load.py at N = 30 (collection after each run off, as
    .streamlit/config.toml sets): Step p95 800 ms without it, 269-545 ms with it. Nothing is
    imported for it: importing every module first made a loaded machine's first page wait."""
    _frozen()
