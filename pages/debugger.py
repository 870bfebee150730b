"""Debugger: step the cycle one phase or one turn at a time and watch every protocol's graph."""

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from flowdebug.engine.session import scenarios
from flowdebug.engine.session.debugger import Session
from flowdebug.errors import FlowdebugError
from flowdebug.render import Style, to_png, to_svg
from flowdebug.views.aligned import WINDOW as ALIGNED_WINDOW
from flowdebug.views.debugger import (
    PHASE_TITLES,
    graphs,
    lint_ahead,
    phase_title,
    refusals,
    status_line,
)
from flowdebug.views.debugger import WINDOW as GRAPH_WINDOW
from flowdebug.views.history import part_summary
from ui import actions, common, flash, play, projector
from ui import graphs as drawing
from ui import picture as teaching
from ui.approvals import decisions
from ui.breakpoints import breakpoints
from ui.manual_turn import manual_turn

common.sidebar()
s = common.session()
names = scenarios.names()


def _on_scenario() -> None:
    if st.session_state.scenario:
        common.load_scenario(st.session_state.scenario)


def _undo() -> None:
    try:
        common.session().undo()
    except FlowdebugError as e:
        flash.error(str(e))


def _reset() -> None:
    """Start again with the tools as edited (the Tools page restores the scenario's)."""
    session = common.session()
    if session.state.scenario:
        common.load_scenario(session.state.scenario, tools=session.state.toolset)
    else:  # an imported session goes back to how it was imported
        session.restart()


head = st.columns([2, 3], vertical_alignment="bottom")
head[0].title("Debugger")
s = common.session()
CUSTOM = ""  # an imported or hand-made session has no scenario to reload
NO_SCENARIO = "(no scenario: yours or imported)"
current = s.state.scenario if s.state.scenario in names else CUSTOM
options = names if current else [CUSTOM, *names]
if st.session_state.get("scenario") != current:  # another session was opened elsewhere
    st.session_state.scenario = current
head[1].selectbox(
    "Scenario",
    options,
    key="scenario",
    on_change=_on_scenario,
    format_func=lambda n: f"{n} — {scenarios.title(n)}" if n else NO_SCENARIO,
)


# Short labels and icons: all five fit at a projector's 1280 px; the tooltips say the rest.
STEPS = [
    ("step", "Step", ":material/skip_next:", "N", "Run one phase (N, PageDown or →)"),
    ("step_turn", "Turn", ":material/fast_forward:", "T", "One model turn and its execution (T)"),
    ("run", "Run", ":material/play_arrow:", "G", "Run to the end, a breakpoint or an approval (G)"),
]


def _controls() -> tuple[DeltaGenerator, Session]:
    """The control bar (Step, Turn, Run, Undo, Reset and where the cycle stands) and the
    status line; the clicked action runs first, so they show the state it left."""
    # Keyed: projector.controls_css keeps it at the top of the screen while the graphs
    # scroll under it.
    bar = st.container(key="fd_controls", horizontal=True, vertical_alignment="center", gap="small")
    if not actions.queued():
        # A Step reruns only this, so the sidebar's check would not run. A queued Step skips
        # it: its own save refuses a stale write and says so (the check is a read per run).
        common.notice_newer()
    actions.run_queued()  # a clicked Step / Step turn / Run, before the buttons are drawn
    s = common.session()
    over = s.done  # a finished or halted cycle: stepping on makes no sense until undo/reset
    for key, label, icon, shortcut, hint in STEPS:
        bar.button(
            label,
            key=key,
            icon=icon,
            type="primary" if key == "step" else "secondary",
            shortcut=shortcut,
            help=hint,
            disabled=over,
            on_click=actions.queue_action,
            args=(key,),
        )
    # The undo history is saved with the session: a reload or a reopened session keeps it
    # (a session saved before flowdebug kept it has none).
    no_undo = "Nothing to undo: no step or edit since this session started"
    bar.button(
        "Undo",
        key="undo",
        icon=":material/undo:",
        shortcut="U",
        on_click=_undo,
        help="Go back one step (U, PageUp or ←)" if s.undo_stack else no_undo,
        disabled=not s.undo_stack,
    )
    bar.button(
        "Reset",
        key="reset",
        icon=":material/restart_alt:",
        on_click=_reset,
        help="Start the scenario again, with the tools as edited (the Tools page restores "
        "the scenario's own)"
        if s.state.scenario
        else ("Go back to the session as it was imported" if s.undo_stack else no_undo),
        disabled=not (s.state.scenario or s.undo_stack),
    )
    common.show_error()
    # Where we are.
    state = s.state
    chosen = common.chosen_protocols()
    # The line agrees with the picture: a vendor refusing a request halted its cycle there.
    status_icon, status_text = status_line(
        state, refusals(state.conversation, state.events, chosen), chosen
    )
    if s.approvals_decided():  # every waiting call decided
        status_icon = "▶️"
    upcoming = "" if s.done or not state.events else f" · next: {PHASE_TITLES[state.next_phase]}"
    # Where the cycle stands opens the story of its phase: in the bar it stays one click away
    # without pushing the graph below a projector's fold.
    with bar:
        play.story_panel(
            state,
            chosen,
            label=f"**{phase_title(state)}** · step {state.step} · round {state.round}{upcoming}",
        )
    # One compact line, and none while Play tells the cycle again: the status is the end's.
    # Its place is kept empty meanwhile: a line that came and went moved every element under
    # it to another place in the page, which the browser drew as the graph leaving and coming
    # back, and the page, a moment that short, scrolled a reader back to the top.
    if play.play_upto() is None:
        hint = " — Undo, edit the history, or Reset to go again." if s.done else ""
        with st.container(key="fd_status"):
            st.info(f"{status_icon} {common.literal(status_text)}{hint}")
    else:
        st.empty()

    return bar, s


