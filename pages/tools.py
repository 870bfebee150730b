"""Tools: the session's tool set — table, JSON Schemas, the editor with its mock handler, tools
pasted in any vendor's format, and the linter's findings beside each tool."""

import json
from dataclasses import asdict, fields

import pandas as pd
import streamlit as st

from flowdebug import protocols
from flowdebug.engine.tracing.trace import plural
from flowdebug.errors import FlowdebugError
from flowdebug.exchange.tool_imports import import_tools, parse_tools
from flowdebug.exchange.tools import (
    HANDLER_KINDS,
    ToolForm,
    apply_form,
    delete_tool,
    finding_rows,
    findings_by_tool,
    form_findings,
    required_parameters,
    tool_rows,
)
from flowdebug.views import vendors
from flowdebug.views.history import last_change, restore_scenario_tools, undo_tool_edit
from ui import common, flash, tokens

NEW = "➕ New tool"
FORM_KEYS = {f.name: f"tool_{f.name}" for f in fields(ToolForm)}
LEVEL_ICONS = {"error": "⛔", "warning": "⚠️", "info": "ℹ️"}
LEVEL_BADGES = {
    "error": ":red[**error**]",
    "warning": ":orange[**warning**]",
    "info": ":blue[info]",
}
# The mock handler's fields by kind (the others are the declaration's and the kind itself).
HANDLER_FIELDS = {
    "fixed": ("result", "is_error"),
    "template": ("template", "is_error"),
    "rules": ("rules",),
    "code": ("source",),
    "python": ("function",),
}
KIND_ONLY = {name for names in HANDLER_FIELDS.values() for name in names}
ERROR_STYLE = "background-color: #fde2e2; color: #7f1d1d; font-weight: 600"

common.sidebar()


def _toolset():
    return common.session().state.toolset


def _form_from_widgets() -> ToolForm:
    """The form as typed. Streamlit forgets widgets it did not draw on the last run (the
    fields of another handler kind): those come from the tool being edited, or the blanks."""
    picked = st.session_state.get("tool_pick")
    entry = _toolset().get(picked) if picked and picked != NEW else None
    base = ToolForm.from_entry(entry) if entry is not None else ToolForm()
    return ToolForm(
        **{name: st.session_state.get(key, getattr(base, name)) for name, key in FORM_KEYS.items()}
    )


def _beside(found) -> None:
    """The linter's findings on the field just drawn, as the person types (text only)."""
    for f in found:
        where = "" if f.path.count(".") < 2 else f" · {common.code_span(f.path)}"
        st.caption(f"{LEVEL_ICONS[f.level]} {common.literal(f.message)}{where}")


def _commit(change, notice: str, where: str) -> bool:
    """Apply ``change`` (toolset → toolset) through Session.set_toolset, or show why not
    beside the control ``where`` it came from."""
    try:
        common.session().set_toolset(change(_toolset()))
    except FlowdebugError as e:
        flash.error(f"Nothing changed — {e}", where=where)
        return False
    flash.say(notice, where=where)
    return True


def _save() -> None:
    picked = st.session_state.tool_pick
    form = _form_from_widgets()
    editing = None if picked == NEW else picked
    if _commit(lambda ts: apply_form(ts, form, editing), f"Saved {form.name.strip()!r}.", "editor"):
        st.session_state.tool_pick = form.name.strip()


def _delete() -> None:
    name = st.session_state.tool_pick
    if _commit(lambda ts: delete_tool(ts, name), f"Deleted {name!r}.", "editor"):
        st.session_state.tool_pick = (_toolset().names or [NEW])[0]


def _import() -> None:
    try:
        imported = parse_tools(st.session_state.paste_text)
    except FlowdebugError as e:
        flash.error(f"Nothing imported — {e}", where="paste")
        return
    n = len(imported.tools)
    if _commit(lambda ts: import_tools(ts, imported.tools), f"Imported {n} tool(s).", "paste"):
        st.session_state.paste_text = ""


def _undo() -> None:
    try:
        undo_tool_edit(common.session())
        flash.say("Tool edit undone.")
    except FlowdebugError as e:
        flash.error(f"Nothing changed — {e}")


def _restore() -> None:
    try:
        restore_scenario_tools(common.session())
        flash.say("The scenario's tools are back (Undo tool edit takes them back).")
    except FlowdebugError as e:
        flash.error(f"Nothing changed — {e}")


