"""History: every message and its parts as JSON — edit, delete, insert, fork — with the
call/result pairing checked and the protocol linter's findings."""

import json
from dataclasses import replace

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from flowdebug.errors import FlowdebugError
from flowdebug.exchange.tools import finding_rows
from flowdebug.lint.linter import lint_conversation
from flowdebug.views import rerun
from flowdebug.views.debugger import pairing
from flowdebug.views.history import (
    ROLES,
    add_branch,
    add_fork,
    message_from_form,
    message_json,
    pair_problems,
    pair_rows,
    part_json,
    part_summary,
    register,
    revision,
)
from ui import browser, common, flash, tokens

PAGE = 25  # messages shown at once: a long history stays quick
ROLE_ICONS = {"user": "🧑", "assistant": "🤖", "tool": "🛠️", "system": "⚙️"}
LEVEL_ICONS = {"error": "⛔", "warning": "⚠️", "info": "ℹ️"}
EDITOR_PREFIXES = ("part_", "msg_", "ins_body_", "ins_role_")
PROBLEM_STYLE = "background-color: #fde2e2; color: #7f1d1d; font-weight: 600"

common.sidebar()


def _edit(action, done: str, where: str = "") -> None:
    """Run one Session edit; a refused edit shows its reason (beside the editor ``where``,
    when given) and changes nothing."""
    try:
        action(common.session())
    except FlowdebugError as e:
        flash.error(f"Nothing changed — {e}", where=where or flash.TOP)
        return
    flash.say(done)


def _save_part(i: int, j: int) -> None:
    text = st.session_state[f"part_{i}_{j}"]
    _edit(lambda s: s.edit_part(i, j, text), f"Saved messages[{i}].parts[{j}].", f"part_{i}_{j}")


def _save_message(i: int) -> None:
    text = st.session_state[f"msg_{i}"]
    _edit(lambda s: s.edit_message(i, text), f"Saved messages[{i}].", f"msg_{i}")


def _delete(i: int) -> None:
    _edit(lambda s: s.delete_message(i), f"Deleted messages[{i}].")


def _insert(i: int) -> None:
    role, body = st.session_state[f"ins_role_{i}"], st.session_state[f"ins_body_{i}"]
    _edit(
        lambda s: s.insert_message(i + 1, message_from_form(role, body)),
        f"Inserted messages[{i + 1}].",
        f"ins_body_{i}",
    )


def _name_saved(fork: str, parent: str, branch: str) -> None:
    """Name a saved fork after its parent and its branch, so the Sessions list tells it
    apart (the store's default is "session" and the time)."""
    try:
        store = common.store()
        mine = browser.owner()
        store.rename(fork, f"{store.info(parent, owner=mine).name} · {branch}", owner=mine)
    except FlowdebugError:  # the fork stays under the store's name
        pass


def _fork(i: int) -> None:
    branches = st.session_state.setdefault("fd_branches", {})
    parent = common.session().state.id
    name, fork = add_fork(branches, common.session(), i)
    common.set_session(fork, parent=parent)
    _name_saved(fork.state.id, parent, name)
    st.session_state.branch = name
    flash.say(f"Forked after message {i}: now on branch “{name}”.")


def _rerun(i: int) -> None:
    """Send the request ending at message ``i`` again, as a fork with the current tools."""
    current = common.session()
    try:
        again = rerun.rerun(current, i)
    except FlowdebugError as e:
        flash.error(f"Not re-run — {e}")
        return
    branches = st.session_state.setdefault("fd_branches", {})
    name = add_branch(branches, current, again.fork, f"re-run after message {i}")
    common.set_session(again.fork, parent=current.state.id)
    _name_saved(again.fork.state.id, current.state.id, name)
    st.session_state.branch = name
    st.session_state.rerun_view = again
    flash.say(
        f"Re-ran the turn after message {i}: now on “{name}”; before and after are under "
        f"message {i}."
    )


def _rerun_box(again: rerun.Rerun, where: DeltaGenerator) -> None:
    with where.expander("Re-run: before and after", expanded=True):
        _rerun_view(again)


