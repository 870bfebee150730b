"""Play: the session's trace drawn again event by event at a chosen pace, each event with a
caption in plain words; and the story of the current phase, with every vendor's JSON fields
one click away.

A helper of the pages, not a page: app.py lists the pages st.navigation runs.

How Play works: the Play / Pause button and the pace are ordinary widgets (a click reruns the
page, which registers the ticking fragment with the new pace, or none when paused); while
playing, the fragment reruns alone at the pace, reveals the next event (``fd_play_upto``, the
last seq drawn) and shows its caption. Whatever should grow with it (the graph) is drawn by
the fragment too: pass it as ``stage``. Elsewhere on the page, :func:`play_upto` says how much to
draw.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from flowdebug import protocols
from flowdebug.engine.session.session_state import SessionState
from flowdebug.views.debugger import phase_now, phase_title, refusals
from flowdebug.views.story import Story, caption, phase_refused, phase_story
from ui import actions, common, projector

PACES = (0.5, 1.0, 2.0)  # seconds per event
PLAYING = "fd_playing"
TOGGLED = "fd_play_toggled"  # Play or Pause was pressed in this run
UPTO = "fd_play_upto"  # the last seq revealed; -1: none yet
PACE = "fd_play_pace"
DUE = "fd_play_due"  # when the next event is due (time.monotonic)
TRACE = "fd_play_trace"  # the trace being played; None: the one a queued Run is making
RUN = "fd_play_run"  # one per press of Play: the view follows each run until a person takes over

# The caption is read from across a room: larger than body text.
CSS = """
<style>
  [data-testid="stLayoutWrapper"]:has(> .st-key-fd_play_line) { flex: 1 1 100%; }
  .st-key-fd_play_caption [data-testid="stText"] { font-size: 1.15rem; line-height: 1.4; }
  .st-key-fd_play_caption { gap: 0; }
  .st-key-fd_play_count [data-testid="stText"] { opacity: 0.7; font-size: 0.85rem; }
  .st-key-fd_story_refused { border-color: rgba(255, 75, 75, 0.8) !important; }
</style>
"""
# While a playback is under way the caption keeps the height of its two lines (the count and
# the sentence), so the graph under it does not jump from one event to the next.
CSS_PLAYING = """
<style>
  .st-key-fd_play_caption { min-height: 3.2rem; }
</style>
"""
# Presenter mode: the sentence is what the room reads; where the cycle stands is the
# presenter's, in smaller type, so the whole bar fits on one line at 1280 px. The
# story's popover is drawn outside the page's main block, which the app's large type misses.
CSS_PRESENTER = """
<style>
  .st-key-fd_play_caption [data-testid="stText"] { font-size: 1.45rem; }
  .st-key-fd_play_caption .st-key-fd_play_count [data-testid="stText"] { font-size: 18px; }
  .st-key-fd_controls { column-gap: 0.75rem; }
  .st-key-fd_controls .st-key-fd_story_open button p { font-size: 18px !important; }
  .st-key-fd_controls button kbd, .st-key-fd_controls button kbd * { font-size: 18px !important; }
  .st-key-fd_story [data-testid="stText"] { font-size: 1.35rem; }
  .st-key-fd_story [data-testid="stMarkdownContainer"] p { font-size: 1.35rem !important; }
  .st-key-fd_story [data-testid="stCaptionContainer"] p { font-size: 1.1rem !important; }
  .st-key-fd_story code { font-size: 1.1rem !important; }
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
    ss[TOGGLED] = True
    if ss.get(PLAYING):
        ss[PLAYING] = False  # paused: the graph keeps what is revealed
        return
    state = common.session().state
    ss[PLAYING], ss[DUE] = True, 0.0
    ss[RUN] = int(ss.get(RUN, 0)) + 1
    if not state.events:
        actions.queue_action("run")
        ss[TRACE], ss[UPTO] = None, -1
        return
    upto = ss.get(UPTO)
    if ss.get(TRACE) != _trace(state) or upto is None or upto >= state.events[-1].seq:
        ss[UPTO] = -1
    ss[TRACE] = _trace(state)


def _move(by: int) -> None:
    """Paused: reveal one event more (``by`` 1) or one fewer (-1), and tell it."""
    ss = st.session_state
    seqs = [e.seq for e in common.session().state.events]
    upto = ss.get(UPTO)
    if upto is None or not seqs:
        return
    at = max((i for i, q in enumerate(seqs) if q <= upto), default=0)
    ss[UPTO] = seqs[min(max(at + by, 0), len(seqs) - 1)]


def _sync(state: SessionState) -> None:
    """A playback belongs to one trace: a step, an undo or an edit since ends it."""
    ss = st.session_state
    if ss.get(UPTO) is None:
        return
    if ss.get(TRACE) is None and ss.get(PLAYING):
        ss[TRACE] = _trace(state)  # the trace the queued Run just made
        # Once more without the Run's progress box, which would sit over the graph all along.
        st.rerun()
    elif ss.get(TRACE) != _trace(state):
        _stop(keep=False)


def kept() -> bool:
    """A playback is on screen: playing, paused, or ended with the caption of its last event
    kept (until a step, an undo or an edit ends it)."""
    return st.session_state.get(UPTO) is not None


