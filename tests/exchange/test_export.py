"""Exports: the versioned trace and its schema, request payloads, graphs, SDK snippets."""

from __future__ import annotations

import json
import os
import re
import shutil
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from flowdebug import protocols
from flowdebug.cli import main as cli
from flowdebug.engine.session.debugger import Session
from flowdebug.errors import FlowdebugError, UsageError
from flowdebug.exchange.exports import (
    FORMATS,
    TRACE_FORMAT,
    Trace,
    export,
    graph,
    request_payload,
    trace,
    trace_schema,
)
from flowdebug.exchange.snippets import snippet
from flowdebug.protocols.convert import response_from_message
from tests import http_stub

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "schemas" / "trace-v1.schema.json"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz not installed")


@pytest.fixture(scope="module")
def weather():
    session = Session.from_scenario("weather")
    session.run()
    return session.state


@pytest.fixture(scope="module")
def midway():
    """Stopped after the model's calls: the continuation is the request a replay sends."""
    session = Session.from_scenario("weather")
    while session.state.next_phase != "continuation":
        session.step()
    return session.state


# -- the trace ------------------------------------------------------------------------------------


def test_trace_holds_format_metadata_and_the_whole_session(weather):
    data = trace(weather, name="Paris demo", parent="p1")
    assert data["format"] == TRACE_FORMAT == "flowdebug.trace/1"
    assert data["metadata"]["name"] == "Paris demo" and data["metadata"]["parent"] == "p1"
    assert data["metadata"]["exported_at"].endswith("+00:00")
    back = Trace.model_validate(data)
    assert back.model_dump_json(exclude={"format", "metadata"}) == weather.model_dump_json()


def test_trace_validates_against_the_published_schema(weather):
    jsonschema.Draft202012Validator.check_schema(trace_schema())
    published = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(published).validate(trace(weather))


def test_published_schema_is_generated_from_the_trace_model():
    generated = json.dumps(trace_schema(), indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("FLOWDEBUG_UPDATE_SCHEMA"):
        SCHEMA.write_text(generated, encoding="utf-8")
    assert SCHEMA.read_text(encoding="utf-8") == generated, (
        "schemas/trace-v1.schema.json is stale: run `python scripts/trace_schema.py`"
    )


def test_flowdebug_render_draws_an_exported_trace(weather, tmp_path, capsys):
    path = tmp_path / "weather.trace.json"
    path.write_text(export(weather, "trace").data, encoding="utf-8")
    assert cli.main(["render", str(path), "--format", "mermaid", "--protocol", "gemini"]) == 0
    assert capsys.readouterr().out == graph(weather, "gemini", "mermaid")


# -- payloads and graphs --------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", list(protocols.PROTOCOLS))
def test_request_export_is_the_codec_payload(weather, protocol):
    got = export(weather, "request", protocol, name="Paris demo")
    expected = protocols.get(protocol).encode_request(weather.conversation)
    assert json.loads(got.data) == expected.value
    assert got.filename == f"Paris-demo.{protocol}.request.json"
    assert list(got.warnings) == expected.warnings


def test_request_export_reports_what_the_protocol_cannot_carry(weather):
    payload, warnings = request_payload(weather, "gemini")
    assert "contents" in payload
    assert all(w.code and w.path for w in warnings)


@pytest.mark.parametrize(
    ("protocol", "label"),
    [
        ("anthropic", "tool_use call_1 get_weather"),
        ("openai-chat", "tool_calls[0] call_1 get_weather"),
        ("mcp", "tools/call get_weather id=call_1"),
    ],
)
def test_mermaid_export_speaks_the_protocol(weather, protocol, label):
    got = export(weather, "mermaid", protocol)
    assert got.data.startswith("sequenceDiagram\n")
    # Mermaid's text says brackets as entity codes (#91; #93;), which it shows as the brackets
    assert label in re.sub(r"#(\d+);", lambda m: chr(int(m.group(1))), got.data)
    assert got.filename == f"weather.{protocol}.mmd"


@needs_dot
def test_svg_export_is_an_svg_of_the_sequence(weather):
    got = export(weather, "svg", "openai-responses")
    assert got.mime == "image/svg+xml"
    assert "<svg" in got.data and "call_id=call_1" in got.data


def test_unknown_format_or_protocol_is_refused(weather):
    with pytest.raises(UsageError, match="unknown export format 'pdf'"):
        export(weather, "pdf")
    with pytest.raises(UsageError, match="unknown protocol 'klingon'"):
        export(weather, "request", "klingon")
    with pytest.raises(UsageError, match="no SDK snippet for 'mcp'"):
        export(weather, "snippet", "mcp")
    assert set(FORMATS) == {"trace", "request", "mermaid", "svg", "dot", "snippet"}


# -- SDK snippets ---------------------------------------------------------------------------------

SDK_ENV = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", ""),
    "openai-chat": ("OPENAI_API_KEY", "OPENAI_BASE_URL", "/v1"),
    "openai-responses": ("OPENAI_API_KEY", "OPENAI_BASE_URL", "/v1"),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL", ""),
}
# Bedrock's boto3 snippet names no key (boto3 finds the credentials itself) and boto3 is not
# installed: tests/protocols/bedrock/test_bedrock_snippet.py runs it through botocore.


