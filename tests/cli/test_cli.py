"""The command line is a contract: exact output shapes and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from flowdebug.cli.main import main
from tests.paths import WIRE

ROOT = Path(__file__).resolve().parents[2]


def run(capsys, *argv: str, stdin: str | None = None, monkeypatch=None) -> tuple[int, str, str]:
    if stdin is not None:
        import io

        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_protocols_prints_one_name_per_line(capsys):
    code, out, _ = run(capsys, "protocols")
    assert code == 0
    assert out.splitlines() == [
        "anthropic",
        "openai-chat",
        "openai-responses",
        "gemini",
        "mcp",
        "bedrock",
    ]


def test_convert_detects_anthropic_request_and_writes_openai_chat(capsys):
    code, out, _ = run(
        capsys, "convert", str(WIRE / "anthropic.request.continuation.json"), "--to", "openai-chat"
    )
    assert code == 0
    body = json.loads(out)
    assistant = next(m for m in body["messages"] if m.get("tool_calls"))
    ids = [c["id"] for c in assistant["tool_calls"]]
    assert ids == ["toolu_01A7Pq3rT9xWcE5bLmN2kVdY", "toolu_01B8Qr4sU0yXdF6cMnO3lWeZ"]
    tool_msgs = [m for m in body["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == ids
    assert json.loads(tool_msgs[1]["content"]) == {"error": "timeout after 10s"}


def test_convert_to_canonical_has_the_documented_shape(capsys):
    code, out, _ = run(
        capsys, "convert", str(WIRE / "openai-chat.request.continuation.json"), "--to", "canonical"
    )
    assert code == 0
    conv = json.loads(out)
    assert set(conv) >= {"system", "tools", "messages"}
    assert conv["system"] == "You are a weather assistant."
    parts = [p for m in conv["messages"] for p in m["parts"]]
    calls = [p for p in parts if p["kind"] == "tool_call"]
    results = [p for p in parts if p["kind"] == "tool_result"]
    assert [c["arguments"]["location"] for c in calls] == ["Paris", "Tokyo"]
    assert [r["call_id"] for r in results] == [c["id"] for c in calls]
    assert [r["is_error"] for r in results] == [False, True]
    assert results[1]["content"] == "timeout after 10s"


def test_convert_reads_stdin_and_honours_from(capsys, monkeypatch):
    text = (WIRE / "gemini.response.function_calls.json").read_text()
    code, out, _ = run(
        capsys,
        "convert",
        "-",
        "--to",
        "anthropic",
        "--from",
        "gemini",
        stdin=text,
        monkeypatch=monkeypatch,
    )
    assert code == 0
    body = json.loads(out)
    assert body["stop_reason"] == "tool_use"
    assert [b["input"]["location"] for b in body["content"] if b["type"] == "tool_use"] == [
        "Paris",
        "Tokyo",
    ]


def test_convert_warns_on_stderr_what_the_target_cannot_carry(capsys):
    code, _, err = run(
        capsys,
        "convert",
        str(WIRE / "anthropic.variant.thinking.response.tool_use.json"),
        "--to",
        "openai-chat",
    )
    assert code == 0
    assert "thinking" in err
    assert err.startswith("warning openai-chat ")


def test_convert_bad_json_exits_2_with_one_line(capsys, monkeypatch):
    code, out, err = run(
        capsys, "convert", "-", "--to", "gemini", stdin='{"messages": [', monkeypatch=monkeypatch
    )
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "$" in err and "not valid JSON" in err


def test_convert_bad_payload_names_the_json_path(capsys, monkeypatch):
    payload = json.loads((WIRE / "anthropic.request.continuation.json").read_text())
    payload["messages"][1]["content"][0]["input"] = "not an object"
    code, _, err = run(
        capsys, "convert", "-", "--to", "gemini", stdin=json.dumps(payload), monkeypatch=monkeypatch
    )
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "$.messages[1].content[0].input" in err


def test_convert_unknown_payload_exits_2(capsys, monkeypatch):
    code, _, err = run(
        capsys, "convert", "-", "--to", "mcp", stdin='{"hello": "world"}', monkeypatch=monkeypatch
    )
    assert code == 2
    assert "not a payload of any supported protocol" in err


@pytest.mark.parametrize(
    "target", ["anthropic", "openai-chat", "openai-responses", "gemini", "mcp", "canonical"]
)
def test_console_script_converts_weather_to_every_target(target):
    exe = Path(sys.executable).parent / "flowdebug"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "flowdebug.cli.main"]
    proc = subprocess.run(
        [*cmd, "convert", str(WIRE / "anthropic.request.continuation.json"), "--to", target],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)


def test_run_list_names_every_sample_scenario(capsys):
    code, out, _ = run(capsys, "run", "--list")
    assert code == 0
    names = [line.split("\t")[0] for line in out.splitlines()]
    assert names[0] == "weather"
    assert {
        "tasks",
        "files",
        "shell",
        "unknown_tool",
        "schema_retry",
        "runaway",
        "destructive",
    } <= set(names)


def test_run_prints_the_trace_in_the_chosen_protocols_terms(capsys):
    code, out, _ = run(capsys, "run", "weather", "--protocol", "openai-chat")
    assert code == 0
    lines = out.splitlines()
    assert any("tool_calls[1] call_2 get_weather" in line for line in lines)
    assert sum("[ERROR]" in line for line in lines) == 1
    assert lines[-1] == "-- the model answered: the cycle is done"


def test_run_with_a_fault_and_json_output(capsys):
    code, out, _ = run(capsys, "run", "weather", "--fault", "exception@#1", "--json")
    assert code == 0
    trace = json.loads(out)
    assert trace["status"] == "finished"
    results = [e for e in trace["events"] if e["kind"] == "result"]
    assert [r.get("error_type") for r in results] == ["exception", "timeout"]


def test_run_json_is_the_trace_document_of_the_published_schema(capsys):
    import jsonschema

    from flowdebug.engine.tracing.trace import TraceEvent
    from flowdebug.exchange.imports import import_session

    code, out, _ = run(capsys, "run", "destructive", "--reject", "--json")
    assert code == 0
    document = json.loads(out)
    schema = json.loads((ROOT / "schemas" / "trace-v1.schema.json").read_text("utf-8"))
    jsonschema.Draft202012Validator(schema).validate(document)
    assert document["format"] == "flowdebug.trace/1"
    assert document["scenario"] == "destructive" and document["status"] == "finished"
    assert document["metadata"]["name"] == "destructive"
    assert {d["kind"] for d in document["decisions"].values()} == {"reject"}
    imported = import_session(out)  # the app's import reads it back whole
    assert imported.source == "flowdebug.trace"
    assert imported.state.events == [TraceEvent.model_validate(e) for e in document["events"]]


def test_version_prints_the_installed_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out == f"flowdebug {version('flowdebug')}\n"


def test_run_approves_destructive_calls_when_asked(capsys):
    code, out, _ = run(capsys, "run", "destructive")
    assert out.splitlines()[-1].startswith("-- waiting for approval: delete_task")
    code, out, _ = run(capsys, "run", "destructive", "--approve")
    assert code == 0
    assert out.splitlines()[-1] == "-- the model answered: the cycle is done"


def test_run_unknown_scenario_and_bad_fault_exit_2(capsys):
    code, _, err = run(capsys, "run", "nope")
    assert code == 2 and "no scenario 'nope'" in err
    code, _, err = run(capsys, "run", "weather", "--fault", "explode")
    assert code == 2 and "unknown fault kind 'explode'" in err


def test_render_mermaid_and_dot_from_a_run_trace(capsys, tmp_path):
    run(capsys, "run", "weather", "--json")
    trace = tmp_path / "trace.json"
    trace.write_text(capsys.readouterr().out or "")
    code, out, _ = run(capsys, "run", "weather", "--json")
    trace.write_text(out)
    code, out, _ = run(capsys, "render", str(trace), "--format", "mermaid", "--protocol", "mcp")
    assert code == 0 and out.startswith("sequenceDiagram")
    assert "tools/call get_weather id=call_2" in out
    code, out, _ = run(capsys, "render", str(trace), "--format", "dot")
    assert code == 0 and out.startswith("digraph sequence {")
    assert "tool_use call_1 get_weather" in out.replace("<BR/>", " ")