def _say(where: str) -> None:
    """The outcome of the last action, beside the control it came from."""
    flash.show(said, where)


# -- header and table -------------------------------------------------------------------------
s = common.session()
toolset = s.state.toolset
chosen = common.chosen_protocols()
findings = findings_by_tool(toolset, chosen)

head = st.columns([4, 1, 1])
head[0].title("Tools")
change = last_change(s)
with head[2].popover(
    "Restore",
    width="stretch",
    disabled=not s.state.scenario,
    help=None
    if s.state.scenario
    else "Nothing to restore: this session has no scenario, its tools are its own",
):
    st.caption("Declare the scenario's own tools again; Undo tool edit takes it back.")
    st.button("Restore the scenario's tools", key="tools_restore", on_click=_restore)
head[1].button(
    "Undo tool edit",
    key="tools_undo",
    on_click=_undo,
    width="stretch",
    help="Take back the last tool edit (only when it is the last change; now: "
    f"{change or 'nothing to undo'})",
)
st.caption(
    f"{len(toolset.entries)} tool{'s' if len(toolset.entries) != 1 else ''} declared to the "
    "model, each with a mock handler. "
    f"Findings are for: {', '.join(common.title(p) for p in chosen) or 'no protocol'}."
)
said = common.show_error()  # the top's message shown; one meant for a control kept

rows = tool_rows(toolset, findings, s.state.policy.default_timeout)
if rows:
    table = pd.DataFrame(common.literal_rows(rows))
    table["findings"] = [
        f"{r['findings']} ({r['errors']} error{'s' if r['errors'] != 1 else ''})"
        if r["errors"]
        else str(r["findings"])
        for r in rows
    ]
    errors = table.pop("errors")
    st.table(
        table.style.apply(lambda row: [ERROR_STYLE if errors[row.name] else ""] * len(row), axis=1),
        hide_index=True,
    )
else:
    st.info("No tools yet: add one below or paste a tools list.")

# -- the editor ---------------------------------------------------------------------------------
st.header("Edit a tool")
options = [*toolset.names, NEW]
if st.session_state.get("tool_pick") not in options:
    st.session_state.tool_pick = options[0]
picked = st.selectbox("Tool", options, key="tool_pick")
entry = toolset.get(picked)

# Refill the editor when another tool is picked or the tool changed (save, undo); keep what
# the person typed otherwise, so a refused save can be corrected.
revision = (picked, entry.model_dump_json() if entry else "")
form = ToolForm.from_entry(entry) if entry else ToolForm()
values = asdict(form)
refill = st.session_state.get("tool_form_rev") != revision
st.session_state.tool_form_rev = revision
for name, key in FORM_KEYS.items():
    if name in KIND_ONLY:  # filled below, only for the kind drawn
        if refill:
            st.session_state.pop(key, None)
    elif refill or key not in st.session_state:
        st.session_state[key] = values[name]

left, right = st.columns(2, gap="large")
with left:
    st.subheader("Declaration")
    st.text_input("Name", key="tool_name")
    typed = form_findings(_form_from_widgets(), chosen)  # as typed, before any save
    _beside(typed["name"])
    st.text_area("Description", key="tool_description", height=90)
    _beside(typed["description"])
    lines = st.session_state.tool_parameters.count("\n") + 2
    st.text_area(
        "Parameters (JSON Schema)", key="tool_parameters", height=min(560, max(140, 24 * lines))
    )
    _beside(typed["parameters"])
    st.text_area(
        "Annotations (JSON: readOnlyHint, destructiveHint, idempotentHint, ...)",
        key="tool_annotations",
        height=90,
    )
    st.number_input(
        f"Timeout in seconds (0: the policy's default, {s.state.policy.default_timeout:g} s)",
        min_value=0.0,
        step=0.5,
        key="tool_timeout",
    )