def _rerun_view(again: rerun.Rerun) -> None:
    """The two requests and the two model turns side by side, and the paths that differ."""
    st.subheader(f"Re-run of the turn after message {again.at}")
    sent = again.sent
    if sent.source == "history":
        st.caption(
            "The request as first sent is no longer in the undo history: “before” is the "
            "history as it stands, with the tools it declares now."
        )
    elif sent.source == "exchange" and sent.protocol:
        st.caption(
            f"“before” is the request sent on the wire ({common.title(sent.protocol)}, "
            "as recorded), read by its vendor's codec; “after” has the tools as they are now."
        )
        with st.expander("The request as it went on the wire"):
            st.code(json.dumps(sent.wire, indent=2, ensure_ascii=False), language="json")
    for what, diffs, before, after in (
        ("request", again.request_diff, again.before_request, again.after_request),
        ("model turn", again.turn_diff, again.before_turn, again.after_turn),
    ):
        if diffs:
            st.markdown(f"**The {what}s differ at {len(diffs)} JSON path(s)** (order ignored)")
            # A table wraps a changed description whole (a grid cut it at its column's
            # width); its cells are Markdown, so the text is made literal.
            st.table(common.literal_rows(rerun.diff_rows(diffs)), hide_index=True)
        else:
            st.markdown(f"**The two {what}s are the same** (order ignored)")
        cols = st.columns(2)
        for col, label, value in ((cols[0], "before", before), (cols[1], "after", after)):
            col.caption(f"{what} {label}")
            col.code(
                json.dumps(value, indent=2, ensure_ascii=False), language="json", wrap_lines=True
            )


def _switch() -> None:
    common.set_session(st.session_state.fd_branches[st.session_state.branch])


def _undo() -> None:
    _edit(lambda s: s.undo(), "Undone.")


def _show_refusal(key: str) -> None:
    """The reason an edit was refused, right under the editor it came from."""
    if flash.show(refused, key):
        shown.add(key)


def _editor(key: str, text: str) -> str:
    """Fill an editor through the session state, not as the widget's default: the browser
    keeps showing what it showed under the same key, so a changed default (after an undo or
    another edit) would not reach the screen. What the person typed stays until the history
    changes."""
    if key not in st.session_state:
        st.session_state[key] = text
    return text


def _highlight(column: str, values: set[str]):
    def style(row: pd.Series) -> list[str]:
        return [PROBLEM_STYLE if row[column] in values else "" for _ in row]

    return style


# -- header and branches ------------------------------------------------------------------------
s = common.session()
conv = s.conversation
head = st.columns([5, 1])
head[0].title("History")
head[1].button(
    "Undo",
    key="history_undo",
    on_click=_undo,
    width="stretch",
    help="Take back the last edit or step",
)
branches = st.session_state.get("fd_branches")
if branches:
    current = register(branches, s)
    if len(branches) > 1:
        if st.session_state.get("branch") != current:
            st.session_state.branch = current
        st.selectbox(
            "Branch",
            list(branches),
            key="branch",
            on_change=_switch,
            help="Forks made here; each keeps its own history and undo",
        )
st.caption(
    f"{len(conv.messages)} messages · step {s.state.step} · "
    f"{common.literal(s.state.status_text)}. "
    "Edit a part as JSON and press Save; an invalid edit is refused with its reason."
)
refused = common.show_error()  # a refusal meant for an editor's place
top_error = st.empty()  # the reason goes here unless its editor is shown below
shown: set[str] = set()
last_rerun = st.session_state.get("rerun_view")
if last_rerun is None or last_rerun.fork.state.id != s.state.id:
    last_rerun = None

# Editors showing an older history (after an edit, an undo, a branch switch) are refilled;
# otherwise what the person typed stays, so a refused edit can be corrected.
rev = revision(s)
if st.session_state.get("history_rev") != rev:
    for key in [k for k in st.session_state if str(k).startswith(EDITOR_PREFIXES)]:
        del st.session_state[key]
    st.session_state.history_rev = rev

# -- pairing and lint ---------------------------------------------------------------------------
pairs = pairing(conv)
st.subheader("Calls and results")
problems = pair_problems(pairs)
if not pairs:
    st.write("No tool calls yet.")
else:
    rows = [{k: "—" if v is None else str(v) for k, v in r.items()} for r in pair_rows(pairs)]
    table = pd.DataFrame(common.literal_rows(rows))
    bad = {common.literal(p.problem) for p in pairs if p.problem}
    st.table(table.style.apply(_highlight("problem", bad), axis=1), hide_index=True)
for line in problems:
    st.error(common.literal(line), icon="🔗")
pending = [p for p in pairs if p.result_message is None and p.problem is None]
if pairs and not problems:
    if pending:
        st.write(
            f"✅ Every answered call has exactly one result, in the next message; "
            f"{len(pending)} call(s) in the last message are not executed yet."
        )
    else:
        st.write("✅ Every call has exactly one result, in the next message.")
