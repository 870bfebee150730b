"""The Tools page, driven by widget key: edits, the mock handler, paste import, lint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from flowdebug import protocols
from flowdebug.engine.execution.canned_handlers import FixedHandler
from flowdebug.engine.execution.handlers import PythonHandler
from tests import cases
from tests.app.markdown import cells, shown

PAGE = Path(__file__).resolve().parents[2] / "pages" / "tools.py"


@pytest.fixture
def at() -> AppTest:
    app = AppTest.from_file(str(PAGE), default_timeout=60)
    app.run()
    assert not app.exception
    return app


def toolset(at: AppTest):
    return at.session_state.fd_session.state.toolset


def state_json(at: AppTest) -> str:
    return at.session_state.fd_session.state.model_dump_json()


def errors(at: AppTest) -> list[str]:
    return [shown(e.value) for e in at.error]


def test_the_page_shows_the_default_scenarios_tool(at):
    assert at.title[0].value == "Tools"
    assert errors(at) == []
    table = cells(at.table[0].value)
    assert list(table["name"]) == ["get_weather"]
    assert list(table["handler"]) == ["python"]
    assert at.selectbox(key="tool_pick").value == "get_weather"
    assert at.text_input(key="tool_name").value == "get_weather"
    assert at.text_input(key="tool_function").value == "sample_tools.weather:get_weather"


def test_editing_the_weather_tool_changes_the_toolset_and_undo_restores_it(at):
    before = toolset(at)
    at.text_area(key="tool_description").input("Weather, made up.").run()
    at.selectbox(key="tool_handler_kind").select("fixed").run()
    at.text_area(key="tool_result").input('{"temperature": 21}').run()
    at.button(key="tool_save").click().run()
    assert errors(at) == []
    entry = toolset(at).get("get_weather")
    assert entry.tool.description == "Weather, made up."
    assert entry.handler == FixedHandler(result={"temperature": 21})
    assert entry.timeout == 1.0  # untouched fields stay
    assert at.session_state.fd_session.conversation.tools == [entry.tool]
    at.button(key="tools_undo").click().run()
    assert toolset(at) == before
    assert isinstance(toolset(at).get("get_weather").handler, PythonHandler)
    assert at.text_area(key="tool_description").value == before.entries[0].tool.description


def test_an_invalid_edit_names_the_field_and_changes_nothing(at):
    before = state_json(at)
    at.text_area(key="tool_parameters").input('{"type": "object",').run()
    at.button(key="tool_save").click().run()
    assert any("Nothing changed — parameters: not valid JSON" in e for e in errors(at))
    assert state_json(at) == before
    assert at.text_area(key="tool_parameters").value == '{"type": "object",'  # kept to fix


def test_a_code_handler_is_checked_before_saving(at):
    before = state_json(at)
    at.selectbox(key="tool_handler_kind").select("code").run()
    at.text_area(key="tool_source").input("def handler(args)\n    return 1\n").run()
    at.button(key="tool_save").click().run()
    assert any("Nothing changed — source: line 1" in e for e in errors(at))
    assert state_json(at) == before


def test_adding_and_deleting_a_tool(at):
    at.selectbox(key="tool_pick").select("➕ New tool").run()
    assert at.text_input(key="tool_name").value == ""
    at.text_input(key="tool_name").input("ping").run()
    at.text_area(key="tool_description").input("Answers pong.").run()
    at.button(key="tool_save").click().run()
    assert errors(at) == []
    assert toolset(at).names == ["get_weather", "ping"]
    assert toolset(at).get("ping").handler == FixedHandler(result="ok")
    assert at.selectbox(key="tool_pick").value == "ping"
    at.button(key="tool_delete").click().run()
    assert toolset(at).names == ["get_weather"]


def test_pasting_an_openai_chat_tools_list_adds_those_tools(at):
    tools = protocols.get("openai-chat").encode_request(cases.TASKS).value["tools"]
    at.text_area(key="paste_text").input(json.dumps(tools, indent=2)).run()
    assert any("OpenAI Chat tools list" in shown(s.value) for s in at.success)
    assert list(cells(at.table[1].value)["name"]) == ["create_task", "complete_task"]
    at.button(key="paste_import").click().run()
    assert errors(at) == []
    assert toolset(at).names == ["get_weather", "create_task", "complete_task"]
    assert toolset(at).get("create_task").handler == FixedHandler(result="ok")
    assert isinstance(toolset(at).get("get_weather").handler, PythonHandler)
    assert at.text_area(key="paste_text").value == ""
    assert [shown(m.value) for m in at.success] == ["Imported 2 tool(s)."]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('[{"type": "function", "function": ', "input: $: not valid JSON"),
        ('[{"name": "x", "input_schema": {}}, {"name": "y"}]', "input: $[1]: not a tool"),
    ],
)
def test_a_bad_paste_shows_the_error_and_changes_nothing(at, text, words):
    before = state_json(at)
    at.text_area(key="paste_text").input(text).run()
    assert any(words in e for e in errors(at))
    assert not [b for b in at.button if b.key == "paste_import"]
    assert state_json(at) == before


def test_lint_findings_appear_beside_each_tool(at):
    at.text_area(key="paste_text").input('[{"name": "camera.snapshot", "inputSchema": {}}]').run()
    at.button(key="paste_import").click().run()
    lines = " ".join(m.value for m in at.markdown)
    assert "description_missing" in lines
    assert "tool_name_invalid" in lines
    assert list(cells(at.table[0].value)["name"]) == ["get_weather", "camera.snapshot"]
    at.multiselect(key="protocols").set_value(["gemini"]).run()
    lines = " ".join(m.value for m in at.markdown)
    assert "tool_name_invalid" not in lines  # Gemini accepts the dotted name


def test_undo_with_nothing_to_undo_says_so(at):
    at.button(key="tools_undo").click().run()
    assert errors(at) == ["Nothing changed — nothing to undo"]


def test_changing_the_handler_kind_and_saving_works_after_a_rerun():
    from streamlit.testing.v1 import AppTest

    app = AppTest.from_file(str(PAGE), default_timeout=60)
    app.run()
    app.selectbox(key="tool_handler_kind").set_value("fixed").run()
    app.button(key="tool_save").click().run()
    assert not app.exception
    entry = app.session_state.fd_session.state.toolset.get("get_weather")
    assert entry.handler.kind == "fixed"
