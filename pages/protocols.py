"""Protocols: the exact payloads of the current step in every chosen protocol, side by side."""

import streamlit as st

from flowdebug import protocols
from flowdebug.errors import FlowdebugError
from flowdebug.render.text import elide, pretty, sse_text
from flowdebug.views.debugger import PHASE_TITLES, phase_now
from flowdebug.views.protocols import (
    KINDS,
    LEVEL_ICONS,
    Change,
    StepView,
    step_views,
    verdict_badge,
)
from ui import actions, common, flash

common.sidebar()


def _undo() -> None:
    try:
        common.session().undo()
    except FlowdebugError as e:
        flash.error(str(e))


st.title("Protocols")
chosen = common.chosen_protocols()
top = st.columns([1, 1, 3, 2], vertical_alignment="center")
actions.run_queued()  # a clicked Step, before the buttons are drawn
s = common.session()
top[0].button(
    "Step",
    key="proto_step",
    type="primary",
    shortcut="N",
    help="Run one phase (N)",
    width="stretch",
    disabled=s.done,
    on_click=actions.queue_action,
    args=("step",),
)
top[1].button(
    "Undo",
    key="proto_undo",
    on_click=_undo,
    shortcut="U",
    help="Go back one step (U)",
    width="stretch",
)
whole = top[2].toggle(
    "Whole payloads",
    key="proto_whole",
    help="Otherwise a long payload shows its first and last lines",
)
per_row = top[3].slider(
    "Protocols per row",
    1,
    5,
    key="proto_per_row",
    value=min(3, len(chosen)),
    disabled=common.presenter(),
    help="Presenter mode shows two a row",
)
if common.presenter():
    per_row = min(2, len(chosen))  # large type needs the width
common.show_error()

views = step_views(s, chosen)
first = views[chosen[0]]
# The last arrow drawn went to the model (tools declared, results sent): the request is out.
sent = bool(s.state.events) and s.state.events[-1].kind in ("declare", "continuation")
waiting = "waits for the model's answer" if sent else "is the next one sent"
if first.pending:
    where = f"request {first.turn} {'sent — ' if sent else ''}{waiting}"
else:
    where = f"turn {first.turn}: request sent, response received"
st.markdown(
    f"### {PHASE_TITLES[phase_now(s.state)]} &nbsp;<small>step {s.state.step} · {where}</small>",
    unsafe_allow_html=True,
)

# -- the linter's verdict per vendor, always in sight ---------------------------------------
for col, name in zip(st.columns(len(chosen)), chosen, strict=True):
    v = views[name]
    counts = ", ".join(f"{n} {lvl}{'s' if n > 1 else ''}" for lvl, n in v.counts.items() if n)
    tail = f" · {counts}" if counts else ""
    col.markdown(f"**{v.title}**  \n{verdict_badge(v.verdict)}{tail}")

STATUS = {
    "unchanged": "unchanged since the previous step",
    "new": ":orange-background[new in this step]",
    "first": "nothing to compare yet: this is the first step",
}


def _status(change: Change | None, label: str) -> str:
    if change is None:
        return ""
    if change.status == "first" and s.state.step:
        return (
            "nothing to compare: the session was reopened after an edit, so the step before is gone"
        )
    if change.status == "changed":
        paths = ", ".join(common.code_span(p) for p in change.paths) or "see *What changed*"
        return f":orange-background[**changed** since {change.before}:] {paths}"
    if change.status == "unchanged" and change.before and change.before != label:
        return f"unchanged (same as {change.before})"
    return STATUS.get(change.status, change.status)


def _code(text: str, language: str = "json") -> None:
    shown, hidden = (text, 0) if whole else elide(text)
    lines = shown.count("\n") + 1
    st.code(shown, language=language, wrap_lines=True, height=620 if lines > 28 else "content")
    if hidden:
        st.caption(f"{hidden:,} lines hidden in the middle")


