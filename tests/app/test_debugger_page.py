"""AppTest: the Debugger page's buttons, scenario select, approvals and graphs, by key."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.markdown import shown

PAGES = Path(__file__).resolve().parents[2] / "pages"
APP = Path(__file__).resolve().parents[2] / "app.py"


@pytest.fixture
def at() -> AppTest:
    app = AppTest.from_file(str(PAGES / "debugger.py"), default_timeout=60)
    app.run()
    assert not app.exception
    return app


def open_layout(app: AppTest) -> AppTest:
    """The Graph layout panel opened (its widgets are drawn only while it is open)."""
    app.session_state["layout_open"] = True
    return app.run()


def session(app: AppTest):
    return app.session_state.fd_session


def test_page_opens_on_the_weather_scenario_ready_to_step(at):
    assert at.selectbox(key="scenario").value == "weather"
    s = session(at)
    assert s.state.step == 0 and s.state.next_phase == "declaration"
    assert [b.key for b in at.button][:5] == ["step", "step_turn", "run", "undo", "reset"]
    open_layout(at).radio(key="graph_layout").set_value("separate").run()
    assert len(at.get("graphviz_chart")) == 6  # one per protocol


def where(app: AppTest) -> str:
    """The control bar's line of where the cycle stands (the label of the story's popover)."""
    return " ".join(b.proto.popover.label for b in app.get("popover"))


def test_the_layout_settings_stay_while_their_panel_is_closed(at):
    open_layout(at).radio(key="graph_layout").set_value("separate").run()
    at.checkbox(key="show_all").check().run()
    at.session_state["layout_open"] = False
    at.run()
    assert not [r for r in at.radio if r.key == "graph_layout"]  # closed: not drawn
    at.button(key="step").click().run()
    at.button(key="step").click().run()
    assert len(at.get("graphviz_chart")) == 6  # still separate
    assert at.session_state["show_all"] is True
    assert open_layout(at).radio(key="graph_layout").value == "separate"
    assert at.checkbox(key="show_all").value is True


def test_step_runs_one_phase_and_names_it(at):
    at.button(key="step").click().run()
    s = session(at)
    assert s.state.step == 1 and s.state.next_phase == "request"
    assert "**1 · Declaration** · step 1 · round 1 · next: 2 · Request" in where(at)
    at.button(key="step").click().run()
    assert session(at).state.next_phase == "execution"
    assert "**2 · Request** · step 2" in where(at)


def test_a_step_that_runs_no_tool_runs_in_the_page_and_one_that_does_in_a_job(at, monkeypatch):
    """Declaring, a scripted turn and sending the results back run in the page's thread (a
    background job waits its turn for the interpreter twice under load); executing the tools
    runs in a job, with progress and Cancel."""
    import ui.actions

    jobs = []
    real = ui.actions.Job

    def counted(*args, **kwargs):
        jobs.append(session(at).state.next_phase)
        return real(*args, **kwargs)

    monkeypatch.setattr(ui.actions, "Job", counted)
    for _ in range(5):
        at.button(key="step").click().run()
        assert not at.exception
    assert session(at).state.step == 5 and session(at).done
    assert jobs == ["execution"]
    assert session(at).conversation.messages[-1].text.startswith("Paris is 18 degrees C")


def test_a_local_step_that_fails_says_why_and_changes_nothing(at):
    from flowdebug.players import ManualPlayer

    at.button(key="step").click().run()  # declared: the model's turn is next
    s = session(at)
    s.player = ManualPlayer()  # nothing written for the model yet: the step is refused
    before = s.state.model_dump_json()
    at.button(key="step").click().run()
    assert not at.exception
    assert "write the model's turn first" in " ".join(shown(e.value) for e in at.error)
    assert session(at).state.model_dump_json() == before


def test_the_story_is_told_only_while_its_panel_is_open(at):
    at.button(key="step").click().run()
    assert not any("1 · Declaration" in m.value for m in at.markdown)  # closed: not told
    at.session_state["fd_story_open"] = True
    at.run()
    assert any("1 · Declaration" in m.value for m in at.markdown)
    assert any("sends the conversation and every tool" in c.value for c in at.caption)


def test_step_turn_run_undo_and_reset(at):
    at.button(key="step_turn").click().run()
    s = session(at)
    assert s.state.next_phase == "request" and s.state.round == 2
    assert [e.kind for e in s.state.events].count("result") == 2
    at.button(key="run").click().run()
    assert session(at).state.status == "finished"
    assert "the cycle is done" in at.info[0].value
    at.button(key="undo").click().run()
    assert session(at).state.status == "ready" and session(at).state.step == 4
    at.button(key="reset").click().run()
    assert session(at).state.step == 0


def test_graph_dot_shows_the_timeout_in_red_after_run(at):
    open_layout(at).radio(key="graph_layout").set_value("separate").run()
    at.button(key="run").click().run()
    dots = [g.proto.spec for g in at.get("graphviz_chart")]
    assert all("#d11f1f" in d for d in dots)
    assert any("tool_use call_1 get_weather" in d.replace("<BR/>", " ") for d in dots)
    assert any("functionCall get_weather id=call_2" in d.replace("<BR/>", " ") for d in dots)


def test_choosing_a_scenario_loads_it(at):
    at.selectbox(key="scenario").select("tasks").run()
    assert session(at).state.scenario == "tasks"
    assert session(at).state.toolset.names[0] == "create_task"


def test_destructive_call_is_approved_from_the_page(at):
    at.selectbox(key="scenario").select("destructive").run()
    at.button(key="run").click().run()
    assert session(at).state.status == "awaiting_approval"
    at.button(key="approve_call_2").click().run()
    at.button(key="run").click().run()
    s = session(at)
    assert s.state.status == "finished"
    assert s.state.tool_state["tasks"]["items"] == {}


def test_undo_is_disabled_with_a_reason_until_there_is_something_to_undo(at):
    undo = at.button(key="undo")
    assert undo.disabled and "Nothing to undo" in undo.proto.help
    at.button(key="step").click().run()
    assert not at.button(key="undo").disabled
    at.button(key="undo").click().run()
    assert session(at).state.step == 0 and at.button(key="undo").disabled


def test_the_step_that_ends_the_cycle_disables_stepping_at_once(at):
    for _ in range(4):
        at.button(key="step").click().run()
    assert not at.button(key="step").disabled
    at.button(key="step").click().run()  # the final answer
    assert session(at).done
    assert all(at.button(key=k).disabled for k in ("step", "step_turn", "run"))


def test_breakpoint_stops_run_before_the_tool(at):
    at.selectbox(key="scenario").select("tasks").run()

    def drawn() -> bool:
        return any(m.key == "bp_tools" for m in at.multiselect)

    assert not drawn()  # drawn only while their panel is open
    at.session_state["bp_open"] = True
    at.run()
    at.multiselect(key="bp_tools").select("complete_task").run()
    at.session_state["bp_open"] = False  # closed again: the breakpoint stays
    at.run()
    assert not drawn()
    at.session_state["bp_open"] = True
    at.run()
    assert at.multiselect(key="bp_tools").value == ["complete_task"]  # as the session has it
    at.button(key="run").click().run()
    s = session(at)
    assert s.state.status_text == "breakpoint: before complete_task runs"
    assert s.conversation.messages[-1].tool_calls[0].name == "complete_task"


def test_protocol_choice_limits_the_graphs(at):
    open_layout(at).radio(key="graph_layout").set_value("separate").run()
    at.multiselect(key="protocols").set_value(["anthropic", "mcp"]).run()
    dots = [g.proto.spec for g in at.get("graphviz_chart")]
    assert len(dots) == 2 and "MCP server" in dots[1]
    at.multiselect(key="protocols").set_value([]).run()
    assert len(at.get("graphviz_chart")) == 6
    assert any("No protocol chosen" in c.value for c in at.sidebar.caption)


def test_two_browser_sessions_do_not_share_state():
    one = AppTest.from_file(str(PAGES / "debugger.py"), default_timeout=60)
    two = AppTest.from_file(str(PAGES / "debugger.py"), default_timeout=60)
    one.run()
    two.run()
    one.button(key="run").click().run()
    assert session(one).state.status == "finished"
    assert session(two).state.step == 0


def test_app_navigation_runs_every_page():
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.run()
    assert not app.exception
    for page in [
        "tools.py",
        "history.py",
        "protocols.py",
        "failures.py",
        "encodings.py",
        "debugger.py",
    ]:
        app.switch_page(f"pages/{page}").run()
        assert not app.exception, page


def test_manual_player_plays_the_turn_the_person_writes(at):
    at.radio(key="player_kind").set_value("manual").run()
    at.button(key="apply_player").click().run()
    at.button(key="step").click().run()  # declaration
    turn = (
        '{"role": "assistant", "parts": [{"kind": "tool_call", "id": "m1", '
        '"name": "get_weather", "arguments": {"location": "London"}}]}'
    )
    at.text_area(key="manual_turn").set_value(turn).run()
    at.button(key="manual_queue").click().run()
    at.button(key="step").click().run()
    call = session(at).conversation.messages[-1].tool_calls[0]
    assert (call.id, call.arguments) == ("m1", {"location": "London"})


def test_live_player_through_the_emulator_records_the_wire_and_never_the_key(at):
    from flowdebug.emulator.server import Emulator

    key = "sk-flowdebug-test-SECRET-123"
    with Emulator(scenario="weather") as emu:
        at.radio(key="player_kind").set_value("live").run()
        at.selectbox(key="live_protocol").set_value("anthropic").run()
        at.text_input(key="live_base_url").set_value(emu.base_url("anthropic")).run()
        at.text_input(key="live_key").set_value(key).run()
        at.button(key="apply_player").click().run()
        at.button(key="run").click().run()
        s = session(at)
        assert s.state.status == "finished", s.state.status_text
        assert len(s.state.exchanges) == 2
        assert s.state.exchanges[0]["request"]["messages"][0]["content"] == (
            "Weather in Paris and Tokyo?"
        )
        assert key not in s.state.model_dump_json()


def test_run_edited_with_bad_json_says_why_and_decides_nothing(at):
    at.selectbox(key="scenario").select("destructive").run()
    at.button(key="run").click().run()
    at.text_area(key="args_call_2").set_value('{"task_id": ').run()
    at.button(key="edit_call_2").click().run()
    assert "not valid JSON" in at.error[0].value
    assert session(at).state.decisions == {}


def test_run_edited_warns_before_it_sends_arguments_that_break_the_schema(at):
    at.selectbox(key="scenario").select("destructive").run()
    at.button(key="run").click().run()
    assert not at.warning or "break" not in at.warning[-1].value
    at.text_area(key="args_call_2").set_value('{"task_id": 7}').run()
    warning = next(
        shown(w.value) for w in at.warning if "break delete_task's schema" in shown(w.value)
    )
    assert "arguments.task_id: 7 is not of type 'string'" in warning
    at.button(key="edit_call_2").click().run()  # allowed: the refusal is worth seeing
    at.button(key="step").click().run()
    [result] = session(at).conversation.messages[-1].tool_results
    assert (result.is_error, result.error_type) == (True, "validation")


def test_page_follows_the_current_step_and_takes_clicker_keys(at):
    at.button(key="step").click().run()
    scripts = [h.proto for h in at.get("html") if "__fdStep" in h.proto.body]
    assert all(s.unsafe_allow_javascript for s in scripts)
    # Installed once by the page (outside the Step's fragment): the keys and the follow.
    [install] = [s.body for s in scripts if "window.__fdFollowStep = (step)" in s.body]
    assert all(k in install for k in ("PageDown", "ArrowRight", "PageUp", "ArrowLeft"))
    # What a Step sends: the aligned view's own script makes the call, once the view is filled.
    [view] = [s.body for s in scripts if ".fd-aligned-scroll" in s.body]
    call = "window.__fdStepNow = 1; window.__fdFollowStep && window.__fdFollowStep(1);"
    assert view.count(call) == 1 and view.index(call) > view.index("box.innerHTML = svg")
    assert len(scripts) == 2
    # The separate graphs have no script of their own: the call comes as a line of its own.
    at.session_state["graph_layout"] = "separate"
    at.button(key="step").click().run()
    calls = [h.proto.body for h in at.get("html") if "__fdFollowStep(2)" in h.proto.body]
    assert calls == [
        "<script>window.__fdStepNow = 2; window.__fdFollowStep && "
        "window.__fdFollowStep(2);</script>"
    ]


def test_the_history_switch_sits_above_the_bar_and_the_history_follows_each_step(at):
    # The switch is the page's (outside the Step's fragment); the messages are the fragment's.
    assert not at.subheader
    at.toggle(key="show_history").set_value(True).run()
    for _ in range(3):
        at.button(key="step").click().run()
        n = len(session(at).conversation.messages)
        assert [h.value for h in at.subheader] == [f"Message history: {n} messages"]
        assert f"**{n - 1} · {session(at).conversation.messages[-1].role}**" in [
            m.value for m in at.markdown
        ]
    at.toggle(key="show_history").set_value(False).run()
    assert not at.subheader
