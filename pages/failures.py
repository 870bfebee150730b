"""Failures: inject faults from the catalog and see their effect in every encoding."""

import streamlit as st

from flowdebug.engine.execution.faults import CATALOG
from flowdebug.errors import FlowdebugError
from flowdebug.views.failures import (
    TARGETS,
    build_fault,
    call_choices,
    catalog_rows,
    preview,
)
from flowdebug.views.protocols import LEVEL_ICONS, VERDICT_ICONS, verdict_badge
from ui import common, flash

common.sidebar()


def _refuse(e: Exception) -> None:
    flash.error(str(e))


def _apply() -> None:
    s = common.session()
    kind = st.session_state.fault_kind
    target = st.session_state.fault_target
    value = {
        "tool": st.session_state.get("fault_tool"),
        "call": st.session_state.get("fault_call"),
        "nth": st.session_state.get("fault_nth"),
    }.get(target)
    params = {
        p.name: st.session_state.get(f"fault_param_{kind}_{p.name}", "")
        for p in CATALOG[kind].params
    }
    try:
        s.set_faults([*s.state.faults, build_fault(kind, target, value, params)])
    except FlowdebugError as e:
        _refuse(e)


def _remove(index: int) -> None:
    s = common.session()
    s.set_faults([f for i, f in enumerate(s.state.faults) if i != index])


def _clear() -> None:
    common.session().set_faults([])


def _undo() -> None:
    try:
        common.session().undo()
    except FlowdebugError as e:
        _refuse(e)


def _restart() -> None:
    s = common.session()
    if not s.state.scenario:
        _refuse(
            ValueError("this session has no scenario to restart: load one on the Debugger page")
        )
        return
    faults = list(s.state.faults)
    common.load_scenario(s.state.scenario)
    common.session().set_faults(faults)
    flash.say(
        f"Restarted {s.state.scenario} with "
        f"{len(faults)} fault(s): step through it on the Debugger."
    )


s = common.session()
st.title("Failures")
common.show_error()

with st.expander("Fault catalog", expanded=not s.state.faults):
    st.table(catalog_rows(), border="horizontal")  # a table wraps the descriptions whole

# -- inject ---------------------------------------------------------------------------------
st.subheader("Inject a fault")
pick, aim, tune = st.columns([2, 2, 2])
with pick:
    kind = st.selectbox(
        "Fault", list(CATALOG), key="fault_kind", format_func=lambda k: f"{k} · {CATALOG[k].phase}"
    )
    st.caption(CATALOG[kind].description)
with aim:
    target = st.radio(
        "Target",
        list(TARGETS),
        key="fault_target",
        horizontal=True,
        format_func=lambda t: TARGETS[t],
    )
    if target == "tool":
        st.selectbox("Tool", s.state.toolset.names, key="fault_tool")
    elif target == "call":
        calls = call_choices(s.conversation)
        st.selectbox("Call", list(calls), key="fault_call", format_func=calls.get)
        if not calls:
            st.caption(
                "No calls in the history yet: step the scenario, or target a tool or the nth call."
            )
    elif target == "nth":
        st.number_input(
            "Call number (counting from 1 over the session)",
            min_value=1,
            value=1,
            step=1,
            key="fault_nth",
        )
with tune:
    for p in CATALOG[kind].params:
        st.text_input(
            p.name,
            key=f"fault_param_{kind}_{p.name}",
            help=p.help,
            placeholder=f"default: {p.default}",
        )
    if not CATALOG[kind].params:
        st.caption(f"{kind} takes no params.")
    st.button("Apply fault", key="fault_apply", type="primary", on_click=_apply, width="stretch")

# -- active ------------------------------------------------------------------------------------
st.subheader(f"Active faults ({len(s.state.faults)})")
if not s.state.faults:
    st.caption("None: the session runs as its scenario says.")
for i, f in enumerate(s.state.faults):
    row = st.columns([3, 1, 5, 1], vertical_alignment="center")
    row[0].markdown(common.code_span(f.spec))
    row[1].markdown(f.phase)
    row[2].markdown(f.info.description)
    row[3].button("Remove", key=f"fault_remove_{i}", on_click=_remove, args=(i,), width="stretch")
