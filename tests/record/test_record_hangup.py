"""An agent that hangs up before the answer's end: OpenAI's SDK closes a stream at
``data: [DONE]``, before the body's last chunk. The proxy still reads the answer to its end for
the recording (for a grace of :data:`flowdebug.record.proxy.GRACE` seconds), so a complete
answer is recorded as complete however early the agent let go; beyond the grace the upstream
is cut off and the exchange says so. Before, whether the proxy or the agent saw the end first
decided the flag (CI once recorded a whole OpenAI stream as incomplete)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from flowdebug.record import proxy as record_proxy
from flowdebug.record.server import RecordingProxy
from flowdebug.record.sessions import Recorder
from flowdebug.store.sessions import open_store
from tests import http_stub

EVENT = {
    "id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
    "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"},
                 "finish_reason": "stop"}],
}  # fmt: skip


class _LateEnd(BaseHTTPRequestHandler):
    """An OpenAI Chat stream whose body ends ``server.lag`` seconds after ``[DONE]``."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for data in (f"data: {json.dumps(EVENT)}\n\n", "data: [DONE]\n\n"):
            chunk = data.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
        time.sleep(self.server.lag)  # type: ignore[attr-defined]
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def upstream() -> Iterator[ThreadingHTTPServer]:
    with http_stub.serving(ThreadingHTTPServer(("127.0.0.1", 0), _LateEnd)) as server:
        yield server


def _recorded_after_a_hang_up(upstream, tmp_path, lag: float) -> tuple[dict, float]:
    """The exchange recorded when the agent stops reading at ``[DONE]``, and how long the
    agent's own request took."""
    upstream.lag = lag
    with open_store(str(tmp_path / "r.db")) as store:
        recorder = Recorder(store, "hang-up")
        with RecordingProxy(recorder, upstream=f"http://127.0.0.1:{upstream.server_port}") as p:
            url = p.base_url("openai-chat") + "/chat/completions"
            body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
            started = time.perf_counter()
            with httpx.Client() as client, client.stream("POST", url, json=body) as answer:
                lines = []
                for line in answer.iter_lines():
                    lines.append(line)
                    if line == "data: [DONE]":  # the agent has all it needs and hangs up
                        break
                assert lines[0] == f"data: {json.dumps(EVENT)}"
            took = time.perf_counter() - started
            recorder.flush()
        recorder.close()
        [info] = store.list()
        [exchange] = store.load(info.id).exchanges
    return exchange, took


def test_an_answer_that_ends_after_the_agent_hung_up_is_recorded_whole(
    upstream, tmp_path, monkeypatch
):
    monkeypatch.setattr(record_proxy, "GRACE", 5.0)
    exchange, took = _recorded_after_a_hang_up(upstream, tmp_path, lag=0.4)
    assert took < 0.4  # the agent was not kept waiting for the body's end
    assert exchange["complete"] is True
    assert exchange["stream_events"] == [EVENT]
    assert exchange["elapsed_ms"] >= 400  # the answer's whole time on the wire


def test_beyond_the_grace_the_upstream_is_cut_off_and_recorded_as_incomplete(
    upstream, tmp_path, monkeypatch
):
    monkeypatch.setattr(record_proxy, "GRACE", 0.2)
    exchange, _ = _recorded_after_a_hang_up(upstream, tmp_path, lag=3.0)
    assert exchange["complete"] is False
    assert exchange["stream_events"] == [EVENT]
    assert 200 <= exchange["elapsed_ms"] < 2500


def test_an_answer_cut_off_while_the_proxy_stops_is_still_recorded(upstream, tmp_path, monkeypatch):
    """The grace is over and the upstream is being closed when the proxy stops, which cancels
    that closing again: the exchange is recorded all the same (before, it was lost and the
    recorder's flush waited out its whole timeout for it)."""
    monkeypatch.setattr(record_proxy, "GRACE", 0.1)
    closing = httpx.Response.aclose

    async def slow_close(self: httpx.Response) -> None:
        await asyncio.sleep(1.0)  # widens the moment the second cancel lands in
        await closing(self)

    monkeypatch.setattr(httpx.Response, "aclose", slow_close)
    upstream.lag = 3.0
    with open_store(str(tmp_path / "r.db")) as store:
        recorder = Recorder(store, "stopped")
        with RecordingProxy(recorder, upstream=f"http://127.0.0.1:{upstream.server_port}") as p:
            url = p.base_url("openai-chat") + "/chat/completions"
            body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
            with httpx.Client() as client, client.stream("POST", url, json=body) as answer:
                next(answer.iter_lines())  # the first event, then the agent hangs up
            time.sleep(0.3)  # the grace is over: the upstream is being closed
        started = time.perf_counter()
        recorder.flush(timeout=10)
        assert time.perf_counter() - started < 5
        recorder.close()
        [info] = store.list()
        [exchange] = store.load(info.id).exchanges
    assert exchange["complete"] is False
    assert exchange["stream_events"] == [EVENT]
