"""Sessions: every saved session — open, rename, duplicate, fork, delete — plus export of the
current one and import of traces or any vendor payload."""

import json
from dataclasses import replace

import streamlit as st

from flowdebug import hosting
from flowdebug.errors import FlowdebugError
from flowdebug.exchange import exports as exporting
from flowdebug.exchange import imports as importing
from flowdebug.exchange.tools import SCHEMA_SKELETON, ToolForm
from flowdebug.views import new_session, vendors
from ui import browser, common, flash

common.sidebar()
store = common.store()
current = common.session()
owner = browser.owner()  # on a shared server only this browser's sessions: see browser.owner
st.title("Sessions")
st.caption(
    "Every step is saved as it happens; a reload or a server restart reopens the session "
    "named in the address bar. Keys are never saved."
)
said = common.show_error()  # the top's message shown; one meant for a control kept


def _act(action, done: str) -> None:
    try:
        action()
        flash.say(done)
    except FlowdebugError as e:
        flash.error(str(e))


def _open(session_id: str) -> None:
    _act(lambda: common.open_saved(session_id), "Opened.")


# -- a session of your own --------------------------------------------------------------------
SKELETON = json.dumps(SCHEMA_SKELETON, indent=2)
PLAYERS = {
    "offline": "Offline model (reads the request)",
    "manual": "Manual (you)",
    "live": "Live model (the sidebar's settings)",
}


def _new_session_form() -> new_session.NewSession:
    get = st.session_state.get
    typed = [
        ToolForm(
            name=get(f"new_tool_name_{i}", ""),
            description=get(f"new_tool_desc_{i}", ""),
            parameters=get(f"new_tool_schema_{i}", SKELETON),
        )
        for i in range(int(get("new_tool_count", 1)))
    ]
    return new_session.NewSession(
        user=get("new_user", ""),
        system=get("new_system", ""),
        typed=typed,
        pasted=get("new_tools_pasted", ""),
        tool_choice=get("new_tool_choice", "auto"),
        tool_name=get("new_tool_named", ""),
        parallel=get("new_parallel", new_session.PARALLEL[0]),
        max_rounds=int(get("new_max_rounds", 10)),
        player=replace(common.player_choice(), kind=get("new_player", "offline")),
        name=get("new_name", ""),
        mcp=listed[0] if (listed := get("fd_new_mcp")) else None,
        mcp_tools=get("new_mcp_pick") if listed else None,
    )


def _list_mcp() -> None:
    """List the tools of the MCP server typed in the form, to choose from before creating."""
    get = st.session_state.get
    st.session_state.pop("fd_new_mcp", None)
    try:
        spec = new_session.mcp_server(get("new_mcp_stdio", ""), get("new_mcp_url", ""))
        names = [t.name for t in new_session.mcp_listing(spec)]
    except FlowdebugError as e:
        flash.error(f"Not listed: {e}", where="mcp")
        return
    st.session_state.fd_new_mcp = (spec, names)
    st.session_state.new_mcp_pick = names
    flash.say(f"{len(names)} tool(s) from {spec.label}: choose those to declare.", where="mcp")


def _mcp_source() -> None:
    """Tools from an MCP server: a command (not on a shared server) or a URL the host allows."""
    allowed = hosting.allowed_mcp_urls()
    c = st.columns([3, 3, 1], vertical_alignment="bottom")
    c[0].text_input(
        "…or tools from an MCP server: its command (stdio)",
        key="new_mcp_stdio",
        placeholder="python -m sample_tools.mcp_server",
        disabled=hosting.shared(),
        help="Not on this shared server: it starts no command"
        if hosting.shared()
        else "The command line that starts the server",
    )
    c[1].text_input(
        "…or its URL (streamable HTTP)",
        key="new_mcp_url",
        placeholder=allowed[0] if allowed else "http://localhost:8000/mcp",
        help=f"On this shared server only under: {', '.join(allowed) or 'none'}"
        if hosting.shared()
        else None,
    )
    c[2].button("List its tools", key="new_mcp_list", on_click=_list_mcp, width="stretch")
    flash.show(said, "mcp")
    if listed := st.session_state.get("fd_new_mcp"):
        spec, names = listed
        st.multiselect(f"Tools of {spec.label} to declare", names, key="new_mcp_pick")


def _create() -> None:
    form = _new_session_form()
    fresh = new_session.build(form)
    common.set_session(fresh)
    store.rename(fresh.state.id, new_session.name_of(form), owner=owner)
    flash.say(f"Created “{new_session.name_of(form)}” and opened it: step it on the Debugger.")


with st.expander("New session: your own prompt and tools"):
    st.text_area("System prompt", key="new_system", height=80)
    st.text_area("User message", key="new_user", height=80)
    st.text_input("Name (empty: the user message's first words)", key="new_name")
    count = st.number_input("Tools typed here", 0, 8, 1, key="new_tool_count")
    for i in range(int(count)):
        c = st.columns([1, 2, 3])
        c[0].text_input(f"Tool {i + 1} name", key=f"new_tool_name_{i}")
        c[1].text_area(f"Tool {i + 1} description", key=f"new_tool_desc_{i}", height=120)
        c[2].text_area(
            f"Tool {i + 1} parameters (JSON Schema)",
            SKELETON,
            key=f"new_tool_schema_{i}",
            height=120,
        )
    st.text_area(
        "…or tools pasted in any vendor's format (a tools list, a whole request, MCP tools/list)",
        key="new_tools_pasted",
        height=100,
    )
    _mcp_source()
    c = st.columns(4)
    chosen = c[0].selectbox("Tool choice", new_session.TOOL_CHOICES, key="new_tool_choice")
    c[1].text_input("Named tool", key="new_tool_named", disabled=chosen != "tool")
    c[2].selectbox("Parallel calls", new_session.PARALLEL, key="new_parallel")
    c[3].number_input("Round cap", 1, 100, 10, key="new_max_rounds")
    st.radio("Player", list(PLAYERS), key="new_player", horizontal=True, format_func=PLAYERS.get)
    if st.button("Create and open", key="new_create", type="primary"):
        try:
            _create()
            st.rerun()
        except FlowdebugError as e:
            st.error(f"Not created: {common.literal(e)}")