act = st.columns([2, 1, 1, 2])
act[0].button(
    "Restart the scenario with these faults",
    key="fault_restart",
    on_click=_restart,
    type="primary",
    disabled=not s.state.scenario,
    help="Start the scenario again with these faults, then step through it",
)
act[1].button("Remove all", key="fault_clear", on_click=_clear, disabled=not s.state.faults)
act[2].button("Undo", key="fault_undo", on_click=_undo, help="Undo the last change")
st.caption("Faults act on calls made from now on; restart to see them from the first call.")

# -- preview -------------------------------------------------------------------------------------
st.subheader("The effect in every encoding")
chosen = common.chosen_protocols()
if not s.state.faults:
    st.info(
        "Apply a fault to replay the scenario with it and see each protocol's "
        "continuation and each vendor's verdict."
    )
    st.stop()
try:
    with st.spinner(f"Replaying {s.state.scenario} with the faults…"):
        p = preview(s.state, s.state.faults, chosen)
except FlowdebugError as e:
    st.error(f"No preview: {common.literal(e)}", icon="⛔")
    st.stop()

icon = {"finished": "✅", "halted": "🛑", "awaiting_approval": "✋", "error": "⛔"}
st.markdown(
    f"Replayed **{common.literal(p.scenario)}** from the start with "
    + ", ".join(common.code_span(f.spec) for f in p.faults)
    + f" — {icon.get(p.status, '▶️')} {common.literal(p.status_text)}"
)
if p.errors:
    st.markdown(
        "**Error results:** "
        + " · ".join(
            f"{common.code_span(e.error_type)} on {common.literal(e.tool)} "
            + common.code_span(e.call_id)
            + (f" (fault {common.code_span(e.fault)})" if e.fault else "")
            for e in p.errors
        )
    )
if not p.changed:
    st.warning(
        "These faults changed nothing in this replay: check the target (a call id or "
        "tool the scenario uses, a call number it reaches)."
    )
    st.stop()
role = (
    p.conversation.messages[p.changed_message].role
    if p.changed_message < len(p.conversation.messages)
    else "message"
)
carried = (
    f"request {p.turn} carries it"
    if p.sent
    else f"request {p.turn} would carry it (the replay stopped before sending it)"
)
st.caption(
    f"First change against the replay without faults: messages[{p.changed_message}] "
    f"({role}); {carried}."
)

rows = [
    {
        "vendor": f"{VERDICT_ICONS[e.verdict]} {e.title}",
        "level": f"{LEVEL_ICONS[f.level]} {f.level}",
        "code": f.code,
        "where": f.path,
        "vendor's message": f.vendor_message or f.message,
    }
    for e in p.effects.values()
    for f in e.findings
]
st.markdown("**What each vendor would reject, and with which message**")
if rows:
    st.table(common.literal_rows(rows), border="horizontal")
else:
    st.caption("Every vendor accepts this history: the linter finds nothing.")

per_row = min(3, len(chosen))
for row in range(0, len(chosen), per_row):
    for col, name in zip(st.columns(per_row), chosen[row : row + per_row], strict=False):
        e = p.effects[name]
        with col:
            st.markdown(f"#### {e.title}")
            st.markdown(f"{verdict_badge(e.verdict)} · **{common.literal(e.label)}**")
            diff, body = st.tabs(["Effect: vs. no faults", "Whole continuation"])
            if e.diff:
                diff.code(e.diff, language="diff", wrap_lines=True)
            else:
                diff.caption(
                    "Byte-identical to the replay without faults: this encoding "
                    "cannot show the difference."
                )
            body.code(e.text, language="json", wrap_lines=True, height=560)
            if e.warnings:
                with st.expander(f"Conversion warnings ({len(e.warnings)})"):
                    for w in e.warnings:
                        st.markdown(
                            f"⚠ {common.code_span(w.code)} · {common.code_span(w.path)}  \n"
                            + common.literal(w.message)
                        )
