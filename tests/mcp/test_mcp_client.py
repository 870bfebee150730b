"""The MCP client (stdio and streamable HTTP), the mcp handler kind, the trace's MCP lane and
the bridge report, against the real sample server."""

from __future__ import annotations

import threading

import pytest

from flowdebug import protocols
from flowdebug.engine.execution.handlers import HANDLER, McpHandler, ToolEntry, Toolset
from flowdebug.engine.execution.mcp_tools import toolset_from_mcp
from flowdebug.engine.execution.runtime import Execution, Policy, Runtime
from flowdebug.engine.session import scenarios
from flowdebug.engine.tracing.trace import TraceEvent, sequence
from flowdebug.mcp.bridge import mcp_bridge_report, tools_part
from flowdebug.mcp.client import McpClient, McpError, close_all
from flowdebug.mcp.spec import McpServerSpec
from flowdebug.model import Message, Tool, ToolCall
from tests.mcp_servers import FAULTY_STDIO, SAMPLE_STDIO, http_server


@pytest.fixture(scope="module")
def faulty():
    with McpClient(FAULTY_STDIO, timeout=5) as client:
        client.list_tools()
        yield client


@pytest.fixture(scope="module", autouse=True)
def _shared_clients():
    yield
    close_all()


def methods(transcript: list[dict]) -> list[tuple[str, str]]:
    return [
        (e["dir"], e["msg"].get("method") or ("error" if "error" in e["msg"] else "result"))
        for e in transcript
    ]


# --- the client -----------------------------------------------------------------------------


def test_transcript_records_the_real_json_rpc_messages_in_wire_order():
    with McpClient(SAMPLE_STDIO) as client:
        client.list_tools()
        call = client.call_tool("get_weather", {"location": "Paris"}, call_id="toolu_1")
        transcript = client.transcript
    c, s = "client->server", "server->client"
    assert methods(transcript) == [
        (c, "initialize"),
        (s, "result"),
        (c, "notifications/initialized"),
        (c, "tools/list"),
        (s, "result"),
        (c, "tools/call"),
        (s, "result"),
    ]
    times = [e["t_ms"] for e in transcript]
    assert times == sorted(times)
    assert call.messages == transcript[-2:]
    assert call.request_id == transcript[-2]["msg"]["id"] == transcript[-1]["msg"]["id"]
    assert call.result.call_id == "toolu_1"
    # The record is a transcript the MCP codec reads: the declarations, the call, the result.
    conv = protocols.get("mcp").decode_request(transcript).value
    assert [t.name for t in conv.tools][:2] == ["get_weather", "weather.map"]
    assert conv.messages[-1].tool_results[0].structured["temperature"] == 18


def test_listed_tools_keep_title_annotations_and_output_schema(faulty):
    tools = {t.name: t for t in faulty.list_tools(refresh=False)}
    assert tools["weather.map"].title == "Weather map"
    assert tools["tasks.search"].annotations == {"readOnlyHint": True}
    assert tools["get_weather"].output_schema["required"] == [
        "location",
        "temperature",
        "unit",
        "conditions",
    ]
    assert tools["delete_task"].destructive


def test_tool_errors_and_protocol_errors_stay_distinct(faulty):
    tool_error = faulty.call_tool("get_weather", {"location": "Atlantis"})
    assert (tool_error.kind, tool_error.result.error_type) == ("tool_error", "tool_error")
    assert tool_error.result.is_error and tool_error.result.provider_details is None
    assert tool_error.output()["isError"] is True
    protocol = faulty.call_tool("get_forecast", {})
    assert (protocol.kind, protocol.result.error_type) == ("protocol", "protocol")
    assert protocol.result.provider_details == {
        "mcp": {"error": {"code": -32602, "message": "Unknown tool: get_forecast"}}
    }
    assert protocol.output() == {"error": {"code": -32602, "message": "Unknown tool: get_forecast"}}
    assert protocol.trace_data()["mcp"]["error"]["code"] == -32602


def test_a_hang_times_out_sends_cancelled_and_the_session_survives(faulty):
    before = methods(faulty.transcript).count(("client->server", "initialize"))
    call = faulty.call_tool("fault.hang", {"seconds": 30}, timeout=0.3)
    assert (call.kind, call.result.error_type) == ("timeout", "timeout")
    assert call.result.text.startswith("timeout after 0.3s: the MCP server did not answer")
    assert [m["msg"]["method"] for m in call.messages] == ["tools/call", "notifications/cancelled"]
    assert call.messages[1]["msg"]["params"]["requestId"] == call.request_id
    assert call.response is None
    after = faulty.call_tool("get_weather", {"location": "London"})
    assert after.kind == "result"
    assert methods(faulty.transcript).count(("client->server", "initialize")) == before


