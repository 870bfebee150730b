"""Every command answers bad input with one line on stderr: no traceback, no Python repr."""

from __future__ import annotations

import json
import logging

import pytest

from flowdebug.cli.main import main

# Markers of Python leaking into a message meant for a person.
REPRS = ("Traceback", "<class ", "object at 0x", "Error(", "[{'", "{'type'")


def files(tmp_path):
    def write(name: str, text: str) -> str:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    return {
        "broken": write("broken.json", '{"messages": [1, '),
        "unknown": write("unknown.json", '{"hello": "world"}'),
        "list": write("list.json", "[1, 2]"),
        "bad_event": write("bad_event.json", json.dumps({"events": [{"kind": 3}]})),
        "bad_scenario": write("bad_scenario.json", json.dumps({"name": "x", "turns": 3})),
        "missing": str(tmp_path / "missing.json"),
    }


CASES = {
    "no command": [],
    "unknown command": ["explode"],
    "protocols with an argument": ["protocols", "extra"],
    "convert a missing file": ["convert", "{missing}", "--to", "gemini"],
    "convert broken JSON": ["convert", "{broken}", "--to", "gemini"],
    "convert an unknown payload": ["convert", "{unknown}", "--to", "gemini"],
    "convert to an unknown protocol": ["convert", "{unknown}", "--to", "klingon"],
    "lint broken JSON": ["lint", "{broken}"],
    "lint an unknown payload": ["lint", "{unknown}", "--protocol", "anthropic"],
    "run without a scenario": ["run"],
    "run an unknown scenario": ["run", "nope"],
    "run an invalid scenario file": ["run", "{bad_scenario}"],
    "run with an unknown fault": ["run", "weather", "--fault", "explode"],
    "run approving and rejecting": ["run", "weather", "--approve", "--reject"],
    "render broken JSON": ["render", "{broken}", "--format", "dot"],
    "render a list of numbers": ["render", "{list}", "--format", "mermaid"],
    "render an invalid event": ["render", "{bad_event}", "--format", "dot"],
    "render an unknown format": ["render", "{unknown}", "--format", "png"],
    "emulate on port 70000": ["emulate", "--port", "70000"],
    "emulate an unknown scenario": ["emulate", "--port", "0", "--scenario", "nope"],
    "mcp without a server": ["mcp", "tools"],
    "mcp with an unclosed quote": ["mcp", "tools", "--stdio", "'unclosed"],
    "mcp with a non-HTTP URL": ["mcp", "tools", "--url", "ftp://example.com/mcp"],
    "mcp call with broken ARGS_JSON": [
        "mcp",
        "call",
        "t",
        "{{nope",
        "--url",
        "http://127.0.0.1:9/mcp",
    ],
    "mcp call with a list for ARGS_JSON": [
        "mcp",
        "call",
        "t",
        "[1]",
        "--url",
        "http://127.0.0.1:9/mcp",
    ],
}


@pytest.mark.parametrize("argv", CASES.values(), ids=CASES.keys())
def test_bad_input_is_one_line_and_exit_2(argv, tmp_path, capsys):
    paths = files(tmp_path)
    argv = [a.format(**paths) for a in argv]
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's usage errors
        code = e.code
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith("flowdebug"), err
    assert not any(marker in err for marker in REPRS), err


def test_a_usage_error_names_the_commands_help(capsys):
    with pytest.raises(SystemExit):
        main(["run", "weather", "--fault"])
    err = capsys.readouterr().err
    assert err == (
        "flowdebug run: argument --fault: expected one argument (see flowdebug run --help)\n"
    )


def test_an_unexpected_failure_is_one_line_with_the_way_to_the_traceback(monkeypatch, capsys):
    from flowdebug.cli import main as cli

    def boom(args):
        raise KeyError("surprise")

    monkeypatch.setattr(cli, "cmd_protocols", boom)
    assert main(["protocols"]) == 70
    err = capsys.readouterr().err
    assert err == "flowdebug: internal error (KeyError): 'surprise'; -vv shows the traceback\n"


def test_verbose_logs_the_run_on_stderr_and_leaves_stdout_alone(capsys):
    assert main(["run", "weather", "-v"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[-1] == "-- the model answered: the cycle is done"
    assert "flowdebug: flowdebug.cli: scenario weather: " in err
    assert "flowdebug: flowdebug.cli: stopped at step " in err
    assert main(["run", "weather"]) == 0
    assert capsys.readouterr().err == ""
    assert logging.getLogger("mcp").level == logging.CRITICAL  # the SDKs speak at -vv only
