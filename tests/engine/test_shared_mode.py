"""Shared mode (FLOWDEBUG_SHARED=1): nothing a person supplies runs code or commands on the
server, at any entrance, and every entrance says so with the same message."""

from __future__ import annotations

import json

import pytest

from flowdebug import hosting
from flowdebug.cli.main import main
from flowdebug.engine.execution.handler_io import ToolContext
from flowdebug.engine.execution.handlers import (
    CodeHandler,
    McpHandler,
    PythonHandler,
    ToolEntry,
    Toolset,
    refuse_unsafe,
)
from flowdebug.engine.execution.runtime import Policy, Runtime
from flowdebug.engine.session import scenarios
from flowdebug.engine.session.debugger import Session
from flowdebug.exchange.exports import export
from flowdebug.exchange.imports import import_session
from flowdebug.exchange.tool_imports import import_tools, parse_tools
from flowdebug.exchange.tools import ToolForm, ToolFormError, apply_form
from flowdebug.hosting import Refused
from flowdebug.mcp.client import McpClient
from flowdebug.mcp.spec import McpServerSpec
from flowdebug.model import Tool
from flowdebug.store.sessions import open_store

MESSAGE = "refused on this shared server (FLOWDEBUG_SHARED=1)"
ECHO = "def handler(args):\n    return {'echo': args}\n"
UNSAFE = {
    "code": {"kind": "code", "source": ECHO},
    "python": {"kind": "python", "function": "subprocess:run"},
    "mcp_stdio": {"kind": "mcp", "server": {"stdio": ["sh", "-c", "id"]}, "tool": "x"},
}
WEATHER = "sample_tools.weather:get_weather"


@pytest.fixture
def shared(monkeypatch):
    monkeypatch.setenv(hosting.SHARED_ENV, "1")
    monkeypatch.delenv(hosting.ALLOWED_MCP_URLS_ENV, raising=False)


@pytest.fixture
def private(monkeypatch):
    monkeypatch.delenv(hosting.SHARED_ENV, raising=False)


def entry(handler: dict) -> dict:
    return {"tool": {"name": "t", "parameters": {"type": "object"}}, "handler": handler}


def scenario_file(tmp_path, **extra) -> str:
    data = {"name": "s", "title": "S", "user": "hi", "turns": [{"text": "done"}], **extra}
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(data))
    return str(path)


# -- one message, from one function ---------------------------------------------------------------


@pytest.mark.parametrize("kind", UNSAFE)
def test_an_unsafe_handler_cannot_be_made_on_a_shared_server(kind, shared):
    with pytest.raises(Refused, match=r"refused on this shared server") as caught:
        ToolEntry.model_validate(entry(UNSAFE[kind]))
    assert "fixed, template or rules" in str(caught.value)


@pytest.mark.parametrize("kind", UNSAFE)
def test_unsafe_handlers_are_allowed_on_a_private_server(kind, private):
    assert ToolEntry.model_validate(entry(UNSAFE[kind])).handler.kind == UNSAFE[kind]["kind"]


def test_only_the_shipped_sample_functions_pass_as_python_handlers(shared):
    assert ToolEntry.model_validate(entry({"kind": "python", "function": WEATHER}))
    for ref in ("sample_tools.mcp_server:main", "sample_tools.weather:os.system", "os:system"):
        with pytest.raises(Refused, match=MESSAGE.replace("(", r"\(").replace(")", r"\)")):
            ToolEntry.model_validate(entry({"kind": "python", "function": ref}))
    assert Session.from_scenario("weather").state.toolset.names  # the samples still load


def test_refuse_unsafe_names_the_tool(private, monkeypatch):
    toolset = Toolset.model_validate({"entries": [entry(UNSAFE["code"])]})
    refuse_unsafe(toolset)
    monkeypatch.setenv(hosting.SHARED_ENV, "1")
    with pytest.raises(Refused, match="tool 't': a code handler would run Python code"):
        refuse_unsafe(toolset)


# -- every entrance -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "field"), [("code", "source"), ("python", "function")], ids=["code", "python"]
)
def test_the_tools_page_form_refuses_unsafe_kinds(kind, field, shared):
    value = ECHO if kind == "code" else "subprocess:run"
    form = ToolForm(name="t", handler_kind=kind, **{field: value})
    with pytest.raises(ToolFormError, match=r"refused on this shared server") as caught:
        apply_form(Toolset(), form)
    assert caught.value.field == "kind"
    ok = ToolForm(name="t", handler_kind="python", function=WEATHER)
    assert apply_form(Toolset(), ok).names == ["t"]