def test_structured_content_breaking_the_output_schema_is_flagged(faulty):
    call = faulty.call_tool("fault.bad_output", {})
    assert call.kind == "result"
    [finding] = call.findings
    assert (finding.code, finding.path) == (
        "structured_content_invalid",
        "structuredContent.temperature",
    )
    assert "'warm' is not of type 'number'" in finding.message
    assert call.trace_data()["mcp"]["findings"][0]["code"] == "structured_content_invalid"


def test_parallel_calls_each_get_their_own_messages(faulty):
    cities = ["Paris", "London", "Sydney", "New York"]
    calls: dict[str, object] = {}

    def run(city: str) -> None:
        calls[city] = faulty.call_tool("get_weather", {"location": city})

    threads = [threading.Thread(target=run, args=(c,)) for c in cities]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    for city in cities:
        call = calls[city]
        request, response = call.messages
        assert request["msg"]["params"]["arguments"] == {"location": city}
        assert response["msg"]["id"] == request["msg"]["id"] == call.request_id
        assert call.result.structured["location"] == city
    assert len({calls[c].request_id for c in cities}) == 4


def test_a_crash_is_reported_and_the_next_call_restarts_the_server():
    with McpClient(FAULTY_STDIO, timeout=5) as client:
        client.list_tools()
        crash = client.call_tool("fault.crash", {})
        assert (crash.kind, crash.result.error_type) == ("mcp_crash", "mcp_crash")
        assert "closed the connection during tools/call fault.crash" in crash.result.text
        assert "fault.crash: exiting with status 3" in crash.result.text
        again = client.call_tool("get_weather", {"location": "Paris"})
        assert again.kind == "result"
        starts = methods(client.transcript).count(("client->server", "initialize"))
    assert starts == 2


def test_over_http_every_failure_kind_is_a_result():
    with http_server("--fault-tools") as (proc, url), McpClient(McpServerSpec(url=url)) as client:
        assert len(client.list_tools()) == 11
        assert client.call_tool("tasks.search", {"query": "x"}).result.text == "[]"
        assert client.call_tool("nope", {}).output()["error"]["code"] == -32602
        hang = client.call_tool("fault.hang", {"seconds": 30}, timeout=0.3)
        assert hang.kind == "timeout"
        assert hang.messages[-1]["msg"]["method"] == "notifications/cancelled"
        assert client.call_tool("get_weather", {"location": "Paris"}).kind == "result"
        crash = client.call_tool("fault.crash", {})
        assert crash.kind == "mcp_crash"
        assert crash.output()["error"]["type"] == "mcp_crash"  # not the SDK's stand-in error
        proc.wait(5)
        gone = client.call_tool("get_weather", {"location": "Paris"})
        assert (gone.kind, gone.result.error_type) == ("mcp_connect", "mcp_connect")
        assert gone.result.text.startswith(f"cannot connect to the MCP server ({url})")
        with pytest.raises(McpError) as listing:
            client.list_tools()
        assert listing.value.kind == "mcp_connect"


def test_a_server_that_never_answers_initialize_times_out():
    silent = McpServerSpec(stdio=["python", "-c", "import sys; sys.stdin.read()"])
    with McpClient(silent, connect_timeout=0.3) as client:
        with pytest.raises(McpError) as err:
            client.list_tools()
        assert err.value.kind == "timeout"
        assert "did not answer initialize within 0.3s" in str(err.value)
        call = client.call_tool("anything", {})
        assert (call.kind, call.result.error_type) == ("timeout", "timeout")
        assert [m["msg"]["method"] for m in client.transcript] == ["initialize"] * 2


def test_a_server_that_cannot_start_is_reported_with_its_stderr():
    with McpClient(McpServerSpec(stdio=["no-such-mcp-server"])) as client:
        with pytest.raises(McpError, match="No such file or directory") as err:
            client.connect()
        assert err.value.kind == "mcp_connect"
    dying = McpServerSpec(stdio=["python", "-c", "import sys; sys.exit('config file missing')"])
    with McpClient(dying) as client:
        call = client.call_tool("x", {})
    assert call.kind == "mcp_connect"
    assert "closed the connection before answering initialize" in call.result.text
    assert call.result.text.endswith("config file missing")


