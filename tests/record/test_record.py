"""``flowdebug record``: the real SDK clients (through flowdebug's live players: anthropic,
openai chat and responses, google-genai, botocore) and the MCP SDK's client go through the
recording proxy to the emulator and to the sample MCP server; the recorded session holds what
each client sent and received, byte for byte, with its keys redacted.

Everything binds 127.0.0.1 on a free port; nothing reaches the network.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from flowdebug import protocols
from flowdebug.cli.main import main
from flowdebug.players.live.player import live_player
from flowdebug.players.live.settings import LIVE_PROTOCOLS
from flowdebug.record.exchanges import raw_body
from flowdebug.record.server import RecordingProxy
from flowdebug.record.sessions import Recorder, extends, wire_history
from flowdebug.store.sessions import open_store
from tests import cases, plain_http

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-flowdebug-record-test-0123456789"
# botocore signs with SigV4 from an access key id and secret (the signature is the secret part).
KEYS = {LIVE_PROTOCOLS[-1]: "AKIARECORDTEST0001:record-test-secret-access-key-0123"}


@pytest.fixture
def store(tmp_path):
    with open_store(str(tmp_path / "record.db")) as s:
        yield s


@pytest.fixture
def recording(store, emulator):
    recorder = Recorder(store, "agent run")
    with RecordingProxy(recorder, upstream=emulator.url) as proxy:
        yield recorder, proxy
    recorder.close()


def _secrets_of(key: str) -> list[str]:
    return [part for part in key.split(":") if len(part) > 8]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("protocol", LIVE_PROTOCOLS)
def test_recorded_session_holds_what_the_sdk_sent_and_received(
    recording, store, emulator, protocol, stream
):
    recorder, proxy = recording
    key = KEYS.get(protocol, KEY)
    player = live_player(protocol, base_url=proxy.base_url(protocol), api_key=key, stream=stream)

    first = player.respond(cases.WEATHER_INITIAL)
    final = player.respond(cases.WEATHER_CONTINUATION)
    recorder.flush()

    # The continuation's history extends the first request's: one conversation, one session.
    [info] = store.list()
    state = store.load(info.id)
    assert info.name == "agent run"
    sent = [first.exchange, final.exchange]
    recorded = state.exchanges
    assert [x["protocol"] for x in recorded] == [protocol, protocol]
    for wire, got in zip(sent, recorded, strict=True):
        assert raw_body(got, "raw_request") == wire.raw_request.encode()
        assert got["status"] == wire.status == 200
        if stream:
            assert got["stream_events"] == wire.stream_events
            assert got["response"] is None
        else:
            assert raw_body(got, "raw_response") == wire.raw_response.encode()
            assert got["response"] == wire.response
        assert got["complete"] is True
        # The agent's path, on the upstream behind the vendor's base path.
        rest = got["path"].split("?")[0].removeprefix(protocols.facts(protocol).base_path)
        assert got["url"].split("?")[0] == emulator.url + rest
    # The session is the conversation the agent had: the last request plus the final answer.
    assert state.conversation.messages[-1].text.startswith("Paris is 18 degrees C")
    assert len(state.conversation.messages) == len(cases.WEATHER_CONTINUATION.messages) + 1
    # Each exchange is at the step of the model turn it brought (what the Debugger shows).
    steps = [x["step"] for x in recorded]
    assert steps == sorted(set(steps)) and steps[-1] == state.events[-1].step
    # Keys passed through (the emulator answered) and were never recorded.
    headers = recorded[0]["request_headers"]
    assert "[redacted]" in headers.values()
    text = json.dumps(store.load(info.id).model_dump(mode="json"))
    for secret in _secrets_of(key):
        assert secret not in text


def test_event_stream_frames_pass_through_as_the_emulator_sent_them(recording, store):
    recorder, proxy = recording
    protocol = LIVE_PROTOCOLS[-1]
    player = live_player(
        protocol, base_url=proxy.base_url(protocol), api_key=KEYS[protocol], stream=True
    )
    turn = player.respond(cases.WEATHER_INITIAL)
    recorder.flush()
    [info] = store.list()
    [got] = store.load(info.id).exchanges
    raw = raw_body(got, "raw_response")
    assert "raw_response_base64" in got and raw is not None
    # AWS event-stream: binary frames, each with its CRC; read back, they are the events.
    assert raw[:4] == len(raw[: int.from_bytes(raw[:4], "big")]).to_bytes(4, "big")
    assert got["stream_events"] == turn.exchange.stream_events
    assert got["response_headers"]["content-type"] == "application/vnd.amazon.eventstream"


def test_two_conversations_become_two_sessions_and_a_continuation_joins_its_own(recording, store):
    recorder, proxy = recording
    protocol = LIVE_PROTOCOLS[0]
    player = live_player(protocol, base_url=proxy.base_url(protocol), api_key=KEY)
    player.respond(cases.WEATHER_INITIAL)
    player.respond(cases.WEATHER_INITIAL)  # the same question again: a new conversation
    player.respond(cases.WEATHER_CONTINUATION)  # extends both: joins the latest
    recorder.flush()
    sessions = {i.name: store.load(i.id) for i in store.list()}
    assert sorted(sessions) == ["agent run", "agent run · 2"]
    assert len(sessions["agent run"].exchanges) == 1
    assert len(sessions["agent run · 2"].exchanges) == 2


def test_history_prefix_rule():
    a = {"role": "user", "content": "hi"}
    b = {"role": "assistant", "content": "yo"}
    protocol = LIVE_PROTOCOLS[1]
    assert wire_history(protocol, {"messages": [a, b]}) == [a, b]
    assert extends([a, b], [a]) and not extends([a], [a]) and not extends([b, a], [a])


def test_unreachable_upstream_answers_the_vendors_502_and_is_recorded(store):
    recorder = Recorder(store, "down")
    protocol = LIVE_PROTOCOLS[1]
    with RecordingProxy(recorder, upstream="http://127.0.0.1:9") as proxy:
        r = plain_http.post(
            proxy.base_url(protocol) + "/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
            headers={"authorization": f"Bearer {KEY}"},
        )
        recorder.flush()
    recorder.close()
    assert r.status_code == 502
    assert "cannot be reached" in r.json()["error"]["message"]
    [info] = store.list()
    [got] = store.load(info.id).exchanges
    assert got["status"] == 502 and got["request_headers"]["authorization"] == "[redacted]"


def test_sessions_list_and_export_read_flowdebug_db(recording, store, capsys, monkeypatch):
    recorder, proxy = recording
    protocol = LIVE_PROTOCOLS[0]
    live_player(protocol, base_url=proxy.base_url(protocol), api_key=KEY).respond(
        cases.WEATHER_INITIAL
    )
    recorder.flush()
    monkeypatch.setenv("FLOWDEBUG_DB", store.url)
    assert main(["sessions", "list"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    session_id, _, messages, status, name = line.split("\t")
    assert (messages, status, name) == ("2", "ready", "agent run")
    assert main(["sessions", "export", session_id]) == 0
    trace = json.loads(capsys.readouterr().out)
    assert trace["format"] == "flowdebug.trace/1"
    assert trace["metadata"]["name"] == "agent run"
    assert trace["exchanges"][0]["protocol"] == protocol
    assert main(["sessions", "export", "nope"]) == 2


# -- MCP ----------------------------------------------------------------------------------


def _mcp_client_session(read_write_factory):
    from mcp import ClientSession

    async def run():
        async with read_write_factory() as streams, ClientSession(streams[0], streams[1]) as s:
            await s.initialize()
            tools = await s.list_tools()
            result = await s.call_tool("get_weather", {"location": "Paris", "unit": "c"})
            return tools, result

    return asyncio.run(run())


def test_mcp_stdio_is_wrapped_and_every_line_recorded(tmp_path):
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    db = tmp_path / "mcp.db"
    server = f"{sys.executable} -m sample_tools.mcp_server"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "flowdebug.cli", "record", "--mcp-stdio", server, "--session", "mcp run"],
        env={"FLOWDEBUG_DB": str(db), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
        cwd=str(REPO),
    )
    tools, result = _mcp_client_session(lambda: stdio_client(params))
    assert "get_weather" in [t.name for t in tools.tools]
    assert not result.is_error
    with open_store(str(db)) as store:
        [info] = store.list()
        state = store.load(info.id)
    assert info.name == "mcp run"
    lines = state.exchanges
    assert {x["transport"] for x in lines} == {"stdio"}
    methods = [m.get("method") for x in lines if x["direction"] == "client" for m in x["messages"]]
    assert methods[:3] == ["initialize", "notifications/initialized", "tools/list"]
    assert "tools/call" in methods
    answers = [m for x in lines if x["direction"] == "server" for m in x["messages"]]
    assert answers[-1]["result"]["content"] == [
        c.model_dump(exclude_none=True) for c in result.content
    ]
    # Each line is kept as it went: the raw line parses to the recorded messages.
    assert all(json.loads(raw_body(x, "raw")) == x["messages"][0] for x in lines)


def test_mcp_http_passes_through_and_joins_the_model_conversation(store, emulator):
    from mcp.client.streamable_http import streamable_http_client

    server = subprocess.Popen(
        [sys.executable, "-m", "sample_tools.mcp_server", "--http", "--port", "0"],
        cwd=REPO,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
        url = next(w for w in line.split() if w.startswith("http://")).rstrip(".")
        recorder = Recorder(store, "agent with tools")
        with RecordingProxy(recorder, upstream=emulator.url, mcp_url=url) as proxy:
            tools, result = _mcp_client_session(lambda: streamable_http_client(proxy.url + "/mcp"))
            protocol = LIVE_PROTOCOLS[0]
            live_player(protocol, base_url=proxy.base_url(protocol), api_key=KEY).respond(
                cases.WEATHER_INITIAL
            )
            recorder.flush()
        recorder.close()
    finally:
        server.terminate()
        server.wait(10)
    assert not result.is_error and "get_weather" in [t.name for t in tools.tools]
    [info] = store.list()
    state = store.load(info.id)
    kinds = [x["protocol"] for x in state.exchanges]
    assert kinds[-1] == protocol and set(kinds[:-1]) == {"mcp"}
    client = [m for x in state.exchanges[:-1] if x["direction"] == "client" for m in x["messages"]]
    assert [m.get("method") for m in client][:1] == ["initialize"]
    server_said = [
        m for x in state.exchanges[:-1] if x["direction"] == "server" for m in x["messages"]
    ]
    call_id = next(m["id"] for m in client if m.get("method") == "tools/call")
    answer = next(m for m in server_said if m.get("id") == call_id)
    assert answer["result"]["content"][0]["text"] == result.content[0].text
