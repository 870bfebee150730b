"""AppTest: re-run the same turn (issue 30 item 3), driven through the app as a person would: a
new session of your own, a Step on the Debugger, a description edit on the Tools page, then
"Re-run the turn" on the History page shows both requests and both model turns with the JSON
paths that differ."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from flowdebug.store.sessions import open_store
from tests.app.markdown import cells, shown, tables_with
from tests.app.test_new_session import fill_flights_form

APP = Path(__file__).resolve().parents[2] / "app.py"
PRECISE = "Search flights between two cities on a date"


def test_a_description_edit_re_run_on_the_same_turn_shows_both_requests_and_the_changed_path():
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.run()
    app.switch_page("pages/sessions.py").run()
    fill_flights_form(app)  # description "Searches stuff"
    app.button(key="new_create").click().run()
    mine = app.session_state.fd_session.state.id
    app.switch_page("pages/debugger.py").run()
    app.button(key="step_turn").click().run()
    assert not app.exception
    app.switch_page("pages/tools.py").run()
    assert app.selectbox(key="tool_pick").value == "search_flights"
    app.text_area(key="tool_description").input(PRECISE).run()
    app.button(key="tool_save").click().run()
    app.switch_page("pages/history.py").run()
    assert not app.exception
    assert not app.button(key="rerun_0").disabled
    assert [b.key for b in app.button if str(b.key).startswith("rerun_")] == [
        "rerun_0",
        "rerun_2",
    ]
    app.button(key="rerun_0").click().run()
    assert not app.exception

    fork = app.session_state.fd_session
    assert fork.state.id != mine
    assert open_store().load(mine).conversation.tools[0].description == PRECISE
    # The fork kept the history up to the request and the model played the turn again.
    assert [m.role for m in fork.state.conversation.messages] == ["user", "assistant"]
    assert fork.state.conversation.messages[1].tool_calls[0].arguments == {
        "origin": "Paris",
        "destination": "Tokyo",
        "date": "2026-12-01",
    }
    # The only table of differences (the requests'), drawn under message 0, where the button
    # was: after the calls and results and the linter's findings.
    assert len(app.table) == 3
    (diff,) = tables_with(app, "path", "before", "after")
    assert diff.equals(cells(app.table[2].value))
    assert diff.to_dict("records") == [
        {"path": "$.tools[0].description", "before": '"Searches stuff"', "after": f'"{PRECISE}"'}
    ]
    texts = [shown(m.value) for m in app.markdown]
    assert "The two model turns are the same (order ignored)" in " ".join(texts).replace("*", "")
    requests = [json.loads(c.value) for c in app.code if '"messages"' in c.value]
    assert [r["tools"][0]["description"] for r in requests] == ["Searches stuff", PRECISE]
    assert requests[0]["messages"] == requests[1]["messages"]
    turns = [json.loads(c.value) for c in app.code if c.value.startswith('{\n  "role"')]
    assert len(turns) == 2 and turns[0] == turns[1]
    # The fork is a branch of its own; the original is kept.
    assert app.selectbox(key="branch").value == "re-run after message 0"
    parents = {i.id: i.parent for i in open_store().list()}
    assert parents[fork.state.id] == mine


def test_tool_edits_have_their_own_undo_which_never_takes_back_a_step():
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.run()
    app.switch_page("pages/tools.py").run()
    before = app.session_state.fd_session.state.toolset
    app.text_area(key="tool_description").input(PRECISE).run()
    app.button(key="tool_save").click().run()
    assert app.button(key="tools_undo").label == "Undo tool edit"
    assert app.button(key="tools_undo").help.endswith("now: tool edit)")
    app.switch_page("pages/debugger.py").run()
    app.button(key="step").click().run()  # declaration: step 1, after the tool edit
    app.switch_page("pages/tools.py").run()
    app.button(key="tools_undo").click().run()
    session = app.session_state.fd_session
    assert session.state.step == 1 and session.state.toolset.tools[0].description == PRECISE
    assert [shown(e.value) for e in app.error] == [
        "Nothing changed — the last change (step 1) is not a tool edit: Undo on the Debugger "
        "or the History page takes it back"
    ]
    app.switch_page("pages/debugger.py").run()
    app.button(key="undo").click().run()  # the Debugger's Undo takes the step back
    app.switch_page("pages/tools.py").run()
    app.button(key="tools_undo").click().run()
    assert app.session_state.fd_session.state.toolset == before
    assert [shown(s.value) for s in app.success] == ["Tool edit undone."]
