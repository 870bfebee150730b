"""A long recording opens fast: N exchanges of one agent's tool loop recorded through
flowdebug record's own path (``Recorder.model``, as the proxy calls it, each exchange made by
``model_exchange`` from the bytes an SDK would send and receive), then timed as the app opens
it: the store's load, the debugger Session, the first graphs (every protocol's) and the
teaching picture; then one Step (the last call executed). Target: open under 2 s at 2,000.

Each exchange keeps its whole request (parsed, and its exact text), so the loaded session
grows with the square of the exchanges (6.4 MB of exchange JSON at 150): the store's load
(the unpacked text, then pydantic's validate_json of the state) passes 2 s near 200 exchanges,
while the graphs stay near 0.1 s. Opening 2,000 needs the exchanges' requests loaded lazily or
recorded as what each adds to the one before.

    .venv/bin/python bench/record_long.py [--exchanges 2000]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flowdebug import protocols  # noqa: E402
from flowdebug.engine.session.debugger import Session  # noqa: E402
from flowdebug.model import (  # noqa: E402
    Conversation,
    Message,
    ModelResponse,
    Text,
    Tool,
    ToolCall,
    ToolResult,
)
from flowdebug.players.live.wire import Capture  # noqa: E402
from flowdebug.players.manual import ManualPlayer  # noqa: E402
from flowdebug.record.exchanges import model_exchange  # noqa: E402
from flowdebug.record.sessions import Recorder  # noqa: E402
from flowdebug.store.sessions import open_store  # noqa: E402
from flowdebug.views.debugger import graphs, refusals  # noqa: E402
from flowdebug.views.teaching import picture  # noqa: E402

TOOL = Tool(
    name="read_file",
    description="Read a file of the project.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def _body(value: object) -> bytes:
    """JSON as httpx (under every vendor SDK) sends it: compact, UTF-8."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _call(i: int) -> ToolCall:
    return ToolCall(id=f"toolu_{i:05d}", name="read_file", arguments={"path": f"src/m{i}.py"})


def record(store, protocol: str, n: int) -> str:
    """Record ``n`` exchanges of one conversation: each request carries the whole history so
    far, each answer asks for the next file. Returns the session's id."""
    codec = protocols.get(protocol)
    path = protocols.facts(protocol).route_help[0].split(" ", 1)[1]
    recorder = Recorder(store, "long recording")
    history = [Message(role="user", parts=[Text(text="Review the project file by file.")])]
    for i in range(n):
        conv = Conversation(system="You review code.", tools=[TOOL], messages=history)
        answer = Message(role="assistant", parts=[_call(i)])
        body = codec.encode_response(ModelResponse(message=answer, stop_reason="tool_use")).value
        capture = Capture(
            "POST",
            "http://upstream" + path,
            {},
            _body(codec.encode_request(conv).value),
        )
        capture.status, capture.complete = 200, True
        capture.response_headers = {"content-type": "application/json"}
        capture.response_body = bytearray(_body(body))
        recorder.begin()
        recorder.model(model_exchange(protocol, path, capture, 1.0))
        result = ToolResult(call_id=_call(i).id, content=f"# m{i}.py\nprint({i})")
        history = [*history, answer, Message(role="tool", parts=[result])]
    recorder.flush(timeout=3600)
    (sid,) = recorder.session_ids()
    recorder.close()
    return sid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--exchanges", type=int, default=2000)
    args = parser.parse_args()
    protocol = protocols.default_protocol()
    names = list(protocols.PROTOCOLS)
    store = open_store(str(Path(tempfile.mkdtemp()) / "long.db"))
    t0 = time.perf_counter()
    sid = record(store, protocol, args.exchanges)
    built = time.perf_counter() - t0

    c0, t0 = time.thread_time(), time.perf_counter()
    state = store.load(sid)
    t_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    session = Session(state, ManualPlayer())
    t_session = time.perf_counter() - t0
    t0 = time.perf_counter()
    drawn = graphs(session.state, names)
    picture(session.state, names, refusals(session.state.conversation, session.state.events, names))
    t_graph = time.perf_counter() - t0
    opened = t_load + t_session + t_graph
    cpu = time.thread_time() - c0  # what the opening itself cost, however loaded the machine
    t0 = time.perf_counter()
    before = session.state.step
    session.step()
    t_step = time.perf_counter() - t0
    assert session.state.step == before + 1 and len(drawn) == len(names)

    print(f"recording: {args.exchanges} exchanges, {len(state.conversation.messages)} messages, "
          f"{len(state.events)} trace events ({protocol}); recorded in {built:.1f} s")  # fmt: skip
    print(f"{'load s':>8}{'session s':>11}{'graphs s':>10}{'open s':>8}{'step s':>8}{'cpu s':>7}")
    print(
        f"{t_load:>8.3f}{t_session:>11.3f}{t_graph:>10.3f}{opened:>8.3f}{t_step:>8.3f}{cpu:>7.3f}"
    )
    print(f"open under 2 s: {'yes' if opened < 2 else 'NO'}")


if __name__ == "__main__":
    main()
