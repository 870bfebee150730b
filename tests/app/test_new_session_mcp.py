"""AppTest: a new session's tools from an MCP server (issue 30 item 1), listed and chosen in the
New session form before it is created, where the host allows it (flowdebug/hosting.py)."""

from __future__ import annotations

from flowdebug.engine.execution.handlers import McpHandler
from flowdebug.model import ToolCall
from tests.app.markdown import shown
from tests.app.opening import page

COMMAND = "python -m sample_tools.mcp_server"


def beside(app) -> list[str]:
    return [shown(m.value) for m in [*app.success, *app.error]]


def test_an_mcp_servers_tools_are_listed_chosen_and_called_by_the_offline_model():
    app = page("sessions.py")
    app.text_input(key="new_mcp_stdio").input(COMMAND)
    app.button(key="new_mcp_list").click().run()
    assert not app.exception
    listed = app.multiselect(key="new_mcp_pick")
    assert "get_weather" in listed.options and "create_task" in listed.options
    assert listed.value == listed.options  # all of them until some are left out
    assert any(
        m.startswith("8 tool(s) from stdio: python -m sample_tools.mcp_server") for m in beside(app)
    )
    listed.set_value(["get_weather", "create_task"])
    app.number_input(key="new_tool_count").set_value(0)
    app.text_area(key="new_user").input("What is the weather in Paris?")
    app.button(key="new_create").click().run()
    assert not app.exception
    state = app.session_state.fd_session.state
    assert state.toolset.names == ["get_weather", "create_task"]
    assert [t.name for t in state.conversation.tools] == ["get_weather", "create_task"]
    handler = state.toolset.get("get_weather").handler
    assert isinstance(handler, McpHandler) and handler.server.stdio == COMMAND.split()
    dbg = page("debugger.py", session=state.id)
    dbg.button(key="step_turn").click().run()
    assert not dbg.exception
    after = dbg.session_state.fd_session.state
    call = next(p for p in after.conversation.messages[1].parts if isinstance(p, ToolCall))
    assert (call.name, call.arguments.get("location")) == ("get_weather", "Paris")
    result = after.conversation.messages[2].parts[0]
    assert not result.is_error and "Paris" in str(result.content)  # the server answered
    dbg.session_state.fd_session.release()


def test_a_server_that_cannot_be_listed_says_why_beside_the_form_and_lists_nothing():
    app = page("sessions.py")
    app.text_input(key="new_mcp_stdio").input("python -c 'raise SystemExit(3)'")
    app.button(key="new_mcp_list").click().run()
    assert not app.exception
    assert any(m.startswith("Not listed: ") for m in beside(app))
    assert "fd_new_mcp" not in app.session_state  # nothing to choose from


def test_a_shared_server_starts_no_command_and_reaches_only_the_urls_the_host_allows(monkeypatch):
    monkeypatch.setenv("FLOWDEBUG_SHARED", "1")
    monkeypatch.setenv("FLOWDEBUG_ALLOWED_MCP_URLS", "https://mcp.example.com/")
    app = page("sessions.py")
    assert app.text_input(key="new_mcp_stdio").disabled
    app.text_input(key="new_mcp_url").input("https://elsewhere.example.org/mcp")
    app.button(key="new_mcp_list").click().run()
    [said] = [m for m in beside(app) if m.startswith("Not listed: ")]
    assert "would connect to a URL the host did not allow" in said
    assert "FLOWDEBUG_ALLOWED_MCP_URLS: https://mcp.example.com/" in said
    assert "fd_new_mcp" not in app.session_state