def test_server_spec_needs_exactly_one_transport():
    with pytest.raises(ValueError, match="exactly one"):
        McpServerSpec()
    with pytest.raises(ValueError, match="exactly one"):
        McpServerSpec(stdio=["x"], url="http://127.0.0.1:1/mcp")
    spec = McpServerSpec.parse(stdio="python -m 'my server' --flag")
    assert spec.stdio == ["python", "-m", "my server", "--flag"]
    assert spec.command[1:] == ["-m", "my server", "--flag"] and spec.command[0] != "python"
    assert spec.label == "stdio: python -m 'my server' --flag"


# --- the mcp handler, the runtime and the trace ---------------------------------------------


def test_toolset_from_mcp_is_json_and_executes_through_the_server():
    toolset = toolset_from_mcp(SAMPLE_STDIO, timeout=2)
    entry = toolset.get("tasks.search")
    assert entry.handler == McpHandler(server=SAMPLE_STDIO, tool="tasks.search")
    assert entry.tool.title == "Search tasks"
    assert Toolset.model_validate_json(toolset.model_dump_json()) == toolset
    assert HANDLER.validate_python(entry.handler.model_dump(mode="json")) == entry.handler


def test_mcp_scenario_runs_through_the_runtime_with_structured_content_and_a_timeout():
    scenario = scenarios.load("mcp_weather")
    assert scenario.mcp == SAMPLE_STDIO
    toolset = scenario.toolset()
    assert "weather.map" in toolset.names
    turn = scenario.player().respond(scenario.conversation())
    batch = Runtime(toolset, scenario.policy).execute(turn.response.message)
    paris, tokyo = batch.executions
    assert paris.handler == "mcp"
    assert paris.result.structured["conditions"] == "partly cloudy"
    assert paris.result.call_id == paris.call.id and paris.result.name == "get_weather"
    assert paris.data["mcp"]["outcome"] == "result"
    assert tokyo.result.error_type == "timeout"
    # The MCP timeout fires just before the runtime's, so the result says what the wire saw.
    assert "notifications/cancelled" in tokyo.result.text
    methods_seen = [m["msg"].get("method") for m in tokyo.data["mcp"]["messages"]]
    assert methods_seen == ["tools/call", "notifications/cancelled"]


def test_sessions_get_their_own_stdio_server_and_its_state():
    toolset = toolset_from_mcp(SAMPLE_STDIO, timeout=5)

    def call(session: str, name: str, arguments: dict) -> str:
        message = Message(
            role="assistant", parts=[ToolCall(id="c1", name=name, arguments=arguments)]
        )
        [ex] = Runtime(toolset, Policy(), session_id=session).execute(message).executions
        assert not ex.result.is_error, ex.result.text
        return ex.result.text

    call("alice", "create_task", {"title": "Alice's secret task"})
    assert "Alice's secret task" in call("alice", "list_tasks", {})
    assert "Alice's secret task" not in call("bob", "list_tasks", {})


def test_the_least_recently_used_client_beyond_the_cap_is_closed(monkeypatch):
    from flowdebug.engine.execution.handlers import mcp_client
    from flowdebug.engine.execution.resources import RESOURCES

    monkeypatch.setitem(RESOURCES.limits, "mcp", 2)
    first = mcp_client(SAMPLE_STDIO, "s1")
    assert mcp_client(SAMPLE_STDIO, "s1") is first
    mcp_client(SAMPLE_STDIO, "s2")
    mcp_client(SAMPLE_STDIO, "s3")
    assert mcp_client(SAMPLE_STDIO, "s1") is not first
    # every session holds its own connection, an HTTP server's too: it ends with the session
    remote = McpServerSpec(url="http://127.0.0.1:9/mcp")
    assert mcp_client(remote, "a") is not mcp_client(remote, "b")
    for owner in ("s1", "s2", "s3", "a", "b"):
        RESOURCES.close(owner)


def _events(executions: list[Execution]) -> list[TraceEvent]:
    """Dispatch and result events as the debugger writes them, with the handler's data."""
    events = []
    for kind, src, dst in (("dispatch", "runtime", "tool"), ("result", "tool", "runtime")):
        for ex in executions:
            events.append(
                TraceEvent(
                    seq=len(events),
                    step=1,
                    round=1,
                    phase="execution",
                    kind=kind,
                    source=src,
                    target=dst,
                    label=ex.result.text[:20],
                    call_id=ex.call.id,
                    tool=ex.call.name,
                    error=kind == "result" and ex.result.is_error,
                    error_type=ex.result.error_type if kind == "result" else None,
                    data=ex.data,
                )
            )
    return events