with right:
    st.subheader("Mock handler")
    kinds = list(HANDLER_KINDS)
    if entry is not None and entry.handler.kind not in kinds:
        kinds.append(entry.handler.kind)
    kind = st.selectbox("Kind", kinds, key="tool_handler_kind")
    # Only the drawn kind's fields get a value: a value set for a widget not drawn (another
    # kind's) came back in the browser later, over the one the tool has (an empty function).
    for name in HANDLER_FIELDS.get(kind, ()):
        if FORM_KEYS[name] not in st.session_state:
            st.session_state[FORM_KEYS[name]] = values[name]
    match kind:
        case "fixed":
            st.text_area("Result (JSON: a string needs quotes)", key="tool_result", height=200)
            st.checkbox("Reply as an error (is_error)", key="tool_is_error")
        case "template":
            st.text_input(
                "Template, filled with the call's arguments",
                key="tool_template",
                help='e.g. "It is sunny in {location}"',
            )
            st.checkbox("Reply as an error (is_error)", key="tool_is_error")
        case "rules":
            st.text_area(
                "Rules (JSON list: the first whose `when`/`match` fits replies)",
                key="tool_rules",
                height=260,
            )
            st.caption(
                'e.g. `[{"when": {"location": "Paris"}, "result": {"temp": 18}}, '
                '{"match": {"location": "^T"}, "result": "timeout", "is_error": true}]`'
            )
        case "code":
            st.text_area(
                "Python source defining `def handler(args): ...`", key="tool_source", height=260
            )
            st.caption("Runs in a child process with the tool's timeout; checked before saving.")
        case "python":
            st.text_input(
                "Function (module:function)",
                key="tool_function",
                help="For the sample tools, e.g. sample_tools.weather:get_weather",
            )
        case _:
            st.info(
                f"This tool's handler is {common.code_span(kind)} (set by the scenario); pick "
                "another kind "
                "to replace it."
            )
    buttons = st.columns(2)
    buttons[0].button(
        "Save tool" if entry else "Add tool",
        key="tool_save",
        type="primary",
        on_click=_save,
        width="stretch",
    )
    buttons[1].button(
        "Delete tool", key="tool_delete", on_click=_delete, width="stretch", disabled=entry is None
    )
    _say("editor")

# -- paste ----------------------------------------------------------------------------------------
st.header("Paste tools")
st.caption(
    f"Any vendor's format: one {vendors.bare_tool_titles()}, or a list of them, an MCP "
    "`tools/list` result, or a whole request of any vendor. New tools answer a fixed "
    '"ok" until you edit them.'
)
text = st.text_area(
    "Tools JSON",
    key="paste_text",
    height=200,
    placeholder='[{"type": "function", "function": {"name": "...", ...}}]',
)
if text.strip():
    try:
        imported = parse_tools(text)
    except FlowdebugError as e:
        st.error(f"Nothing imported — {common.literal(e)}", icon="⛔")
    else:
        title = (
            protocols.get(imported.protocol).title
            if imported.protocol in protocols.PROTOCOLS
            else imported.protocol
        )
        # The source names the vendor already ("MCP (JSON-RPC) tools/list result").
        where = imported.source if title in imported.source else f"{imported.source} ({title})"
        st.success(f"Detected **{common.literal(where)}**: {plural(len(imported.tools), 'tool')}.")
        st.table(
            common.literal_rows(
                [
                    {
                        "name": t.name,
                        "description": t.description or "",
                        "required": ", ".join(required_parameters(t)),
                        "import": "replaces the declaration" if t.name in toolset.names else "new",
                    }
                    for t in imported.tools
                ]
            ),
            hide_index=True,
        )
        for w in imported.warnings:
            st.caption(f"⚠ {common.literal(w.path)}: {common.literal(w.message)}")
        st.button(
            f"Add {len(imported.tools)} tool(s)",
            key="paste_import",
            type="primary",
            on_click=_import,
        )
_say("paste")

# -- schemas and lint findings ------------------------------------------------------------------
st.header("Schemas and lint findings")
for e in toolset.entries:
    found = findings[e.tool.name]
    worst = next(
        (lvl for lvl in ("error", "warning", "info") if any(f.level == lvl for f in found)), None
    )
    with st.container(border=True):
        badge = f"{LEVEL_ICONS[worst]} {len(found)} finding(s)" if worst else "✅ no findings"
        st.markdown(f"#### {common.code_span(e.tool.name)}")
        st.caption(f"{common.literal(e.handler.kind)} handler · {badge}")
        schema_col, lint_col = st.columns(2, gap="large")
        schema_col.code(
            json.dumps(e.tool.parameters, indent=2, ensure_ascii=False), language="json"
        )
        if found:
            lint_col.markdown(
                "\n".join(
                    f"- {LEVEL_BADGES[r['level']]} {common.literal(r['message'])} · "
                    + common.code_span(r["code"])
                    for r in finding_rows(found)
                )
            )
        else:
            lint_col.write("Every chosen vendor accepts this declaration as it is.")

tokens.footprint_table(toolset.tools)
