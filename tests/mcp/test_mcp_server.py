"""The sample MCP server (sample_tools/mcp_server.py): a real server built with the SDK."""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from flowdebug.mcp.client import McpClient
from flowdebug.mcp.spec import McpServerSpec
from sample_tools import TOOLSETS, mcp_server
from tests.mcp_servers import FAULTY_STDIO, ROOT, SAMPLE_STDIO, http_server


@pytest.fixture(scope="module")
def sample():
    with McpClient(SAMPLE_STDIO, timeout=5) as client:
        client.list_tools()
        yield client


def test_declares_the_sample_tools_with_their_own_schemas(sample):
    tools = {t.name: t for t in sample.list_tools(refresh=False)}
    assert list(tools) == [
        "get_weather",
        "weather.map",
        "create_task",
        "update_task",
        "complete_task",
        "delete_task",
        "list_tasks",
        "tasks.search",
    ]
    for toolset in (TOOLSETS["weather"], TOOLSETS["tasks"]):
        for entry in toolset.entries:
            assert tools[entry.tool.name].parameters == entry.tool.parameters
            assert tools[entry.tool.name].description == entry.tool.description
    assert tools["delete_task"].annotations == {"destructiveHint": True}
    assert tools["get_weather"].output_schema == mcp_server.WEATHER_OUTPUT
    assert not any(name.startswith("fault.") for name in tools)


def test_get_weather_answers_with_structured_content_matching_its_output_schema(sample):
    call = sample.call_tool("get_weather", {"location": "Paris", "unit": "f"})
    wire = call.response["result"]
    assert wire["structuredContent"] == {
        "location": "Paris",
        "temperature": 64,
        "unit": "f",
        "conditions": "partly cloudy",
    }
    assert json.loads(wire["content"][0]["text"]) == wire["structuredContent"]
    assert wire["isError"] is False
    assert call.findings == []


def test_a_failing_handler_is_a_tool_error_and_an_unknown_tool_a_json_rpc_error(sample):
    failed = sample.call_tool("get_weather", {"location": "Atlantis"})
    assert failed.response["result"]["isError"] is True
    assert "no weather data for 'Atlantis'" in failed.result.text
    unknown = sample.call_tool("get_wether", {"location": "Paris"})
    assert unknown.response["error"] == {"code": -32602, "message": "Unknown tool: get_wether"}


def test_invalid_arguments_are_a_tool_error_the_model_can_fix(sample):
    call = sample.call_tool("get_weather", {"location": "Paris", "unit": "kelvin"})
    assert call.kind == "tool_error"
    assert call.result.text.startswith("invalid arguments:\narguments.unit: 'kelvin' is not one")


def test_weather_map_answers_with_a_caption_and_a_png(sample):
    content = sample.call_tool("weather.map", {"location": "Sydney"}).response["result"]["content"]
    assert content[0] == {"type": "text", "text": "Weather map of Sydney: clear"}
    assert content[1]["type"] == "image" and content[1]["mimeType"] == "image/png"
    assert content[1]["data"].startswith("iVBORw0KGgo")  # the PNG signature, base64


def test_task_tools_share_one_store_and_search_finds_by_text(sample):
    made = sample.call_tool("create_task", {"title": "Buy oat milk", "notes": "2 litres"})
    task_id = json.loads(made.result.text)["id"]
    sample.call_tool("create_task", {"title": "Call the plumber"})
    found = sample.call_tool("tasks.search", {"query": "OAT"})
    assert [t["id"] for t in json.loads(found.result.text)] == [task_id]
    sample.call_tool("complete_task", {"task_id": task_id})
    done = sample.call_tool("tasks.search", {"query": "milk", "status": "done"})
    assert json.loads(done.result.text)[0]["done"] is True


def test_fault_tools_exist_only_with_the_flag():
    with McpClient(FAULTY_STDIO) as client:
        names = [t.name for t in client.list_tools()]
    assert names[-3:] == ["fault.crash", "fault.hang", "fault.bad_output"]
    assert mcp_server.toolset().get("fault.crash") is None


def test_the_sdks_own_client_validates_its_structured_content():
    async def session_call():
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "sample_tools.mcp_server"], cwd=str(ROOT)
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            await session.list_tools()
            # call_tool checks structuredContent against the outputSchema and raises if not.
            result = await session.call_tool("get_weather", {"location": "London"})
            return init, result

    init, result = anyio.run(session_call)
    assert init.server_info.name == "flowdebug-sample"
    assert result.structured_content["conditions"] == "light rain"


def test_serves_streamable_http_on_a_free_loopback_port():
    with http_server() as (proc, url), McpClient(McpServerSpec(url=url)) as client:
        assert len(client.list_tools()) == 8
        call = client.call_tool("get_weather", {"location": "New York"})
        assert call.result.structured["temperature"] == 22
        assert client.server_info["serverInfo"]["name"] == "flowdebug-sample"
    assert proc.poll() is not None  # shut down
