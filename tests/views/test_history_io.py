"""The History page's helpers: the insert form, part labels, pairing rows, branches."""

from __future__ import annotations

import json

import pytest

from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.edits import EditError
from flowdebug.model import Text
from flowdebug.views.debugger import pairing
from flowdebug.views.history import (
    add_fork,
    message_from_form,
    pair_problems,
    pair_rows,
    part_json,
    part_summary,
    register,
    revision,
)
from tests import cases


def test_plain_text_becomes_one_text_part():
    assert message_from_form("user", "Now London?") == {
        "role": "user",
        "parts": [{"kind": "text", "text": "Now London?"}],
    }


def test_json_body_is_a_list_of_parts_or_one_part():
    part = {"kind": "tool_result", "call_id": "c1", "content": "ok"}
    assert message_from_form("tool", json.dumps([part]))["parts"] == [part]
    assert message_from_form("tool", json.dumps(part))["parts"] == [part]


@pytest.mark.parametrize(
    ("role", "body", "words"),
    [
        ("user", "   ", "empty"),
        ("user", "[{", "not valid JSON"),
        ("tool", "fine", "tool_result parts"),
        ("robot", "hi", "role"),
    ],
)
def test_insert_form_refuses_with_a_reason(role, body, words):
    with pytest.raises(EditError, match=words):
        message_from_form(role, body)


def test_the_session_validates_what_the_form_builds():
    s = Session.from_scenario("weather")
    before = s.state.model_dump_json()
    with pytest.raises(EditError, match="tool_result belongs in a tool message"):
        s.insert_message(1, message_from_form("user", '[{"kind": "tool_result", "call_id": "x"}]'))
    assert s.state.model_dump_json() == before


def test_part_json_and_summary_say_what_a_part_is():
    assert json.loads(part_json(cases.PARIS)) == cases.PARIS.model_dump(
        mode="json", exclude_none=True
    )
    assert (
        part_summary(cases.PARIS, width=200)
        == f'get_weather(location="Paris", unit="c") · {cases.PARIS.id}'
    )
    assert part_summary(cases.TOKYO_RESULT).startswith(f"{cases.TOKYO_RESULT.call_id} → error")
    assert part_summary(Text(text="x" * 200), width=10) == "x" * 9 + "…"


def test_pairing_rows_and_problems_after_a_result_is_dropped():
    conv = cases.WEATHER_COMPLETE
    assert [r["problem"] for r in pair_rows(pairing(conv))] == ["", ""]
    dropped = conv.model_copy(update={"messages": [m for m in conv.messages if m.role != "tool"]})
    rows = pair_rows(pairing(dropped))
    assert [(r["call message"], r["result message"], r["problem"]) for r in rows] == [
        (1, None, "no result"),
        (1, None, "no result"),
    ]
    assert pair_problems(pairing(dropped)) == [
        f"messages[1]: get_weather call {cases.PARIS.id}: no result",
        f"messages[1]: get_weather call {cases.TOKYO.id}: no result",
    ]


def test_an_orphan_result_is_reported_where_it_is():
    conv = cases.WEATHER_COMPLETE
    orphan = conv.model_copy(update={"messages": [m for m in conv.messages if m.tool_calls == []]})
    problems = pair_problems(pairing(orphan))
    assert problems[0].startswith("messages[1]: result for ")
    assert problems[0].endswith("no call has this id")


def test_forks_keep_every_branch_reachable_by_name():
    main = Session.from_scenario("weather")
    main.insert_message(1, {"role": "assistant", "parts": [{"kind": "text", "text": "hi"}]})
    branches: dict[str, Session] = {}
    name, fork = add_fork(branches, main, 0)
    assert name == "fork at message 0"
    assert branches == {"main": main, name: fork}
    assert len(fork.conversation.messages) == 1 and len(main.conversation.messages) == 2
    again, _ = add_fork(branches, main, 0)
    assert again == "fork at message 0 (2)"
    assert register(branches, fork) == name
    other = Session.from_scenario("weather")
    assert register(branches, other) == "session"


def test_revision_changes_with_the_history_and_comes_back_on_undo():
    s = Session.from_scenario("weather")
    first = revision(s)
    s.edit_part(0, 0, {"kind": "text", "text": "changed"})
    assert revision(s) != first
    s.undo()
    assert revision(s) == first


def test_hosted_parts_are_summed_up_as_run_by_the_vendor_and_belong_to_the_model():
    from flowdebug.engine.session.edits import EditError, parse_message
    from flowdebug.model import HostedCall, HostedResult
    from flowdebug.views.history import part_summary

    call = HostedCall(id="ws_1", name="web_search", arguments={"query": "Paris"})
    assert part_summary(call) == 'run by the vendor: web_search(query="Paris") · ws_1'
    answer = HostedResult(call_id="ws_1", content="no results", is_error=True)
    assert part_summary(answer) == "ws_1 → vendor's answer: error: no results"
    with pytest.raises(EditError, match="hosted_call belongs in an assistant message"):
        parse_message({"role": "user", "parts": [call.model_dump()]}, "messages[0]")
