"""AppTest: sessions saved on every step, reopened from the URL, managed, exported, imported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from flowdebug.store.sessions import open_store
from tests.paths import WIRE

PAGES = Path(__file__).resolve().parents[2] / "pages"


def page(name: str) -> AppTest:
    app = AppTest.from_file(str(PAGES / name), default_timeout=60)
    app.run()
    assert not app.exception
    return app


def test_every_step_is_saved_and_a_reload_resumes_where_the_person_was():
    dbg = page("debugger.py")
    sid = dbg.session_state.fd_session.state.id
    assert dbg.query_params["session"] == [sid] or dbg.query_params["session"] == sid
    dbg.button(key="step_turn").click().run()
    saved = open_store().load(sid)
    assert saved.step == dbg.session_state.fd_session.state.step == 4
    assert len(saved.conversation.messages) == 3
    # A reload (a fresh browser session with the same URL) or a server restart:
    again = AppTest.from_file(str(PAGES / "debugger.py"), default_timeout=60)
    again.query_params["session"] = sid
    again.run()
    resumed = again.session_state.fd_session
    assert resumed.state.id == sid and resumed.state.step == 4
    again.button(key="run").click().run()
    assert open_store().load(sid).status == "finished"


def test_sessions_page_lists_duplicates_renames_and_deletes():
    app = page("sessions.py")
    sid = app.session_state.fd_session.state.id
    assert app.dataframe[0].value["id"].tolist() == [sid]
    app.button(key="sess_dup").click().run()
    infos = open_store().list()
    assert len(infos) == 2
    copy = next(i for i in infos if i.id != sid)
    app.selectbox(key="sess_pick").set_value(copy.id).run()
    app.text_input(key="sess_new_name").set_value("my copy").run()
    app.button(key="sess_rename").click().run()
    assert open_store().info(copy.id).name == "my copy"
    app.selectbox(key="sess_pick").set_value(copy.id).run()
    app.button(key="sess_delete").click().run()
    assert [i.id for i in open_store().list()] == [sid]


def test_open_and_fork_switch_the_current_session():
    app = page("sessions.py")
    first = app.session_state.fd_session.state.id
    app.button(key="sess_dup").click().run()
    other = next(i.id for i in open_store().list() if i.id != first)
    app.selectbox(key="sess_pick").set_value(other).run()
    app.button(key="sess_open").click().run()
    assert app.session_state.fd_session.state.id == other
    app.selectbox(key="sess_pick").set_value(first).run()
    app.number_input(key="sess_fork_at").set_value(0).run()
    app.button(key="sess_fork").click().run()
    forked = app.session_state.fd_session.state.id
    assert forked not in (first, other)
    assert open_store().info(forked).parent == first


def test_import_a_vendor_payload_opens_it_and_a_bad_one_changes_nothing():
    app = page("sessions.py")
    before = [i.id for i in open_store().list()]
    app.text_area(key="imp_text").set_value('{"messages": [{"role": "user", "content": 3}]}')
    app.button(key="imp_go").click().run()
    assert app.error and "Not imported" in app.error[0].value
    assert [i.id for i in open_store().list()] == before
    text = (WIRE / "anthropic.request.continuation.json").read_text()
    app.text_area(key="imp_text").set_value(text).run()
    app.button(key="imp_go").click().run()
    s = app.session_state.fd_session
    assert s.state.id not in before
    calls = [c.id for m in s.conversation.messages for c in m.tool_calls]
    assert calls == ["toolu_01A7Pq3rT9xWcE5bLmN2kVdY", "toolu_01B8Qr4sU0yXdF6cMnO3lWeZ"]
    # the chooser follows the session just opened, and its turn is in the trace to draw
    assert app.selectbox(key="sess_pick").value == s.state.id
    assert [e.call_id for e in s.state.events if e.kind == "tool_call"] == calls


@pytest.mark.parametrize("fmt", ["trace", "request", "mermaid", "snippet"])
def test_export_offers_each_format_for_download(fmt):
    app = page("sessions.py")
    app.selectbox(key="exp_format").set_value(fmt).run()
    assert not app.exception
    assert not app.error
    if fmt == "trace":
        text = app.get("code")[0].value if app.get("code") else ""
        assert json.loads(text)["format"].startswith("flowdebug.trace/")


def test_a_typed_key_never_reaches_the_store(tmp_path):
    key = "sk-ant-flowdebug-SECRET-987654321"
    app = page("debugger.py")
    app.radio(key="player_kind").set_value("live").run()
    app.text_input(key="live_key").set_value(key).run()
    app.button(key="apply_player").click().run()
    app.button(key="step").click().run()
    db = Path(tmp_path / "sessions.db")
    blobs = b"".join(p.read_bytes() for p in db.parent.glob("sessions.db*"))
    assert blobs and key.encode() not in blobs