def play_upto() -> int | None:
    """The last seq to draw while a playback is under way (playing, or paused mid-way); None
    when there is none: draw everything."""
    ss = st.session_state
    upto = ss.get(UPTO)
    if upto is None:
        return None
    state = common.session().state
    events = state.events
    if not events or upto >= events[-1].seq:
        return None
    if ss.get(TRACE) is not None and ss.get(TRACE) != _trace(state):
        return None  # a step, an undo or an edit since: this playback is over
    return max(upto, -1)


def _fragment_run() -> bool:
    """Whether this run is a fragment's alone (a click inside one), not the whole page's."""
    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.fragment_ids_this_run)


def _pace() -> float:
    pace = st.session_state.get(PACE)
    return float(pace) if pace in PACES else 1.0


def page_css() -> None:
    """The styles of Play's controls and of the story, drawn by the page outside the fragment
    that a Step reruns (they do not change with a Step, so a Step does not send them again)."""
    st.html(CSS + (CSS_PRESENTER if common.presenter() else ""))


def pace_control() -> None:
    """Play's pace (seconds per event) behind a small button. The page draws it outside the
    fragment a Step reruns: a Step does not change it, so a Step does not send it again."""
    with st.popover(
        f"Pace: {_pace():g} s",
        icon=":material/speed:",
        key="fd_play_pace_open",
        help="Seconds per event while Play tells the cycle",
    ):
        st.segmented_control(
            "Seconds per event",
            PACES,
            key=PACE,
            default=1.0,
            required=True,
            format_func=lambda p: f"{p:g} s",
        )


def play_controls(
    state: SessionState,
    names: Sequence[str],
    stage: Callable[[int | None], None] | None = None,
) -> None:
    """Play / Pause (in the current container: the Debugger's control bar), and the caption
    of the event just revealed on a line of its own (none when there is nothing to tell).
    ``stage(upto)`` is drawn with them at every tick (the graph, so it grows without the page
    rerunning); ``names``: the vendors shown, whose refusals the captions name."""
    if st.session_state.pop(TOGGLED, False) and _fragment_run():
        # Play and Pause start or stop the beat of the fragment below; pressed in the page's
        # own fragment (the Debugger's), the beat's timer could fire into that run under load
        # and undo the press. The whole page runs again instead, as it did for every click.
        st.rerun(scope="app")
    actions.run_queued()  # Play with no trace queued a Run: the page may not have run it yet
    state = common.session().state
    _sync(state)
    playing = bool(st.session_state.get(PLAYING))
    under_way = play_upto() is not None or playing
    if under_way:
        st.html(CSS_PLAYING)
    # Play sits with the other controls; the caption takes a line of its own.
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
    if not playing and play_upto() is not None:
        # Paused mid-way: one event back or on (the clicker's ← and → move these, not Undo
        # and Step, while they are here).
        for key, label, by in (("play_back", "←", -1), ("play_next", "→", 1)):
            st.button(label, key=key, on_click=_move, args=(by,),
                      help="One event back (←)" if by < 0 else "One event on (→)")  # fmt: skip
    if not playing and not kept() and state.events:
        # Nothing to tell (no playback, no caption kept from the last one): no caption line,
        # so a Step sends two elements fewer, and the graph drawn as it is.
        if stage is not None:
            stage(None)
        return
    # A fragment of its own, with a timer (the pace) that reruns it alone while it plays.
    # Still a fragment once paused or ended: Streamlit puts what a fragment draws in a
    # container made outside it (``stage``: the graph under the bar) inside a wrapper of its
    # own, and a wrapper that came and went at Pause or at the end moved the graph elsewhere
    # in the page; the browser dropped it for a moment and scrolled a reader back to the top.
    # No fragment when no playback is on screen (above): declaring one costs every Step.
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
            # A small line at most, in the bar that stays over the graph (Play's tooltip says
            # the rest); none once the cycle is drawn.
            if not events or upto is not None:
                with st.container(key="fd_play_count"):
                    st.text(
                        "Play: the cycle runs, then plays back event by event, each told in a "
                        "sentence."
                    )
        else:
            e = events[min(upto, len(events) - 1)]
            refused = refusals(state.conversation, events, names)
            with st.container(key="fd_play_count"):
                st.text(f"event {upto + 1} of {len(events)} · {e.phase}")
            st.text(caption(e, events, state, refused))
    if stage is not None:
        stage(play_upto())
        if ss.get(PLAYING) and upto is not None and upto >= 0:
            projector.follow_event(int(ss.get(RUN, 0)), upto, state.step)


def story_panel(state: SessionState, names: Sequence[str], label: str | None = None) -> None:
    """The current phase as it happened in this session, sentence by sentence, the vendors
    that refuse its request, and (one click away) each vendor's JSON fields for it.

    A popover opened from the current container (the Debugger's control bar, whose ``label``
    is where the cycle stands): above the graph the story would push the arrows below the
    fold of a projector, and in the bar it stays one click away however far the graph is
    scrolled."""
    phase = phase_now(state)
    refused = refusals(state.conversation, state.events, names)  # only ``names``' refusals
    pop = st.popover(
        label or f"**{phase_title(state)}**",
        icon=":material/block:"
        if phase_refused(state.events, phase, refused)
        else ":material/menu_book:",
        key="fd_story_open",
        help="What this phase is for, what happened in it this time, and each vendor's JSON "
        "fields for it",
        # Told only while open: a Step would otherwise tell it (and draw a dozen elements)
        # for a panel most Steps never open.
        on_change="rerun",
    )
    if not pop.open:
        return
    story = phase_story(state, phase, names, refused)
    with pop, st.container(key="fd_story"):
        st.markdown(f"**{phase_title(state)}**")
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
