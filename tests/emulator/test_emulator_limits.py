"""The emulator left running for a room: body cap, socket deadlines, bounded log, clean stop."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from flowdebug import protocols
from flowdebug.emulator.server import MAX_BODY, Emulator
from tests import cases, plain_http


def request_body(protocol: str, **extra):
    return {**protocols.get(protocol).encode_request(cases.WEATHER_INITIAL).value, **extra}


def closed_after(sock: socket.socket, limit: float) -> float:
    """Seconds until the server closes ``sock`` (reading whatever it answers first)."""
    started = time.monotonic()
    sock.settimeout(limit)
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    except TimeoutError:
        pytest.fail(f"the server kept the socket open for more than {limit} s")
    return time.monotonic() - started


def connect(emu: Emulator) -> socket.socket:
    host, port = emu.url.removeprefix("http://").rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=5)


EMULATOR = {"read_timeout": 0.5, "keep_alive": 0.5}  # the conftest's emulator, with short deadlines


# -- the body cap -------------------------------------------------------------------------


def test_a_2_mib_body_gets_the_vendors_413_and_the_server_goes_on(emulator):
    assert MAX_BODY == 1 << 20
    big = request_body("anthropic", metadata={"user_id": "x" * (2 << 20)})
    r = plain_http.post(emulator.url + "/v1/messages", json=big, timeout=10)
    assert r.status_code == 413
    assert r.json()["type"] == "error"
    assert r.json()["error"]["type"] == "request_too_large"
    assert str(MAX_BODY) in r.json()["error"]["message"]
    big = request_body("openai-chat", user="x" * (2 << 20))
    r = plain_http.post(emulator.url + "/v1/chat/completions", json=big, timeout=10)
    assert r.status_code == 413 and set(r.json()["error"]) == {"message", "type", "param", "code"}
    r = plain_http.post(emulator.url + "/model/m/converse", content=b"{" * (2 << 20), timeout=10)
    assert r.status_code == 413 and str(MAX_BODY) in r.json()["message"]  # Bedrock's shape
    r = plain_http.post(emulator.url + "/v1/messages", json=request_body("anthropic"), timeout=10)
    assert r.status_code == 200 and r.json()["content"][0]["input"]["location"] == "Paris"


def test_a_chunked_body_is_refused_once_it_passes_the_cap():
    def chunks() -> Iterator[bytes]:
        yield b'{"model": "m", "pad": "'
        for _ in range(300):
            yield b"x" * 1000
        yield b'"}'

    with Emulator(max_body=100_000) as emu:
        r = plain_http.post(emu.url + "/v1/messages", content=chunks(), timeout=10)
        assert r.status_code == 413 and "100000 bytes" in r.json()["error"]["message"]
        assert len(emu.requests) == 0  # nothing of it was kept
        ok = plain_http.post(emu.url + "/v1/messages", json=request_body("anthropic"), timeout=10)
        assert ok.status_code == 200


def test_json_nested_100000_deep_is_a_400_not_a_crash(emulator):
    deep = b"[" * 100_000 + b"]" * 100_000
    r = plain_http.post(emulator.url + "/v1/chat/completions", content=deep, timeout=10)
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]["message"]
    assert plain_http.get(emulator.url + "/health", timeout=10).status_code == 200


def test_bedrock_answers_a_body_that_is_not_json_with_its_400(emulator):
    # Bedrock's error body keeps its message at the top, not under "error".
    r = plain_http.post(emulator.url + "/model/m/converse", content=b"{nope", timeout=10)
    assert r.status_code == 400 and r.json()["message"] == "the request body is not valid JSON"


# -- socket deadlines ----------------------------------------------------------------------


def test_a_socket_that_sends_half_a_request_line_and_waits_is_closed_within_the_limit(emulator):
    with connect(emulator) as sock:
        sock.sendall(b"POST /v1/messages HTT")
        assert closed_after(sock, 3) < 1.5


def test_a_socket_that_sends_headers_and_half_the_body_is_closed_within_the_limit(emulator):
    with connect(emulator) as sock:
        sock.sendall(
            b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\n"
            b'content-type: application/json\r\ncontent-length: 100\r\n\r\n{"model":'
        )
        assert closed_after(sock, 3) < 1.5
    assert plain_http.get(emulator.url + "/health", timeout=10).status_code == 200


def test_a_socket_trickling_a_byte_at_a_time_is_closed_at_the_deadline(emulator):
    # Each byte resets uvicorn's keep-alive timer; the request deadline does not move.
    started = time.monotonic()
    with connect(emulator) as sock:
        try:
            for byte in b"POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\nx-pad: " + b"a" * 100:
                sock.sendall(bytes([byte]))
                time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass
        closed_after(sock, 3)
    # 0.5 s deadline; the trickle alone would take 7.5 s (room for a loaded machine)
    assert time.monotonic() - started < 3


def test_an_idle_connection_is_closed_after_the_keep_alive(emulator):
    with connect(emulator) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        sock.settimeout(3)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        assert closed_after(sock, 3) < 1.5


def test_a_slow_answer_is_not_cut_by_the_read_deadline(emulator):
    # The deadline is for receiving the request; answering may take longer.
    r = plain_http.post(
        emulator.url + "/v1/messages", json=request_body("anthropic", model="slow-1"), timeout=10
    )
    assert r.status_code == 200


# -- the request log -----------------------------------------------------------------------


def test_the_request_log_keeps_only_the_newest_entries():
    with Emulator(keep_requests=3) as emu:
        for n in range(5):
            plain_http.post(
                emu.url + "/v1/messages",
                json=request_body("anthropic", model=f"error-40{n}"),
                timeout=10,
            )
        assert [e["model"] for e in emu.requests] == ["error-402", "error-403", "error-404"]


def test_the_request_log_keeps_a_bounded_number_of_body_bytes():
    with Emulator(keep_bytes=50_000) as emu:
        for n in range(6):
            body = request_body(
                "anthropic", model=f"error-40{n}", metadata={"user_id": "x" * 20_000}
            )
            plain_http.post(emu.url + "/v1/messages", json=body, timeout=10)
        assert sum(e["bytes"] for e in emu.requests) <= 50_000
        assert [e["model"] for e in emu.requests] == ["error-404", "error-405"]


# -- shutdown -------------------------------------------------------------------------------


def test_stop_ends_a_slow_answer_and_leaves_no_thread_and_no_listener():
    before = set(threading.enumerate())
    emu = Emulator().start()
    url = emu.url
    answers: list[int] = []

    def slow() -> None:
        body = request_body("anthropic", model="slow-30")
        try:
            answers.append(plain_http.post(url + "/v1/messages", json=body, timeout=40).status_code)
        except httpx.HTTPError:
            answers.append(0)

    client = threading.Thread(target=slow)
    client.start()
    while not emu.requests:
        time.sleep(0.01)
    started = time.monotonic()
    emu.stop()
    assert time.monotonic() - started < 3
    client.join(timeout=10)
    assert answers == [200]  # the wait ended and the turn was still answered
    assert set(threading.enumerate()) - before == set()
    with pytest.raises(httpx.ConnectError):
        plain_http.get(url + "/health", timeout=2)