def test_the_tools_page_form_allows_code_on_a_private_server(private):
    form = ToolForm(name="t", handler_kind="code", source=ECHO)
    assert apply_form(Toolset(), form).entries[0].handler.kind == "code"


def test_pasted_tools_get_fixed_handlers_on_a_shared_server(shared):
    pasted = parse_tools('[{"name": "run", "input_schema": {"type": "object"}}]')
    toolset = import_tools(Toolset(), pasted.tools)
    assert [e.handler.kind for e in toolset.entries] == ["fixed"]


def unsafe_trace(kind: str) -> str:
    session = Session.from_scenario("weather")
    unsafe = ToolEntry.model_validate(entry(UNSAFE[kind]))
    session.set_toolset(session.state.toolset.with_entry(unsafe))
    return export(session.state, "trace", "anthropic").data


@pytest.mark.parametrize("kind", UNSAFE)
def test_importing_a_trace_with_an_unsafe_handler_is_refused(kind, monkeypatch, tmp_path):
    monkeypatch.delenv(hosting.SHARED_ENV, raising=False)
    trace = unsafe_trace(kind)
    assert import_session(trace).state.toolset.get("t").handler.kind == UNSAFE[kind]["kind"]
    monkeypatch.setenv(hosting.SHARED_ENV, "1")
    with open_store(str(tmp_path / "s.db")) as store:
        with pytest.raises(Refused, match="refused on this shared server"):
            import_session(trace, store=store)
        assert store.list() == []  # nothing half done


@pytest.mark.parametrize("kind", UNSAFE)
def test_reopening_a_stored_session_with_an_unsafe_handler_is_refused(kind, monkeypatch, tmp_path):
    monkeypatch.delenv(hosting.SHARED_ENV, raising=False)
    state = import_session(unsafe_trace(kind)).state
    with open_store(str(tmp_path / "s.db")) as store:
        store.save(state)
        assert store.load(state.id).toolset.get("t") is not None
        monkeypatch.setenv(hosting.SHARED_ENV, "1")
        with pytest.raises(Refused, match="refused on this shared server"):
            store.load(state.id)


@pytest.mark.parametrize("kind", UNSAFE)
def test_a_scenario_with_an_unsafe_tool_does_not_load(kind, tmp_path, monkeypatch):
    path = scenario_file(tmp_path, tools=[entry(UNSAFE[kind])])
    monkeypatch.delenv(hosting.SHARED_ENV, raising=False)
    assert scenarios.load(path).tools[0].handler.kind == UNSAFE[kind]["kind"]
    monkeypatch.setenv(hosting.SHARED_ENV, "1")
    with pytest.raises(Refused, match="refused on this shared server"):
        scenarios.load(path)


def test_a_scenario_with_a_stdio_mcp_server_does_not_load(tmp_path, shared):
    path = scenario_file(tmp_path, mcp={"stdio": ["sh", "-c", "touch /tmp/pwned"]})
    with pytest.raises(Refused) as caught:
        scenarios.load(path)
    assert "the MCP server (stdio: sh -c 'touch /tmp/pwned') would start a command" in str(
        caught.value
    )
    with pytest.raises(Refused, match="would start a command on the server"):
        scenarios.load("mcp_weather")
    assert "mcp_weather" not in scenarios.names()  # the lists offer only what can run
    assert "weather" in scenarios.names()