def _payload(v: StepView, kind: str) -> None:
    p = v.payloads.get(kind)
    if p is None:
        st.caption(f"No {kind} yet: request {v.turn} {waiting}.")
        return
    if v.pending and kind != "request":
        st.caption(
            f"**{p.label}**, the model's last turn: request {v.turn} {waiting} · "
            + _status(v.diffs.get(kind), p.label)
        )
    else:
        st.caption(_status(v.diffs.get(kind), p.label))
    if not p.value:
        why = common.literal("; ".join(w.message for w in p.warnings))
        st.caption(
            f"Nothing on the wire: {v.title} has no model {kind}" + (f" ({why})." if why else ".")
        )
        return
    if kind == "stream" and protocols.facts(v.protocol).stream_framing == "event-stream":
        st.caption(f"{len(p.value)} event-stream frames, each typed by its `:event-type` header")
    elif kind == "stream":
        st.caption(f"{len(p.value)} SSE events, one `data:` line each")
    _code(p.text)


def _changes(v: StepView) -> None:
    for kind in KINDS:
        change = v.diffs.get(kind)
        if change is None:
            continue
        label = v.payloads[kind].label if kind in v.payloads else change.before
        st.markdown(f"**{label}**")
        if change.status == "gone":
            st.caption(f"{change.before} belonged to the previous turn; no {kind} yet.")
        elif change.status != "changed":
            st.caption(_status(change, label))
        else:
            st.markdown("\n".join(f"- {common.code_span(p)}" for p in change.paths))
            _code(change.diff, language="diff")


def _lint(v: StepView) -> None:
    st.markdown(f"#### {verdict_badge(v.verdict)}")
    if not v.findings:
        st.caption("The linter finds nothing this vendor would object to.")
    for f in v.findings:
        st.markdown(
            f"{LEVEL_ICONS[f.level]} {common.code_span(f.code)} · {common.code_span(f.path)}  \n"
            + common.literal(f.message)
        )
    st.markdown("**Conversion warnings**")
    if not v.warnings:
        st.caption("None: this protocol carries everything in the payloads.")
    for side, warnings in v.warnings_apart().items():
        if warnings:
            st.markdown(f"*The {side}*")
        for w in warnings:
            st.markdown(
                f"⚠ {common.code_span(w.code)} · {common.code_span(w.path)}  \n"
                + common.literal(w.message)
            )


def _wire(v: StepView) -> None:
    w = v.wire
    if w is None:
        st.caption("No live exchange for this turn (live players record one per call).")
        return
    st.caption(f"step {w.step} · HTTP {w.status or '?'} · {common.literal(w.url or '')}")
    codec, wire = st.columns(2)
    with codec:
        st.markdown("**Codec encoding**")
        _code(v.payloads["request"].text)
    with wire:
        st.markdown("**On the wire**")
        _code(pretty(w.request))
    for d in w.differences:
        st.markdown(f"- {common.literal(d)}")
    if w.diff:
        _code(w.diff, language="diff")
    else:
        st.caption("The request on the wire is byte-for-byte the codec's encoding.")
    st.markdown("**Response on the wire**")
    _code(sse_text(w.stream) if w.stream is not None else pretty(w.response))


# Fixed names: a tab whose name changes on a step would lose the reader's selected tab.
tabs = ["Request", "Response", "Stream events", "What changed", "Warnings & lint"]
has_wire = any(v.wire is not None for v in views.values())
if has_wire:
    tabs.append("On the wire")
panes = st.tabs(tabs)
for pane, show in zip(
    panes,
    [
        lambda v: _payload(v, "request"),
        lambda v: _payload(v, "response"),
        lambda v: _payload(v, "stream"),
        _changes,
        _lint,
    ],
    strict=False,
):
    with pane:
        for row in range(0, len(chosen), per_row):
            names = chosen[row : row + per_row]
            for col, name in zip(st.columns(per_row), names, strict=False):
                with col:
                    st.markdown(f"#### {views[name].title}")
                    show(views[name])
if has_wire:
    with panes[-1]:
        for name in chosen:
            if views[name].wire is not None:
                st.markdown(f"#### {views[name].title}")
                _wire(views[name])

common.refresh_status()  # the sidebar was drawn before the step