# -- saved sessions ---------------------------------------------------------------------------
saved = store.list(owner=owner)
st.dataframe(
    [
        {
            "name": s.name,
            "scenario": s.scenario or "—",
            "step": s.step,
            "status": s.status,
            "messages": s.messages,
            "forked from": s.parent or "",
            "id": s.id,
            "current": "●" if s.id == current.state.id else "",
        }
        for s in saved
    ],
    width="stretch",
    hide_index=True,
)
ids = [s.id for s in saved]
labels = {s.id: f"{s.name} · {s.scenario or 'no scenario'} · step {s.step} ({s.id})" for s in saved}
if ids and (
    st.session_state.get("sess_pick_for") != current.state.id
    or st.session_state.get("sess_pick") not in ids
):
    # Another session was opened (created, imported, duplicated, picked elsewhere): the
    # chooser shows it instead of its last choice. Set, not dropped: the browser keeps
    # showing a dropped choice while the server reads the default.
    st.session_state.sess_pick = current.state.id if current.state.id in ids else ids[0]
    st.session_state.sess_pick_for = current.state.id
if ids:
    pick = st.selectbox("Session", ids, key="sess_pick", format_func=labels.get)
    c = st.columns([1, 1, 1, 1])
    if c[0].button("Open", key="sess_open", type="primary", width="stretch"):
        _open(pick)
        st.rerun()
    if c[1].button("Duplicate", key="sess_dup", width="stretch"):
        _act(lambda: store.duplicate(pick, owner=owner), "Duplicated.")
        st.rerun()
    if c[2].button(
        "Delete",
        key="sess_delete",
        width="stretch",
        disabled=pick == current.state.id,
        help="The open session cannot be deleted; open another one first",
    ):
        _act(lambda: store.delete(pick, owner=owner), "Deleted.")
        st.rerun()
    with c[3].popover("Rename", width="stretch"):
        new_name = st.text_input("New name", key="sess_new_name")
        if st.button("Rename", key="sess_rename") and new_name.strip():
            _act(lambda: store.rename(pick, new_name.strip(), owner=owner), "Renamed.")
            st.rerun()
    with st.expander("Fork the chosen session at a message"):
        at = st.number_input("Keep messages up to (index)", 0, 10_000, 0, key="sess_fork_at")
        if st.button("Fork and open", key="sess_fork"):

            def fork() -> None:
                state = store.fork(pick, int(at), owner=owner)
                common.open_saved(state.id)

            _act(fork, "Forked.")
            st.rerun()

# -- export -------------------------------------------------------------------------------------
st.subheader("Export the open session")
c = st.columns([2, 2, 1])
fmt = c[0].selectbox(
    "Format",
    exporting.FORMATS,
    key="exp_format",
    format_func={
        "trace": "Trace (JSON, reimportable)",
        "request": "Request payload",
        "mermaid": "Mermaid",
        "svg": "SVG graph",
        "dot": "DOT graph",
        "snippet": "Python snippet (vendor SDK)",
    }.get,
)
needs_protocol = fmt != "trace"
names = exporting.export_protocols(fmt)
protocol = c[1].selectbox(
    "Protocol", names, key="exp_protocol", format_func=common.title, disabled=not needs_protocol
)
try:
    mine = next((s for s in saved if s.id == current.state.id), None)
    out = exporting.export(  # a trace carries its name and parent: an import keeps them
        current.state,
        fmt,
        protocol,
        name=mine.name if mine else None,
        parent=mine.parent if mine else None,
    )
    c[2].download_button(
        "Download",
        data=out.data,
        file_name=out.filename,
        mime=out.mime,
        key="exp_download",
        width="stretch",
        on_click="ignore",
    )
    for w in out.warnings:
        st.caption(f"⚠ {common.literal(w)}")
    if fmt in ("snippet", "mermaid", "dot", "request", "trace") and isinstance(out.data, str):
        with st.expander(f"Preview {common.literal(out.filename)}"):
            st.code(
                out.data[:20_000],
                language="python"
                if fmt == "snippet"
                else "json"
                if fmt in ("request", "trace")
                else None,
            )
except FlowdebugError as e:
    st.error(f"Cannot export as {fmt}: {common.literal(e)}")

# -- import -------------------------------------------------------------------------------------
st.subheader("Import")
st.caption(
    f"A trace exported here, or any {vendors.model_vendors()} request or response, or "
    "an MCP transcript, or an OpenTelemetry GenAI trace (OTLP JSON). A bad file is refused "
    "with the JSON path at fault; nothing changes."
)
pasted = st.text_area("Paste JSON", key="imp_text", height=150)
uploaded = st.file_uploader("…or upload a file", type=["json"], key="imp_file")
if st.button("Import as a new session", key="imp_go", type="primary"):
    data = uploaded.getvalue() if uploaded is not None else pasted
    if not data:
        st.error("Paste JSON or choose a file first.")
    else:
        try:
            imported = importing.import_session(data, store=store, owner=owner)
            common.open_saved(imported.state.id)
            flash.say(
                f"Imported {imported.source} as “{imported.name}” and opened it."
                + "".join(f"\n\n⚠️ {w.message}" for w in imported.warnings)
            )
            st.rerun()
        except FlowdebugError as e:
            st.error(f"Not imported: {common.literal(e)}")
