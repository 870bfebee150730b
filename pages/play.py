"""Play: the session's trace drawn again event by event at a chosen pace, each event with a
caption in plain words; and the story of the current phase, with every vendor's JSON fields
one click away.

A helper of the pages, not a page: app.py lists the pages st.navigation runs.

How Play works: the Play / Pause button and the pace are ordinary widgets (a click reruns the
page, which registers the ticking fragment with the new pace, or without one when paused);
the fragment reruns alone at the pace, reveals the next event (``fd_play_upto``, the last seq
drawn) and shows its caption. Whatever should grow with it (the graph) is drawn by the
fragment too: pass it as ``stage``. Elsewhere on the page, :func:`play_upto` says how much to
draw.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import streamlit as st

from flowdebug import protocols
from flowdebug.engine.session_state import SessionState
from flowdebug.views.debugger import PHASE_TITLES, phase_now, refusals
from flowdebug.views.story import Story, caption, phase_story
from pages import actions, common

PACES = (0.5, 1.0, 2.0)  # seconds per event
PLAYING = "fd_playing"
UPTO = "fd_play_upto"  # the last seq revealed; -1: none yet
PACE = "fd_play_pace"
DUE = "fd_play_due"  # when the next event is due (time.monotonic)
TRACE = "fd_play_trace"  # the trace being played; None: the one a queued Run is making

# The caption is read from across a room: larger than body text, and it keeps its height
# from one event to the next so the graph under it does not jump.
CSS = """
<style>
  [data-testid="stLayoutWrapper"]:has(> .st-key-fd_play_line) { flex: 1 1 100%; }
  .st-key-fd_play_caption [data-testid="stText"] { font-size: 1.15rem; line-height: 1.4; }
  .st-key-fd_play_caption { gap: 0; min-height: 3.2rem; }
  .st-key-fd_play_count [data-testid="stText"] { opacity: 0.7; font-size: 0.85rem; }
  .st-key-fd_story_refused { border-color: rgba(255, 75, 75, 0.8) !important; }
</style>
"""
# Presenter mode: the sentence is what the room reads.
CSS_PRESENTER = """
<style>
  .st-key-fd_play_caption [data-testid="stText"] { font-size: 1.45rem; }
  .st-key-fd_story [data-testid="stText"] { font-size: 1.35rem; }
