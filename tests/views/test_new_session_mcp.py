"""A new session's tools from an MCP server (views/new_session): the server named by a command
or a URL, refused where the host does not allow it, its chosen tools declared."""

from __future__ import annotations

import pytest

from flowdebug.errors import UsageError
from flowdebug.hosting import Refused
from flowdebug.views.new_session import NewSession, build, mcp_server
from tests.mcp_servers import SAMPLE


def test_a_command_or_a_url_names_the_server_exactly_one_of_them():
    assert mcp_server(command="python -m sample_tools.mcp_server").stdio == SAMPLE
    assert mcp_server(url=" http://localhost:8000/mcp ").url == "http://localhost:8000/mcp"
    for both_or_none in ({}, {"command": "x", "url": "http://h/mcp"}):
        with pytest.raises(UsageError, match="command \\(stdio\\) or its URL, one of the two"):
            mcp_server(**both_or_none)
    with pytest.raises(UsageError, match="MCP server command: No closing quotation"):
        mcp_server(command='python -c "x')
    with pytest.raises(UsageError, match="MCP server: String should match pattern"):
        mcp_server(url="ftp://h/mcp")


def test_a_shared_server_refuses_a_command_and_a_url_not_allowed(monkeypatch):
    monkeypatch.setenv("FLOWDEBUG_SHARED", "1")
    monkeypatch.setenv("FLOWDEBUG_ALLOWED_MCP_URLS", "https://mcp.example.com/")
    with pytest.raises(Refused, match="would start a command on the server"):
        mcp_server(command="python -m sample_tools.mcp_server")
    with pytest.raises(Refused, match="would connect to a URL the host did not allow"):
        mcp_server(url="https://elsewhere.example.org/mcp")
    assert mcp_server(url="https://mcp.example.com/mcp").url == "https://mcp.example.com/mcp"


def test_the_chosen_tools_of_the_server_are_declared_after_the_typed_ones():
    form = NewSession(
        user="Add a task to buy milk",
        mcp=mcp_server(command="python -m sample_tools.mcp_server"),
        mcp_tools=["create_task", "list_tasks"],
    )
    session = build(form)
    assert session.state.toolset.names == ["create_task", "list_tasks"]
    assert [t.name for t in session.state.conversation.tools] == ["create_task", "list_tasks"]
    everything = build(NewSession(user="hi", mcp=form.mcp))
    assert len(everything.state.toolset.names) == 8
    with pytest.raises(UsageError, match="the MCP server has no tool 'gone': list its tools"):
        build(NewSession(user="hi", mcp=form.mcp, mcp_tools=["gone"]))
