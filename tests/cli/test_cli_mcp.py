"""``flowdebug mcp tools`` and ``flowdebug mcp call``, against a server this project did not write.

The foreign server is tests/cli/foreign_mcp_server.py: the SDK's high-level ``MCPServer`` with
tools flowdebug knows nothing about (a name with a slash, pydantic structured output, a tool
that raises), run over stdio by ``python -m tests.cli.foreign_mcp_server``.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest

from flowdebug.cli.main import main
from flowdebug.engine.execution.runtime import Runtime
from flowdebug.engine.session import scenarios
from flowdebug.mcp.client import close_all
from tests.mcp_servers import ROOT, http_server

FOREIGN = [sys.executable, "-m", "tests.cli.foreign_mcp_server"]
FOREIGN_CMD = shlex.join(FOREIGN)
SAMPLE_CMD = shlex.join([sys.executable, "-m", "sample_tools.mcp_server", "--fault-tools"])


def flowdebug(*argv: str) -> subprocess.CompletedProcess[str]:
    """The real command, as a script would run it (one test; the others call ``main``)."""
    return subprocess.run(
        [sys.executable, "-m", "flowdebug.cli.main", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- a server this project did not write, through the command ---------------------------------


def test_mcp_tools_lists_a_foreign_server_as_canonical_tools(capsys):
    code, out, err = run(capsys, "mcp", "tools", "--stdio", FOREIGN_CMD)
    assert code == 0, err
    tools = {t["name"]: t for t in json.loads(out)}
    assert set(tools) == {"units/cups_to_grams", "scale_recipe", "pantry_check"}
    convert = tools["units/cups_to_grams"]
    assert convert["title"] == "Cups to grams"
    assert convert["parameters"]["required"] == ["ingredient", "cups"]
    assert convert["output_schema"]["properties"]["grams"]["type"] == "number"
    assert tools["pantry_check"]["annotations"] == {"readOnlyHint": True}


def test_mcp_call_calls_a_foreign_tool_and_prints_its_call_tool_result(tmp_path):
    transcript = tmp_path / "transcript.json"
    args = json.dumps({"ingredient": "flour", "cups": 2})
    done = flowdebug(
        *("mcp", "call", "units/cups_to_grams", args),
        *("--stdio", FOREIGN_CMD, "--transcript", str(transcript)),
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["structuredContent"] == {"grams": 240.0, "ingredient": "flour"}
    assert result["isError"] is False
    sent = [e["msg"].get("method") for e in json.loads(transcript.read_text())]
    assert sent[:4] == ["initialize", None, "notifications/initialized", "tools/list"]
    assert sent[-2:] == ["tools/call", None]


def test_a_foreign_tool_error_exits_1_with_the_result(capsys):
    args = json.dumps({"ingredient": "saffron", "cups": 1})
    code, out, err = run(capsys, "mcp", "call", "units/cups_to_grams", args, "--stdio", FOREIGN_CMD)
    assert code == 1
    result = json.loads(out)
    assert result["isError"] is True
    assert "no density for 'saffron'" in result["content"][0]["text"]
    assert "failed (tool_error)" in err


def test_mcp_tools_to_a_vendor_renames_what_it_cannot_carry(capsys):
    code, out, err = run(capsys, "mcp", "tools", "--stdio", FOREIGN_CMD, "--to", "openai-chat")
    assert code == 0
    names = [t["function"]["name"] for t in json.loads(out)]
    assert "units_cups_to_grams" in names
    assert "'units/cups_to_grams'" in err and "[tool_name_renamed]" in err
    code, out, _ = run(capsys, "mcp", "tools", "--stdio", FOREIGN_CMD, "--to", "gemini")
    declared = json.loads(out)[0]["functionDeclarations"]
    assert {d["name"] for d in declared} >= {"units_cups_to_grams", "scale_recipe"}


def test_foreign_tools_run_in_a_scenario_through_the_runtime(tmp_path):
    path = tmp_path / "baking.json"
    path.write_text(
        json.dumps(
            {
                "name": "baking",
                "title": "Baking with a foreign MCP server",
                "mcp": {"stdio": FOREIGN, "cwd": str(ROOT)},
                "user": "How many grams are 3 cups of sugar, and scale my recipe to 6?",
                "turns": [
                    {
                        "calls": [
                            {
                                "name": "units/cups_to_grams",
                                "arguments": {"ingredient": "sugar", "cups": 3},
                            },
                            {
                                "name": "scale_recipe",
                                "arguments": {
                                    "servings_from": 2,
                                    "servings_to": 6,
                                    "quantities": {"eggs": 2, "milk_ml": 250},
                                },
                            },
                            {"name": "pantry_check", "arguments": {"item": "yeast"}},
                        ]
                    },
                    {"text": "That is {{results[0].grams}} g."},
                ],
            }
        )
    )
    scenario = scenarios.load(str(path))
    toolset = scenario.toolset()
    turn = scenario.player().respond(scenario.conversation())
    try:
        batch = Runtime(toolset, scenario.policy).execute(turn.response.message)
    finally:
        close_all()
    grams, scaled, pantry = batch.executions
    assert grams.result.structured == {"grams": 600.0, "ingredient": "sugar"}
    assert grams.data["mcp"]["tool"] == "units/cups_to_grams"
    assert scaled.result.structured == {"eggs": 6.0, "milk_ml": 750.0}
    assert (pantry.result.is_error, pantry.result.error_type) == (True, "tool_error")
    assert "the pantry is locked" in pantry.result.text


# --- input errors and the sample server over HTTP ---------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("{not json", "ARGS_JSON is not JSON"),
        ("[1, 2]", "ARGS_JSON must be a JSON object, not list"),
    ],
)
def test_bad_arguments_exit_2_before_any_server_starts(capsys, args, message):
    code, out, err = run(capsys, "mcp", "call", "x", args, "--stdio", "no-such-server")
    assert (code, out) == (2, "")
    assert message in err


def test_a_server_that_cannot_start_exits_2(capsys):
    code, out, err = run(capsys, "mcp", "tools", "--stdio", "no-such-mcp-server --flag")
    assert (code, out) == (2, "")
    assert "cannot connect to the MCP server (stdio: no-such-mcp-server --flag)" in err


def test_the_server_flags_are_required_and_exclusive(capsys):
    with pytest.raises(SystemExit) as missing:
        main(["mcp", "tools"])
    with pytest.raises(SystemExit) as both:
        main(["mcp", "tools", "--stdio", "x", "--url", "http://127.0.0.1:1/mcp"])
    assert missing.value.code == both.value.code == 2


def test_mcp_call_over_http_reports_protocol_errors_timeouts_and_output_schema(capsys):
    with http_server("--fault-tools") as (_, url):
        code, out, _ = run(capsys, "mcp", "call", "get_wether", "{}", "--url", url)
        assert (code, json.loads(out)) == (
            1,
            {"error": {"code": -32602, "message": "Unknown tool: get_wether"}},
        )
        code, out, err = run(
            capsys, "mcp", "call", "fault.hang", '{"seconds": 30}', "--url", url, "--timeout", "0.3"
        )
        assert code == 1
        assert json.loads(out)["error"]["type"] == "timeout"
        assert "notifications/cancelled" in err
        code, out, err = run(capsys, "mcp", "call", "fault.bad_output", "{}", "--url", url)
        assert code == 0
        assert err.startswith("warning structuredContent.temperature: the structuredContent")
        code, out, _ = run(capsys, "mcp", "tools", "--url", url, "--to", "mcp")
        assert [t["name"] for t in json.loads(out)["tools"]][-1] == "fault.bad_output"


def test_mcp_call_reports_a_crash_as_json(capsys):
    code, out, err = run(capsys, "mcp", "call", "fault.crash", "{}", "--stdio", SAMPLE_CMD)
    assert code == 1
    assert "tools/call fault.crash failed (mcp_crash)" in err
    error = json.loads(out)["error"]
    assert error["type"] == "mcp_crash"
    assert "fault.crash: exiting with status 3" in error["message"]