def test_flowdebug_run_refuses_an_unsafe_scenario_with_exit_2(tmp_path, shared, capsys):
    path = scenario_file(tmp_path, tools=[entry(UNSAFE["python"])])
    assert main(["run", path]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and MESSAGE in err and "'subprocess:run'" in err
    assert main(["run", "--list"]) == 0
    assert "mcp_weather" not in capsys.readouterr().out


def test_flowdebug_run_runs_it_on_a_private_server(tmp_path, private, capsys):
    path = scenario_file(tmp_path, tools=[entry({"kind": "fixed", "result": "ok"})])
    assert main(["run", path]) == 0


def test_flowdebug_mcp_stdio_is_refused_with_exit_2(shared, capsys):
    code = main(["mcp", "tools", "--stdio", "python -m sample_tools.mcp_server"])
    assert code == 2
    assert MESSAGE in capsys.readouterr().err


# -- MCP over HTTP: the host's allowlist ---------------------------------------------------------


def test_mcp_urls_must_be_on_the_hosts_allowlist(shared, monkeypatch):
    with pytest.raises(Refused, match="connect to a URL the host did not allow"):
        McpServerSpec(url="http://127.0.0.1:8765/mcp")
    monkeypatch.setenv(hosting.ALLOWED_MCP_URLS_ENV, "http://127.0.0.1:8765/mcp, https://x.test")
    assert McpServerSpec(url="http://127.0.0.1:8765/mcp").url
    assert McpServerSpec(url="https://x.test/any/path").url
    for bad in (
        "http://127.0.0.1:8766/mcp",  # another port
        "http://127.0.0.1:8765/mcpx",  # not below the allowed path
        "https://x.test.evil.test/",  # another host
        "https://user:pw@x.test/",  # credentials smuggled in
        "http://x.test/",  # another scheme
    ):
        with pytest.raises(Refused, match=r"FLOWDEBUG_ALLOWED_MCP_URLS: http://127\.0\.0\.1"):
            McpServerSpec(url=bad)


def test_mcp_urls_are_free_on_a_private_server(private):
    assert McpServerSpec(url="http://127.0.0.1:9/mcp").url


# -- what was made before the server became shared still does not run ----------------------------


def test_handlers_made_earlier_refuse_to_run_on_a_shared_server(private, monkeypatch):
    python = PythonHandler(function="os:getcwd")
    code = CodeHandler(source=ECHO)
    mcp = McpHandler(server=McpServerSpec(stdio=["sh", "-c", "id"]), tool="x")
    monkeypatch.setenv(hosting.SHARED_ENV, "1")
    for handler in (python, code, mcp):
        outcome = handler.run({}, ToolContext())
        assert (outcome.is_error, outcome.error_type) == (True, "disabled")
        assert MESSAGE in outcome.content
    with pytest.raises(Refused, match=MESSAGE.replace("(", r"\(").replace(")", r"\)")):
        McpClient(mcp.server)


def test_a_session_made_earlier_steps_with_the_refusal_as_the_result(private, monkeypatch):
    session = Session.from_scenario("weather")
    unsafe = ToolEntry(tool=Tool(name="get_weather"), handler=PythonHandler(function="os:getcwd"))
    session.set_toolset(session.state.toolset.with_entry(unsafe))
    monkeypatch.setenv(hosting.SHARED_ENV, "1")
    while session.state.next_phase != "continuation":
        session.step()
    results = session.state.conversation.messages[-1].tool_results
    assert [r.error_type for r in results] == ["disabled", "disabled"]
    assert all(MESSAGE in r.text for r in results)


# -- limits from data are clamped to the host's ---------------------------------------------------


def test_timeouts_and_result_caps_from_data_are_clamped(monkeypatch):
    monkeypatch.setenv(hosting.MAX_TIMEOUT_ENV, "0.3")
    monkeypatch.setenv(hosting.MAX_RESULT_ENV, "50")
    slow = ToolEntry.model_validate(
        {
            "tool": {"name": "slow", "parameters": {"type": "object"}},
            "handler": {"kind": "fixed", "result": "x" * 500, "delay": 5},
            "timeout": 100000,
        }
    )
    big = ToolEntry.model_validate(
        {"tool": {"name": "big"}, "handler": {"kind": "fixed", "result": "y" * 500}}
    )
    runtime = Runtime(Toolset(entries=[slow, big]), Policy(max_result_chars=10**9))
    from flowdebug.model import ToolCall

    batch = runtime.execute([ToolCall(id="1", name="slow"), ToolCall(id="2", name="big")])
    slow_result, big_result = (e.result for e in batch.executions)
    assert (slow_result.error_type, slow_result.text) == ("timeout", "timeout after 0.3s")
    assert big_result.text.startswith("y" * 50 + "\n[truncated: 500 characters, limit 50]")


def test_code_memory_null_means_the_hosts_ceiling():
    assert hosting.clamp_memory_mb(None) == hosting.limits().memory_mb
    assert hosting.clamp_memory_mb(10**6) == hosting.limits().memory_mb
    assert hosting.clamp_memory_mb(64) == 64


def test_the_tool_editor_offers_no_code_kind_where_code_is_refused(monkeypatch):
    from flowdebug.exchange.tools import HANDLER_KINDS, handler_kinds

    monkeypatch.delenv(hosting.SHARED_ENV, raising=False)
    monkeypatch.delenv(hosting.DISABLE_CODE_ENV, raising=False)
    assert handler_kinds() == HANDLER_KINDS
    monkeypatch.setenv(hosting.SHARED_ENV, "1")
    assert "code" not in handler_kinds() and "python" in handler_kinds()
