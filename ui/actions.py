"""Step / Step turn / Run as the pages offer them, run in the background with progress and a
Cancel button.

A helper of the pages, not a page: app.py lists the pages st.navigation runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import streamlit as st

from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.jobs import Job
from flowdebug.errors import FlowdebugError
from ui import common, flash

# Step / Step turn / Run as the pages offer them. A click only queues its action; the page
# runs it (run_queued) before it draws its buttons, which then show the state it left:
# disabled once the cycle is over, Undo enabled once there is a step.
ACTIONS: dict[str, tuple[Callable[[Session], Any], str]] = {
    "step": (lambda x: x.step(), "Step"),
    "step_turn": (lambda x: x.step_turn(), "Step turn"),
    "run": (lambda x: x.run(), "Run"),
}


def queue_action(name: str) -> None:
    st.session_state.fd_action = name


def queued() -> bool:
    """Whether a clicked Step / Step turn / Run waits for :func:`run_queued`."""
    return "fd_action" in st.session_state


def run_queued() -> None:
    if name := st.session_state.pop("fd_action", None):
        if name == "step" and common.session().next_step_is_local():
            run_here(*ACTIONS[name])
        else:
            run_action(*ACTIONS[name])


def run_here(action: Callable[[Session], Any], label: str) -> Any:
    """A Step that runs no tool and waits for no remote model, run in the page's own thread.
    In the background it would wait for a thread to start and end, and under a room's load
    each hand-over waits its turn for the interpreter. Errors are shown as in the background
    (the session changes only when the step succeeds)."""
    s = common.session()
    try:
        return action(s)
    except FlowdebugError as e:
        flash.error(str(e))
    except Exception as e:  # a bug must not lose the session: show it
        flash.error(f"{type(e).__name__}: {e}")
    return None


def run_action(action: Callable[[Session], Any], label: str) -> Any:
    """Run a debugger action in the background with progress and a Cancel button.

    Errors are shown, not raised; the session changes only when the action succeeds.
    Clicking Cancel (or any other widget) reruns the page, which abandons the job.
    """
    s = common.session()
    job = Job(s, action, label)
    try:
        if not job.wait(0.25):
            box = st.status(f"{label}…", expanded=True)
            box.button(
                "Cancel",
                key=f"cancel_{label}_{s.state.step}",
                help="Abandon this step; the session stays as it was",
            )
            line = box.empty()
            while not job.done:
                line.write(f"running for {job.elapsed:.1f} s")
                time.sleep(0.1)
            box.update(
                label=f"{label} — done in {job.elapsed:.1f} s", state="complete", expanded=False
            )
    except BaseException:
        # A click elsewhere, or the browser leaving, stops this run: the job is abandoned,
        # so its clone must stop stepping too (a Run would go on starting servers).
        job.cancel()
        raise
    try:
        return job.finish()
    except FlowdebugError as e:
        flash.error(str(e))
    except Exception as e:  # a bug must not lose the session: show it
        flash.error(f"{type(e).__name__}: {e}")
    return None