st.subheader("Protocol linter")
chosen = common.chosen_protocols()
findings = finding_rows(lint_conversation(conv, chosen))
if findings:
    table = pd.DataFrame(
        [
            {
                "level": f"{LEVEL_ICONS[r['level']]} {r['level']}",
                **common.literal_rows([{k: r[k] for k in ("protocol", "path", "message")}])[0],
            }
            for r in findings
        ]
    )
    st.table(table.style.apply(_highlight("level", {"⛔ error"}), axis=1), hide_index=True)
else:
    names = ", ".join(common.title(p) for p in chosen) or "no protocol chosen"
    st.write(f"✅ No findings for {names}.")

tokens.usage_table(s.state)

# -- the messages -------------------------------------------------------------------------------
st.header("Messages")
n = len(conv.messages)
start = 0
if n > PAGE:
    if st.session_state.get("hist_from", n) > n - 1:
        st.session_state.hist_from = n - PAGE  # the latest messages first
    label = f"First message shown ({PAGE} at a time)"
    start = int(st.number_input(label, 0, n - 1, step=PAGE, key="hist_from"))
if not conv.messages:
    st.info("The history is empty: insert a first message.")
    st.selectbox("Role", ROLES, key="ins_role_-1")
    st.text_area("Text, or parts as JSON", key="ins_body_-1")
    st.button("Insert", key="insert_-1", on_click=_insert, args=(-1,))
    _show_refusal("ins_body_-1")

shown_rows = range(start, min(n, start + PAGE))
if last_rerun is not None and last_rerun.at not in shown_rows:
    _rerun_box(last_rerun, st.container())  # its message is on another page of the history
for i in shown_rows:
    m = conv.messages[i]
    with st.container(border=True):
        top = st.columns([4, 1.6, 1.6, 1])  # "Re-run the turn" whole at 1280 px
        top[0].markdown(f"### {ROLE_ICONS.get(m.role, '')} {i} · {m.role}")
        buttons = [
            ("Fork from here", "fork", _fork, "A new branch whose history ends at this message"),
            (
                "Re-run the turn",
                "rerun",
                _rerun,
                "Send this request again with the current tools and settings, as a fork, "
                "and compare both requests and both model turns",
            ),
        ]
        for col, (label, name, action, tip) in zip(top[1:3], buttons, strict=True):
            if name == "rerun" and m.role == "assistant":
                continue  # a request ends with a message that is not the model's
            col.button(
                label, key=f"{name}_{i}", on_click=action, args=(i,), width="stretch", help=tip
            )
        top[3].button("Delete", key=f"delete_{i}", on_click=_delete, args=(i,), width="stretch")
        if last_rerun is not None and last_rerun.at == i:
            _rerun_box(last_rerun, st.container())  # where the button was pressed
        for j, part in enumerate(m.parts):
            text = _editor(f"part_{i}_{j}", part_json(part))
            cols = st.columns([8, 1], vertical_alignment="bottom")
            cols[0].text_area(
                f"messages[{i}].parts[{j}] · **{part.kind}** — "
                + common.literal(part_summary(part)),
                key=f"part_{i}_{j}",
                height=min(max(100, 26 * (text.count("\n") + 2)), 340),
            )
            cols[1].button(
                "Save", key=f"save_part_{i}_{j}", on_click=_save_part, args=(i, j), width="stretch"
            )
            _show_refusal(f"part_{i}_{j}")
        opened = any(f.where in (f"msg_{i}", f"ins_body_{i}") for f in refused)
        with st.expander("Edit the whole message · insert a message after it", expanded=opened):
            whole, insert = st.columns(2, gap="large")
            with whole:
                whole_text = _editor(f"msg_{i}", message_json(m))
                st.text_area(
                    "Message (JSON)",
                    key=f"msg_{i}",
                    height=min(max(120, 24 * (whole_text.count("\n") + 2)), 400),
                )
                st.button("Save message", key=f"save_msg_{i}", on_click=_save_message, args=(i,))
                _show_refusal(f"msg_{i}")
            with insert:
                st.selectbox("Role of the new message", ROLES, key=f"ins_role_{i}")
                st.text_area(
                    "Text (user, assistant, system) or parts as JSON",
                    key=f"ins_body_{i}",
                    height=120,
                    placeholder='Thanks! Now London?   or   [{"kind": "tool_result", '
                    '"call_id": "…", "content": "…"}]',
                )
                st.button(
                    f"Insert after message {i}", key=f"insert_{i}", on_click=_insert, args=(i,)
                )
                _show_refusal(f"ins_body_{i}")

elsewhere = [replace(f, where=flash.TOP) for f in refused if f.where not in (flash.TOP, *shown)]
flash.show(elsewhere, into=top_error)  # their editors are not on this page