@pytest.mark.parametrize("protocol", sorted(SDK_ENV))
def test_snippet_compiles_and_reads_the_key_from_the_environment(midway, protocol, monkeypatch):
    key_var = SDK_ENV[protocol][0]
    monkeypatch.setenv(key_var, "sk-env-FAKE-0123456789abcdef")
    got = export(midway, "snippet", protocol)
    compile(got.data, got.filename, "exec")
    assert f'os.environ["{key_var}"]' in got.data
    assert "sk-env-FAKE" not in got.data
    assert got.filename == f"weather_{protocol.replace('-', '_')}.py"


def test_snippet_of_a_deeply_nested_payload_still_compiles():
    deep: Any = "bottom"
    for _ in range(150):
        deep = {"a": deep}
    compile(snippet("openai-chat", {"model": "m", "messages": [], "metadata": deep}), "s", "exec")


class _Recorder(BaseHTTPRequestHandler):
    reply: bytes = b"{}"
    seen: list[tuple[str, Any]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        self.seen.append((self.path, json.loads(body)))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(self.reply)))
        self.end_headers()
        self.wfile.write(self.reply)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.parametrize("protocol", sorted(SDK_ENV))
def test_snippet_replays_the_conversation_through_the_sdk(midway, protocol, monkeypatch, capsys):
    final = response_from_message(
        Session.from_scenario("weather")
        .state.conversation.messages[0]
        .model_copy(update={"role": "assistant"})
    )
    recorder = type("Recorder", (_Recorder,), {"seen": []})
    recorder.reply = json.dumps(protocols.get(protocol).encode_response(final).value).encode()
    server = ThreadingHTTPServer(("127.0.0.1", 0), recorder)
    thread = http_stub.start(server)
    key_var, url_var, prefix = SDK_ENV[protocol]
    monkeypatch.setenv(key_var, "sk-stub-FAKE-0123456789abcdef")
    monkeypatch.setenv(url_var, f"http://127.0.0.1:{server.server_port}{prefix}")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    try:
        code = export(midway, "snippet", protocol).data
        exec(compile(code, "snippet.py", "exec"), {"__name__": "__main__"})
    finally:
        http_stub.stop(server, thread)
    payload, _ = request_payload(midway, protocol)
    [(path, body)] = recorder.seen
    if protocol == "gemini":
        assert path.endswith("/models/gemini-2.5-flash:generateContent")
        assert body["contents"] == payload["contents"]
        assert body["toolConfig"] == payload["toolConfig"]
    else:
        assert body == payload
    assert "Weather in Paris and Tokyo?" in capsys.readouterr().out


# -- nothing fails silently -----------------------------------------------------------------------


def test_every_export_failure_is_a_flowdebug_error(weather, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(FlowdebugError, match="dot"):
        export(weather, "svg", "anthropic")
