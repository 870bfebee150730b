"""A long recording opens fast: N exchanges of one agent's tool loop recorded through
flowdebug record's own path (``Recorder.model``, as the proxy calls it, each exchange made by
``model_exchange`` from the bytes an SDK would send and receive), then opened in a fresh
process as the Debugger opens it: the store's ``resume_at`` (the state, its undo history, the
debugger Session), the first graphs (every protocol's) and the teaching picture; then one
Step (the last call executed) and its save. The Protocols page's views of the turn (every
vendor's request, pretty-printed) are timed apart. Target: open under 2 s at 2,000.

Each exchange's request carries the whole history so far, so the bytes an agent sends grow
with the square of its turns. A session keeps each request sharing the history of the one
before (engine/session/exchange_bodies.py) and the store reads them back as shared objects
(store/objects.py): at 2,000 exchanges (Anthropic) opening took 1.5-1.8 s of CPU and 256 MB
(27-11-2026, load 12-17); before, 1,000 took 13.7 s of CPU and 2.5 GB, and 2,000 did not open
under a 10 GB cap. Recording 2,000 takes about 12 minutes of CPU (each save still packs the
whole request: O(history) per exchange).

Printed: the recording's CPU and peak memory, then the opening's times (wall and CPU: the
machine is shared, compare CPU), the opening process's resident memory before and after and
its peak.

    .venv/bin/python bench/record_long.py [--exchanges 2000] [--db FILE]
    .venv/bin/python bench/record_long.py --open FILE   # open a recording already made
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.procstat import rss_mb  # noqa: E402
from flowdebug import protocols  # noqa: E402
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
from flowdebug.record.exchanges import model_exchange  # noqa: E402
from flowdebug.record.sessions import Recorder  # noqa: E402
from flowdebug.store.sessions import open_store  # noqa: E402
from flowdebug.views.debugger import graphs, refusals  # noqa: E402
from flowdebug.views.protocols import step_views  # noqa: E402
from flowdebug.views.teaching import picture  # noqa: E402

CHILD = "FLOWDEBUG_BENCH_OPENING"  # set in the process that opens the recording

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
        recorder.flush(timeout=3600)  # a model answers slower than the recorder saves
        result = ToolResult(call_id=_call(i).id, content=f"# m{i}.py\nprint({i})")
        history = [*history, answer, Message(role="tool", parts=[result])]
    recorder.flush(timeout=3600)
    (sid,) = recorder.session_ids()
    recorder.close()
    return sid


def peak_mb() -> float:
    """The process's peak resident memory so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def open_recording(db: str, sid: str | None = None) -> None:
    """Open the recording as the app does and print one line of figures (run in a process
    of its own, so its memory is the opening's)."""
    copy = str(Path(tempfile.mkdtemp()) / "copy.db")  # the Step's save stays out of ``db``
    with sqlite3.connect(db) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    store = open_store(copy)
    sid = sid or store.list()[0].id
    names = list(protocols.PROTOCOLS)
    before = rss_mb(os.getpid())
    c0, t0 = time.process_time(), time.perf_counter()
    session, revision = store.resume_at(sid)
    t_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    state = session.state
    drawn = graphs(state, names)
    picture(state, names, refusals(state.conversation, state.events, names))
    t_graph = time.perf_counter() - t0
    cpu = time.process_time() - c0
    after = rss_mb(os.getpid())
    c0 = time.process_time()
    step_views(session, names)  # the Protocols page: every vendor's request for the turn
    cpu_wire = time.process_time() - c0
    c0, t0 = time.process_time(), time.perf_counter()
    step = state.step
    session.step()
    store.save(session.state, expected=revision, undo=session.undo_stack)  # as the page does
    t_step, cpu_step = time.perf_counter() - t0, time.process_time() - c0
    assert session.state.step == step + 1 and len(drawn) == len(names)
    print(
        f"{len(state.exchanges)} {len(state.conversation.messages)} {len(state.events)} "
        f"{t_load:.3f} {t_graph:.3f} {cpu:.3f} {t_step:.3f} {cpu_step:.3f} {cpu_wire:.3f} "
        f"{before:.0f} {after:.0f} {peak_mb():.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--exchanges", type=int, default=2000)
    parser.add_argument("--db", help="the database to record into (default: a new temp file)")
    parser.add_argument("--open", nargs="+", metavar="DB [SID]", help="only open DB's recording")
    args = parser.parse_args()
    if args.open:
        if os.environ.get(CHILD):
            open_recording(*args.open)
        else:
            report(*args.open)
        return
    protocol = protocols.default_protocol()
    db = args.db or str(Path(tempfile.mkdtemp()) / "long.db")
    store = open_store(db)
    c0, t0 = time.process_time(), time.perf_counter()
    sid = record(store, protocol, args.exchanges)
    built, built_cpu = time.perf_counter() - t0, time.process_time() - c0
    store.close()
    print(
        f"recorded {args.exchanges} exchanges ({protocol}) in {built:.1f} s, "
        f"{built_cpu:.1f} s CPU, peak {peak_mb():.0f} MB"
    )
    report(db, sid)


def report(db: str, sid: str | None = None) -> None:
    """Open the recording in a process of its own and print its figures."""
    command = [sys.executable, __file__, "--open", db, *([sid] if sid else [])]
    env = {**os.environ, CHILD: "1"}
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    out = done.stdout.split()
    ex, msgs, events = out[:3]
    load, graph, cpu, step, cpu_step, cpu_wire, before, after, peak = map(float, out[3:])
    print(f"opened: {ex} exchanges, {msgs} messages, {events} trace events")
    print(f"{'load s':>8}{'graphs s':>10}{'open s':>8}{'cpu s':>7}{'step s':>8}{'cpu s':>7}"
          f"{'MB before':>11}{'MB after':>10}{'MB peak':>9}{'protocols cpu s':>17}")  # fmt: skip
    print(
        f"{load:>8.3f}{graph:>10.3f}{load + graph:>8.3f}{cpu:>7.3f}{step:>8.3f}{cpu_step:>7.3f}"
        f"{before:>11.0f}{after:>10.0f}{peak:>9.0f}{cpu_wire:>17.3f}"
    )
    print(f"open under 2 s: {'yes' if load + graph < 2 else 'NO'} (CPU {cpu:.2f} s)")


if __name__ == "__main__":
    main()
