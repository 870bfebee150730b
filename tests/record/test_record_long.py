"""A long recording stays the size of what its agent added: the recorder keeps each request
sharing the history of the one before it, and the session read back from the store holds the
same exchanges, exported byte for byte as recorded, each body the bytes that were sent."""

from __future__ import annotations

import json

import pytest

from flowdebug import protocols
from flowdebug.model import Conversation, Message, ModelResponse, Text, Tool, ToolCall, ToolResult
from flowdebug.players.live.wire import Capture
from flowdebug.record.exchanges import model_exchange, raw_body
from flowdebug.record.sessions import Recorder, wire_history
from flowdebug.store.rows import state_json
from flowdebug.store.sessions import open_store

TOOL = Tool(name="read_file", description="Read a file.", parameters={"type": "object"})


def _body(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _record(recorder: Recorder, protocol: str, turns: int) -> list[bytes]:
    """An agent's tool loop of ``turns`` requests, each carrying the whole history; the
    request bodies sent."""
    codec = protocols.get(protocol)
    path = protocols.facts(protocol).route_help[0].split(" ", 1)[1]
    history = [Message(role="user", parts=[Text(text="Read every file.")])]
    sent = []
    for i in range(turns):
        call = ToolCall(id=f"call_{i}", name="read_file", arguments={"path": f"m{i}.py"})
        answer = Message(role="assistant", parts=[call])
        conv = Conversation(tools=[TOOL], messages=history)
        sent.append(_body(codec.encode_request(conv).value))
        capture = Capture("POST", "http://upstream" + path, {}, sent[-1])
        capture.status, capture.complete = 200, True
        capture.response_headers = {"content-type": "application/json"}
        response = ModelResponse(message=answer, stop_reason="tool_use")
        capture.response_body = bytearray(_body(codec.encode_response(response).value))
        recorder.begin()
        recorder.model(model_exchange(protocol, path, capture, 1.0))
        result = Message(role="tool", parts=[ToolResult(call_id=call.id, content=f"print({i})")])
        history = [*history, answer, result]
    recorder.flush()
    return sent


@pytest.mark.parametrize("protocol", ["anthropic", "openai-responses", "gemini"])
def test_a_recording_shares_each_history_item_and_reads_back_as_sent(tmp_path, protocol):
    with open_store(str(tmp_path / "r.db")) as store:
        recorder = Recorder(store, "long")
        sent = _record(recorder, protocol, 12)
        (rec,) = recorder.recordings
        recorder.close()
        kept = rec.state.exchanges
        first, last = (wire_history(protocol, x["request"]) for x in (kept[0], kept[-1]))
        assert len(last) > len(first) and all(a is b for a, b in zip(first, last, strict=False))
        loaded = store.load(rec.state.id)
    assert [raw_body(x, "raw_request") for x in loaded.exchanges] == sent
    exported = json.loads(state_json(loaded))["exchanges"]
    assert [x["raw_request"].encode() for x in exported] == sent
    assert state_json(loaded) == state_json(rec.state)
