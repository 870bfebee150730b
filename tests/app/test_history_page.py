"""The History page, driven by widget key: part and message edits (valid and invalid),
delete, insert, fork and branches, the pairing check and the linter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from flowdebug.engine.session.debugger import Session
from tests.app.markdown import cells, shown

PAGE = Path(__file__).resolve().parents[2] / "pages" / "history.py"


@pytest.fixture(scope="module")
def finished() -> Session:
    """The weather scenario run to the end: user, two calls, two results, the answer."""
    s = Session.from_scenario("weather")
    s.run()
    assert [m.role for m in s.conversation.messages] == ["user", "assistant", "tool", "assistant"]
    return s


@pytest.fixture
def at(finished: Session) -> AppTest:
    app = AppTest.from_file(str(PAGE), default_timeout=60)
    app.session_state["fd_session"] = finished.clone()
    app.run()
    assert not app.exception
    return app


def session(at: AppTest) -> Session:
    return at.session_state.fd_session


def errors(at: AppTest) -> list[str]:
    return [shown(e.value) for e in at.error]


def test_the_page_runs_on_the_default_scenario():
    app = AppTest.from_file(str(PAGE), default_timeout=60)
    app.run()
    assert not app.exception
    assert app.title[0].value == "History"
    assert json.loads(app.text_area(key="part_0_0").value) == {
        "kind": "text",
        "text": "Weather in Paris and Tokyo?",
    }
    assert errors(app) == []


def test_every_part_is_shown_as_json_and_the_pairing_is_checked(at):
    call = json.loads(at.text_area(key="part_1_1").value)
    assert (call["kind"], call["arguments"]["location"]) == ("tool_call", "Tokyo")
    result = json.loads(at.text_area(key="part_2_1").value)
    assert (result["is_error"], result["error_type"]) == (True, "timeout")
    pairs = cells(at.table[0].value)
    assert list(pairs["error"]) == ["", "timeout"]
    assert list(pairs["problem"]) == ["", ""]
    assert errors(at) == []


def test_a_valid_part_edit_changes_the_conversation(at):
    edited = {"kind": "text", "text": "It is sunny in Paris."}
    at.text_area(key="part_3_0").input(json.dumps(edited)).run()
    at.button(key="save_part_3_0").click().run()
    assert errors(at) == []
    assert session(at).conversation.messages[3].parts[0].text == "It is sunny in Paris."
    assert any("Saved messages[3].parts[0]" in shown(s.value) for s in at.success)
    assert json.loads(at.text_area(key="part_3_0").value) == edited


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"kind": "tool_call", "id": "call_1",', "messages[1].parts[0]: not valid JSON"),
        ('{"kind": "tool_call", "name": "get_weather"}', "messages[1].parts[0].id: Field required"),
        ('{"kind": "tool_result", "call_id": "x"}', "a tool_result belongs in a tool message"),
    ],
)
def test_an_invalid_part_edit_shows_the_reason_and_changes_nothing(at, text, reason):
    before = session(at).state.model_dump_json()
    at.text_area(key="part_1_0").input(text).run()
    at.button(key="save_part_1_0").click().run()
    assert any(reason in e for e in errors(at)), errors(at)
    assert session(at).state.model_dump_json() == before
    assert at.text_area(key="part_1_0").value == text  # left as typed, to be corrected


def test_a_whole_message_edit(at):
    message = {"role": "assistant", "parts": [{"kind": "text", "text": "Done."}]}
    at.text_area(key="msg_3").input(json.dumps(message)).run()
    at.button(key="save_msg_3").click().run()
    assert errors(at) == []
    assert session(at).conversation.messages[3].text == "Done."


def test_deleting_the_results_shows_the_pairing_problems(at):
    at.button(key="delete_2").click().run()
    assert [m.role for m in session(at).conversation.messages] == ["user", "assistant", "assistant"]
    problems = [e for e in errors(at) if "no result" in e]
    assert len(problems) == 2 and problems[0].startswith("messages[1]: get_weather call")
    assert list(cells(at.table[0].value)["problem"]) == ["no result", "no result"]
    lint = cells(at.table[1].value)
    assert "⛔ error" in set(lint["level"])
    assert {"anthropic", "openai-chat"} <= set(lint["protocol"])
    at.button(key="history_undo").click().run()
    assert len(session(at).conversation.messages) == 4
    assert not [e for e in errors(at) if "no result" in e]


def test_inserting_a_user_message_after_the_answer(at):
    at.selectbox(key="ins_role_3").select("user")
    at.text_area(key="ins_body_3").input("And London?").run()
    at.button(key="insert_3").click().run()
    assert errors(at) == []
    last = session(at).conversation.messages[4]
    assert (last.role, last.text) == ("user", "And London?")
    assert session(at).state.next_phase == "request"


def test_an_invalid_insert_changes_nothing(at):
    before = session(at).state.model_dump_json()
    at.selectbox(key="ins_role_0").select("tool")
    at.text_area(key="ins_body_0").input("plain words").run()
    at.button(key="insert_0").click().run()
    assert any("tool_result parts" in e for e in errors(at))
    assert session(at).state.model_dump_json() == before


def test_fork_makes_a_new_current_session_and_keeps_the_old_one_reachable(at):
    main = session(at)
    at.button(key="fork_1").click().run()
    fork = session(at)
    assert fork is not main
    assert len(fork.conversation.messages) == 2 and len(main.conversation.messages) == 4
    assert fork.state.next_phase == "execution"
    branches = at.session_state.fd_branches
    assert branches == {"main": main, "fork at message 1": fork}
    assert at.selectbox(key="branch").value == "fork at message 1"
    at.button(key="delete_1").click().run()  # edits go to the fork only
    assert len(fork.conversation.messages) == 1 and len(main.conversation.messages) == 4
    at.selectbox(key="branch").select("main").run()
    assert session(at) is main
    assert json.loads(at.text_area(key="part_3_0").value)["kind"] == "text"


def test_a_long_history_shows_the_latest_messages_a_page_at_a_time(finished):
    long = finished.clone()
    for k in range(40):
        text = {"role": "user", "parts": [{"kind": "text", "text": f"message {k}"}]}
        long.insert_message(len(long.conversation.messages), text)
    app = AppTest.from_file(str(PAGE), default_timeout=60)
    app.session_state["fd_session"] = long
    app.run()
    assert not app.exception
    shown = [t.key for t in app.text_area if t.key.startswith("part_")]
    assert (shown[0], shown[-1]) == ("part_19_0", "part_43_0")
    app.number_input(key="hist_from").set_value(0).run()
    assert next(t.key for t in app.text_area if t.key.startswith("part_")) == "part_0_0"