LAYOUT_KEYS = ("graph_layout", "per_row", "show_all", "show_stream")


def _layout_now() -> str:
    """The layout chosen, else the teaching picture in presenter mode and the aligned view
    otherwise."""
    chosen = st.session_state.get("graph_layout")
    return chosen or ("teaching" if common.presenter() else "aligned")


def _separate() -> bool:
    """The graphs are drawn one per vendor (the layout's choice), not as the aligned view."""
    return _layout_now() == "separate"


def _layout(per_row: int) -> None:
    """How the graphs are drawn: aligned or separate, how many a row, the whole trace, the
    streamed arguments."""
    if "graph_layout" not in st.session_state:
        st.session_state.graph_layout = _layout_now()
    st.radio(
        "Layout",
        ["teaching", "aligned", "separate"],
        key="graph_layout",
        horizontal=True,
        format_func={
            "teaching": "Teaching picture (one cycle, each vendor's words)",
            "aligned": "Aligned lanes per vendor",
            "separate": "Separate graphs",
        }.get,
        help="Teaching: the cycle drawn once, each vendor's fields beside each event. "
        "Aligned: every vendor's own lanes on shared rows (exports). Separate: one graph per "
        "vendor, each laid out on its own",
    )
    separate = _separate()
    if separate:
        st.slider(
            "Graphs per row",
            1,
            5,
            key="per_row",
            value=per_row,
            help="One a row gives the largest type; two keep vendors side by side",
        )
    st.checkbox("Show the whole trace (slow for long sessions)", key="show_all")
    st.checkbox(
        "Show streamed arguments",
        key="show_stream",
        help="Each vendor's stream of the model's turn: the call's arguments assemble from "
        "their deltas under the arrow that carries them",
    )


def _per_row(chosen: list[str]) -> int:
    """Separate graphs a row: the person's choice, else two (one when one vendor is shown)."""
    return st.session_state.get("per_row", min(2, len(chosen) or 1))


def _settings() -> None:
    """The graphs' layout, the breakpoints, Play's pace and the message history's switch, on
    one row above the control bar. The page draws them outside the fragment a Step reruns:
    a Step changes none of them, so a Step does not send them again; a change to one reruns
    the page. (Below the graphs they were a long scroll away.)"""
    s = common.session()
    if "show_stream" not in st.session_state:  # a streamed player shows its deltas from the start
        st.session_state.show_stream = bool(st.session_state.get("live_stream", False))
    layout, breaks, pace, history = st.columns([4, 4, 2, 3], vertical_alignment="top")
    # Their widgets are drawn only while the panel is open; closed, their values stay.
    with layout:
        box = st.expander("Graph layout", key="layout_open", on_change="rerun")
    if box.open:
        with box:
            _layout(_per_row(common.chosen_protocols()))
    else:
        for key in LAYOUT_KEYS:  # a value set again is one Streamlit keeps for a widget not drawn
            if key in st.session_state:
                st.session_state[key] = st.session_state[key]
    # Keyed, so it stays open across the reruns a Run makes. Its widgets are drawn only while
    # it is open: they start from the session's breakpoints, which stay as they are while it
    # is closed.
    with breaks:
        box = st.expander("Breakpoints (Run stops here)", key="bp_open", on_change="rerun")
    if box.open:
        with box:
            breakpoints(s)
    with pace:
        play.pace_control()
    with history:
        st.toggle(
            "Message history",
            key="show_history",
            help="The messages so far, under the graphs (the last 200)",
        )


def _window() -> int | None:
    """The events drawn: all of them when asked, else the layout's own default window (the
    aligned view's and the picture's is smaller: six vendors' worth)."""
    if st.session_state.get("show_all", False):
        return None
    return GRAPH_WINDOW if _separate() else ALIGNED_WINDOW