</style>
"""


def _trace(state: SessionState) -> tuple[str, int, str]:
    """What identifies the trace a playback reveals: a step, an undo or an edit changes it."""
    last = state.events[-1] if state.events else None
    return state.id, len(state.events), f"{last.seq}:{last.kind}:{last.label}" if last else ""


def _stop(keep: bool = True) -> None:
    """Stop playing; ``keep``: the caption of the event reached stays on screen."""
    st.session_state[PLAYING] = False
    if not keep:
        st.session_state[UPTO] = None
        st.session_state[TRACE] = None


def _toggle() -> None:
    """Play / Pause. Play from the end, or from nothing revealed, starts over; Play with no
    trace yet runs the cycle first (the page runs the queued Run) and then plays it."""
    ss = st.session_state
    if ss.get(PLAYING):
        ss[PLAYING] = False  # paused: the graph keeps what is revealed
        return
    state = common.session().state
    ss[PLAYING], ss[DUE] = True, 0.0
    if not state.events:
        actions.queue_action("run")
        ss[TRACE], ss[UPTO] = None, -1
        return
    upto = ss.get(UPTO)
    if ss.get(TRACE) != _trace(state) or upto is None or upto >= state.events[-1].seq:
        ss[UPTO] = -1
    ss[TRACE] = _trace(state)


def _sync(state: SessionState) -> None:
    """A playback belongs to one trace: a step, an undo or an edit since ends it."""
    ss = st.session_state
    if ss.get(UPTO) is None:
        return
    if ss.get(TRACE) is None and ss.get(PLAYING):
        ss[TRACE] = _trace(state)  # the trace the queued Run just made
    elif ss.get(TRACE) != _trace(state):
        _stop(keep=False)


def play_upto() -> int | None:
    """The last seq to draw while a playback is under way (playing, or paused mid-way); None
    when there is none: draw everything."""
    upto = st.session_state.get(UPTO)
    if upto is None:
        return None
    events = common.session().state.events
    if not events or upto >= events[-1].seq:
        return None
    return max(upto, -1)


def _pace() -> float:
    pace = st.session_state.get(PACE)
    return float(pace) if pace in PACES else 1.0


def play_controls(
    state: SessionState,
    names: Sequence[str],
    stage: Callable[[int | None], None] | None = None,
) -> None:
    """Play / Pause and the pace (in the current container: the Debugger's control bar), and
    the caption of the event just revealed on a line of its own. ``stage(upto)`` is drawn
    with them at every tick (the graph, so it grows without the page rerunning); ``names``:
    the vendors shown, whose refusals the captions name."""
    actions.run_queued()  # Play with no trace queued a Run: the page may not have run it yet
    state = common.session().state
    _sync(state)
    st.html(CSS + (CSS_PRESENTER if common.presenter() else ""))
    playing = bool(st.session_state.get(PLAYING))
    # Play and the pace sit with the other controls; the caption takes a line of its own.
    st.button(
        "Pause" if playing else "Play",
        key="play",
        icon=":material/pause:" if playing else ":material/play_circle:",
        shortcut="P",
        help="Stop here; Play goes on from this event (P)"
        if playing
        else "Draw the cycle event by event, with a sentence for each (P)",
        on_click=_toggle,
    )
    st.segmented_control(
        "Pace",
        PACES,
        key=PACE,
        default=1.0,
        required=True,
        format_func=lambda p: f"{p:g} s",
        label_visibility="collapsed",
        help="Seconds per event",
    )
    tick = st.fragment(_tick, run_every=_pace() if playing else None)
    with st.container(key="fd_play_line"):
        tick(list(names), stage)


def _tick(names: list[str], stage: Callable[[int | None], None] | None) -> None:
    """One beat of a playback: reveal the next event when it is due, show its caption."""
    ss = st.session_state
    state = common.session().state
    events = state.events
    upto = ss.get(UPTO)
    if ss.get(PLAYING) and upto is not None and time.monotonic() >= ss.get(DUE, 0.0):
        later = [e.seq for e in events if e.seq > upto]
        if later:
            upto = ss[UPTO] = later[0]
            # A little early rather than a beat late: the fragment's own timer is the pace.
            ss[DUE] = time.monotonic() + _pace() * 0.5
        if not events or upto >= events[-1].seq:
            _stop()
            st.rerun()  # the button turns back into Play, and the timer stops
    with st.container(key="fd_play_caption"):
        if upto is None or upto < 0 or not events:
            st.text(
                "Press Play to watch the cycle event by event, each told in a sentence."
                if events
                else "Press Play: the cycle runs, then plays back event by event."
            )
        else:
            e = events[min(upto, len(events) - 1)]
            refused = refusals(state.conversation, events, names)
            with st.container(key="fd_play_count"):
                st.text(f"event {upto + 1} of {len(events)} · {e.phase}")
            st.text(caption(e, events, state, refused))
    if stage is not None:
        stage(play_upto())


def story_panel(state: SessionState, names: Sequence[str]) -> None:
    """The current phase as it happened in this session, sentence by sentence, the vendors
    that refuse its request, and (one click away) each vendor's JSON fields for it."""
    phase = phase_now(state)
    refused = refusals(state.conversation, state.events, names)
    story = phase_story(state, phase, names, refused)
    with st.container(key="fd_story", border=True):
        st.markdown(f"**{PHASE_TITLES[phase]}**")
        st.caption(story.meaning)  # what the phase is for; then how it went this time
        if story.sentences:
            for sentence in story.sentences:
                st.text(sentence)
        else:
            st.text("Not run yet in this session: Step or Play to see it happen.")
        if story.rejections:
            with st.container(key="fd_story_refused", border=True):
                for sentence in story.rejections:
                    st.text(f"⛔ {sentence}")
        with st.expander("JSON fields per vendor", key="fd_story_fields"):
            st.code(_fields_block(story, names), language=None, wrap_lines=True)


def _fields_block(story: Story, names: Sequence[str]) -> str:
    """Each vendor's fields for the phase, and this session's events in its terms, aligned in
    one block a room can scan down (the facts write fields in Markdown: unquoted here)."""
    shorts = {n: protocols.facts(n).short for n in names}
    width = max(map(len, shorts.values()), default=0) + 2
    lines = []
    for name in names:
        lines.append(f"{shorts[name]:<{width}}{story.fields[name].replace('`', '')}")
        for note in story.notes.get(name, ()):
            lines.append(f"{'':<{width}}↳ {note.removeprefix(shorts[name] + ': ')}")
    return "\n".join(lines)
