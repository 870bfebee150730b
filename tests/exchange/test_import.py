"""Import: traces, vendor payloads and MCP transcripts become sessions; failures change nothing."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from flowdebug.cli import main as cli
from flowdebug.engine.execution.canned_handlers import FixedHandler
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.tracing.trace import sequence
from flowdebug.errors import CodecError
from flowdebug.exchange.exports import export
from flowdebug.exchange.imports import import_session
from flowdebug.model import Message, Text, ToolCall
from flowdebug.players.manual import ManualPlayer
from flowdebug.protocols.convert import decode
from flowdebug.store.sessions import open_store
from tests.paths import WIRE

REFERENCE = sorted(WIRE.glob("*.json")) if WIRE.is_dir() else []


def _importable(path: Path) -> bool:
    try:
        decoded = decode(json.loads(path.read_text(encoding="utf-8")))
    except CodecError:
        return False  # wrapped variants: not a payload of their own
    conv = decoded.as_conversation()
    return bool(conv.messages or conv.tools)


@pytest.fixture(scope="module")
def weather():
    session = Session.from_scenario("weather")
    session.run()
    return session.state


@pytest.mark.parametrize("path", [p for p in REFERENCE if _importable(p)], ids=lambda p: p.name)
def test_every_reference_payload_becomes_a_session(path):
    decoded = decode(json.loads(path.read_text(encoding="utf-8")))
    imported = import_session(path.read_bytes())
    conv = imported.state.conversation
    assert conv == decoded.as_conversation()
    assert (imported.source, imported.kind) == (decoded.protocol, decoded.kind)
    assert imported.state.toolset.names == [t.name for t in conv.tools]
    assert imported.name == f"{decoded.protocol} {decoded.kind} (imported)"


def test_every_bedrock_reference_payload_is_importable():
    bedrock = [p.name for p in REFERENCE if p.name.startswith("bedrock.")]
    assert bedrock and all(_importable(WIRE / name) for name in bedrock)


def test_a_bedrock_continuation_imports_as_a_bedrock_session():
    imported = import_session((WIRE / "bedrock.request.continuation.json").read_bytes())
    conv = imported.state.conversation
    assert (imported.source, imported.kind) == ("bedrock", "request")
    assert imported.name == "bedrock request (imported)"
    assert imported.warnings == []
    assert imported.state.toolset.names == ["get_weather"]
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool"]
    calls = conv.messages[1].tool_calls
    results = conv.messages[2].tool_results
    assert [r.call_id for r in results] == [c.id for c in calls] and len(calls) == 2
    # Converse marks a failed result with status: error.
    assert [r.is_error for r in results] == [False, True]


def test_an_imported_request_steps_on_with_fixed_handlers():
    imported = import_session((WIRE / "openai-chat.request.initial.json").read_text())
    assert imported.state.next_phase == "declaration"
    player = ManualPlayer()
    session = Session(imported.state, player)
    session.step()
    player.write(
        Message(
            role="assistant",
            parts=[ToolCall(id="c1", name="get_weather", arguments={"location": "Paris"})],
        )
    )
    session.step()
    session.step()
    [result] = session.state.conversation.messages[-1].tool_results
    assert (result.call_id, result.content, result.is_error) == ("c1", "ok", False)
    assert isinstance(imported.state.toolset.entries[0].handler, FixedHandler)


@pytest.mark.parametrize(
    "name",
    [
        "anthropic.request.continuation.json",
        "openai-chat.request.continuation.json",
        "openai-responses.request.continuation.json",
        "gemini.request.continuation.json",
    ],
)
def test_an_imported_history_is_drawn_from_its_first_turn(name):
    imported = import_session((WIRE / name).read_text())
    state = imported.state
    arrows = [(a.kind, a.error) for a in sequence(state.events, imported.source)]
    # the weather turn: two calls, their two results (Tokyo's an error), then what comes next
    assert [k for k, _ in arrows].count("tool_call") == 2
    assert [k for k, _ in arrows].count("result") == 2
    assert ("result", True) in arrows
    assert (state.step, state.round) == (3, 1)
    assert state.next_phase == "continuation"
    player = ManualPlayer()
    session = Session(state, player)
    session.step()  # the results go back: the continuation arrow, round 2
    player.write(Message(role="assistant", parts=[Text(text="Paris 18, Tokyo unknown.")]))
    session.step()
    assert session.state.status == "finished"
    kinds = [e.kind for e in session.state.events]
    assert kinds[-3:] == ["continuation", "final_answer", "answer"]
    assert [e.step for e in session.state.events[-3:]] == [4, 5, 5]


def test_an_mcp_transcript_as_json_lines_imports():
    messages = json.loads((WIRE / "mcp.transcript.2025-11-25.json").read_text())
    lines = "\n".join(json.dumps(m.get("msg", m)) for m in messages) + "\n"
    imported = import_session(lines.encode())
    assert imported.source == "mcp"
    assert [t.name for t in imported.state.conversation.tools] == ["get_weather"]
    assert len(imported.state.conversation.messages) == 6


def test_an_exported_trace_comes_back_as_a_new_session(weather):
    data = export(weather, "trace", name="Paris demo").data
    imported = import_session(("\ufeff" + data).encode())
    state = imported.state
    assert (imported.source, imported.kind, imported.name) == (
        "flowdebug.trace",
        "trace",
        "Paris demo",
    )
    assert state.id != weather.id
    assert state.model_dump_json(exclude={"id"}) == weather.model_dump_json(exclude={"id"})


def test_a_run_json_trace_imports_with_its_scenario_handlers(capsys):
    assert cli.main(["run", "tasks", "--json"]) == 0
    imported = import_session(capsys.readouterr().out)
    state = imported.state
    assert state.scenario == "tasks" and state.status == "finished"
    assert state.toolset.names == Session.from_scenario("tasks").state.toolset.names
    assert state.toolset.entries[0].handler.kind == "python"
    assert len(state.events) > 10


def test_an_import_is_saved_only_when_a_store_is_given(tmp_path, weather):
    with open_store(str(tmp_path / "s.db")) as store:
        imported = import_session(export(weather, "trace").data, name="mine", store=store)
        [info] = store.list()
        assert (info.id, info.name) == (imported.state.id, "mine")
        assert store.load(info.id).conversation == weather.conversation


BAD = [
    ("", "$", "empty"),
    (b"\xff\xfe{}", "$", "not UTF-8"),
    ('{"messages": [', "$", "line 1 column 15"),
    ('{"a": 1}\n{"b": \n', "$", "line 2"),
    ("[1, 2]", "$", "not a payload of any protocol flowdebug speaks"),
    ("{}", "$", "not a payload of any protocol flowdebug speaks"),
    (
        '[{"name": "f", "input_schema": {"type": "object"}}]',
        "$",
        "tool declarations, not a conversation: add them on the Tools page",
    ),
    (
        # A Converse request whose toolConfig lacks the tools botocore's model requires.
        '{"messages": [{"role": "user", "content": [{"text": "hi"}]}], "toolConfig": {}}',
        "$.toolConfig.tools",
        "bedrock: $.toolConfig.tools: required field is missing",
    ),
    ('{"format": "flowdebug.trace/2"}', "$.format", "unknown trace version"),
    ('{"format": "flowdebug.trace/1"}', "$.conversation", "valid dictionary"),
    (
        '{"format": "flowdebug.trace/1", "conversation": {"messages": [{"role": "bot"}]}}',
        "$.conversation.messages[0].role",
        "'user'",
    ),
    (
        '{"messages": [{"role": "user", "parts": [{"kind": "tool_call", "name": "x"}]}]}',
        "$.messages[0].parts[0].id",
        "Field required",
    ),
    (
        '{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": 7}]}',
        "$.messages[0].content",
        "",
    ),
    (
        '{"messages": [{"role": "user", "parts": [{"kind": "text", "text": "\\ud800"}]}]}',
        "$",
        "surrogate",
    ),
    ('{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}', "$", "nothing to import"),
]


@pytest.mark.parametrize(("data", "path", "words"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_a_failed_import_names_the_json_path(data, path, words):
    with pytest.raises(CodecError) as info:
        import_session(data)
    assert info.value.path.startswith(path)
    assert words in str(info.value)


def test_a_failed_import_leaves_the_store_untouched(tmp_path, weather):
    db = tmp_path / "s.db"
    with open_store(str(db)) as store:
        store.save(weather, name="kept")

        def files() -> dict[str, str]:  # the data; -shm is SQLite's shared-memory index
            paths = [db, db.with_name("s.db-wal")]
            return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}

        before, listed = files(), store.list()
        for data, _, _ in BAD:
            with pytest.raises(CodecError):
                import_session(data, store=store)
        assert store.list() == listed
        assert files() == before


def test_results_without_their_calls_import_with_a_warning_that_says_why_nothing_is_drawn():
    imported = import_session((WIRE / "mcp.tools_call.response.paris.json").read_text())
    assert imported.state.events == []
    [warning] = [w for w in imported.warnings if w.code == "calls_missing"]
    assert "not the model turn that asked for them" in warning.message