def _graphs(bar: DeltaGenerator, s: Session) -> None:
    """The graphs (Play's controls in the bar)."""
    state = s.state
    chosen = common.chosen_protocols()
    per_row = _per_row(chosen)
    # The presenter style is laid out for one graph the width of the screen; two or more a row
    # get the pair style: larger type in compact lanes. The aligned view uses the pair style at
    # its natural size, so two vendors stand side by side with type of 20 px.
    separate = _separate()
    style = (
        (Style.presenter() if separate and per_row == 1 else Style.presenter_pair())
        if common.presenter()
        else Style()
    )
    window = _window()
    if not state.events:
        st.caption("Press **Step** to send the first request; arrows appear as the cycle runs.")
    if _layout_now() == "teaching":
        slot = st.container(key="fd_view")

        def _picture(upto: int | None) -> None:
            """The teaching picture, drawn by Play's fragment so it grows at each tick alone."""
            with slot:
                teaching.draw_picture(common.session().state, chosen, window, upto=upto)

        with bar:
            play.play_controls(state, chosen, stage=_picture)
    elif not separate:
        slot = st.container(key="fd_view")

        def _stage(upto: int | None) -> None:
            """The aligned view, drawn by Play's fragment so it grows at each tick alone."""
            with slot:
                drawing.draw_aligned(
                    common.session().state, chosen, style, window, upto=upto, played=play.kept()
                )

        with bar:
            play.play_controls(state, chosen, stage=_stage)
    else:
        with bar:
            play.play_controls(state, chosen)
        common.graph_css(style)
        drawn = graphs(state, chosen, style=style, window=window)
        for row in range(0, len(drawn), per_row):
            cols = st.columns(per_row)
            for col, g in zip(cols, drawn[row : row + per_row], strict=False):
                with col:
                    st.graphviz_chart(g.dot, width="stretch")
                    if g.caption:  # the vendor's whole message: the arrow carries its first words
                        st.error(common.literal(g.caption), icon="⛔")
                    exports: list[drawing.Export] = [
                        ("SVG", lambda d=g.dot: to_svg(d), "svg", "image/svg+xml"),
                        ("PNG", lambda d=g.dot: to_png(d), "png", "image/png"),
                        ("Mermaid", g.mermaid, "mmd", "text/plain"),
                    ]
                    buttons = st.container(horizontal=True, gap="small")  # wraps in a narrow column
                    drawing.export_buttons(buttons, g.protocol, exports)
                    if g.hidden:
                        st.caption(
                            f"{g.hidden} earlier events hidden — tick *Show the whole trace*."
                        )


def _history(s: Session) -> None:
    """The messages so far (the last 200), numbered as in the history. Drawn only when asked
    for (the switch above the control bar): long histories would slow every step down."""
    messages = s.conversation.messages
    if st.session_state.get("show_history"):
        first = max(0, len(messages) - 200)
        st.subheader(f"Message history: {len(messages)} messages", divider="gray")
        if first:
            st.caption(f"The last 200; the first {first} are on the History page.")
        for i, m in enumerate(messages[first:], start=first):
            # Whatever a person, a model or a tool wrote is shown as text, never as Markdown/HTML.
            st.markdown(f"**{i} · {m.role}**")
            st.text("\n".join(part_summary(p, width=160) for p in m.parts) or "(no parts)")


def _cycle() -> None:
    """Everything a Step changes, as one fragment: Step, Undo, Play, an approval or a graph
    setting reruns this alone, not the app around it (the sidebar, the scenario list). A
    widget outside it (the scenario, the sidebar) reruns the whole app, this with it."""
    bar, s = _controls()
    decisions(s)
    manual_turn(s)
    _graphs(bar, s)
    _history(s)
    # The sidebar follows the step (a line of text a Step); in presenter mode, whose sidebar
    # is collapsed and whose bar shows the step, only when the status changes.
    common.refresh_status(step=not common.presenter())
    lint_ahead(s.state, common.chosen_protocols())  # a long history's next request, between Steps
    # The separate graphs' call: the aligned view's own script makes it, and the teaching
    # picture follows its lit row itself (a Step sends one element fewer).
    if _layout_now() == "separate":
        projector.follow_step(s.state.step)


# Styles a Step does not change, drawn outside its fragment so that a Step does not send them.
projector.controls_css(compact=not common.presenter())
projector.install_follow()
play.page_css()
_settings()
st.fragment(_cycle, key="fd_cycle")()
if _layout_now() == "teaching":  # outside the fragment: a Step does not send the closed panel
    teaching.exports(common.session(), common.chosen_protocols(), _window())

# Rooms (issue 33), kept apart from this page: the instructor's room, or an attendee's way back.
from ui.rooms import after_debugger  # noqa: E402

after_debugger()