def test_the_mcp_lane_shows_tools_call_tool_errors_and_json_rpc_errors():
    server = SAMPLE_STDIO
    stale = Tool(name="get_forecast")  # declared from an old listing; the server dropped it
    toolset = toolset_from_mcp(server) + Toolset(
        entries=[ToolEntry(tool=stale, handler=McpHandler(server=server, tool="get_forecast"))]
    )
    calls = [
        ToolCall(id="a", name="get_weather", arguments={"location": "Paris"}),
        ToolCall(id="b", name="get_weather", arguments={"location": "Atlantis"}),
        ToolCall(id="c", name="get_forecast"),
    ]
    batch = Runtime(toolset, Policy(default_timeout=3)).execute(calls)
    ok, failed, gone = batch.executions
    assert ok.result.structured["location"] == "Paris"
    assert failed.result.error_type == "tool_error"
    assert gone.result.error_type == "protocol"
    assert gone.result.provider_details["mcp"]["error"]["code"] == -32602
    labels = [a.label for a in sequence(_events(batch.executions), "mcp")]
    ids = [ex.data["mcp"]["request_id"] for ex in batch.executions]
    assert labels[:3] == [
        f"tools/call get_weather id={ids[0]}",
        f"tools/call get_weather id={ids[1]}",
        f"tools/call get_forecast id={ids[2]}",
    ]
    assert labels[3].startswith("CallToolResult · {")
    assert labels[4].startswith("CallToolResult isError:true · ValueError")
    assert labels[5] == "JSON-RPC error -32602 · Unknown tool: get_forecast"
    anthropic = [a.label for a in sequence(_events(batch.executions), "anthropic")]
    assert anthropic[5] == gone.result.text[:20]  # other views keep the runtime's label


# --- the bridge report ----------------------------------------------------------------------


def test_bridge_report_maps_dotted_names_per_vendor(faulty):
    report = mcp_bridge_report(faulty.list_tools(refresh=False))
    renamed = {(p, mcp): seen for p, mcp, seen in report.renames}
    assert renamed[("anthropic", "weather.map")] == "weather_map"
    assert renamed[("openai-responses", "tasks.search")] == "tasks_search"
    assert ("gemini", "weather.map") not in renamed  # Gemini names may contain dots
    bridge = next(t for t in report.tools if t.name == "weather.map")
    assert bridge.mcp["name"] == "weather.map"
    assert bridge.vendors["openai-chat"].value["function"]["name"] == "weather_map"
    assert "tool_name_renamed" in {w.code for w in bridge.vendors["anthropic"].warnings}
    weather = next(t for t in report.tools if t.name == "get_weather")
    assert weather.vendors["gemini"].value["name"] == "get_weather"
    tools = faulty.list_tools(refresh=False)
    assert tools_part("mcp", tools).value["tools"] == [t.mcp for t in report.tools]
    assert len(tools_part("anthropic", tools).value) == len(tools)


def test_bridge_report_shows_how_each_call_tool_result_reaches_each_vendor(faulty):
    calls = [
        faulty.call_tool("get_weather", {"location": "Paris"}, call_id="c1"),
        faulty.call_tool("weather.map", {"location": "Paris"}, call_id="c2"),
        faulty.call_tool("get_weather", {"location": "Atlantis"}, call_id="c3"),
        faulty.call_tool("get_forecast", {}, call_id="c4"),
    ]
    report = mcp_bridge_report(faulty.list_tools(refresh=False), calls)
    structured, image, tool_error, rpc_error = report.results
    assert structured.mcp == calls[0].response  # the real JSON-RPC response, integer id
    assert isinstance(structured.mcp["id"], int)

    def codes(bridge, protocol):
        return {w.code for w in bridge.vendors[protocol].warnings}

    assert codes(structured, "anthropic") == {"structured_content_dropped"}
    gemini = structured.vendors["gemini"].value[0]["parts"][0]["functionResponse"]
    assert gemini["response"]["output"]["temperature"] == 18
    # the result names its tool by its renamed name, as every place the name appears
    assert codes(image, "openai-chat") == {"image_in_result_dropped", "tool_name_renamed"}
    assert codes(image, "anthropic") == {"tool_name_renamed"}
    assert image.vendors["anthropic"].name == "weather_map"
    block = image.vendors["anthropic"].value[0]["content"][0]
    assert block["tool_use_id"] == "c2" and block["content"][1]["type"] == "image"
    assert tool_error.vendors["openai-chat"].value[0]["content"].startswith('{"error": "ValueE')
    assert tool_error.vendors["anthropic"].value[0]["content"][0]["is_error"] is True
    assert rpc_error.mcp["error"]["code"] == -32602
    assert codes(rpc_error, "anthropic") == {"provider_details_dropped"}
    assert rpc_error.vendors["gemini"].value[0]["parts"][0]["functionResponse"]["response"] == {
        "error": "Unknown tool: get_forecast"
    }
