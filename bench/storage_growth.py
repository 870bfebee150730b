"""Database size and save time per step for a session saved step by step, as the app does.

A weather agent makes two parallel calls per turn, so every step adds messages, trace
events, executions and wire exchanges; the session is saved after every step until its
history holds N messages (a store that saw every save: only what a step added is written).
Prints the database's size (with its WAL checkpointed) and the save time of a step over the
first, median and last 100 steps. Target: under 10 MB for 5,000 messages, flat save time.

``--wire``: every model turn also keeps its wire exchange as a live call does (the request's
body as flowdebug's codec encodes it, the SDK's body and its exact text, the response), made
offline by the OpenAI Chat codec: each request carries the whole history so far.

    .venv/bin/python bench/storage_growth.py [--messages 5000] [--wire]
    FLOWDEBUG_BENCH_PG=postgresql://user@127.0.0.1:5432/db .venv/bin/python bench/storage_growth.py

To measure another checkout's store (e.g. ``git worktree add /tmp/before HEAD``), run this
file with ``PYTHONPATH=/tmp/before``: the flowdebug it imports is the first on the path.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import flowdebug
from flowdebug import protocols
from flowdebug.engine.session.debugger import Session
from flowdebug.model import Conversation
from flowdebug.players import ScriptedPlayer
from flowdebug.players.base import PlayerTurn, WireExchange
from flowdebug.store.sessions import Store, open_store

# isort: split
# bench/store.py puts this checkout first on the path: import it after flowdebug and
# sample_tools, so a PYTHONPATH checkout is the one measured.
import sample_tools  # noqa: F401

# isort: split
from store import long_session

TARGET_MB = 10.0
WINDOW = 100  # steps per reported window


class WirePlayer:
    """A scripted player whose turns carry the exchange a live OpenAI Chat call records."""

    local = True
    name = "wire"

    def __init__(self, inner: ScriptedPlayer):
        self.inner = inner
        self.codec = protocols.get("openai-chat")

    def respond(self, conv: Conversation) -> PlayerTurn:
        turn = self.inner.respond(conv)
        body = self.codec.encode_request(conv).value
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
        response = self.codec.encode_response(turn.response).value
        turn.exchange = WireExchange(
            "openai-chat",
            request=json.loads(text),
            codec_request=body,
            url="https://api.openai.com/v1/chat/completions",
            status=200,
            response=response,
            raw_request=text,
            raw_response=json.dumps(response),
        )
        return turn


def new_session(wire: bool = False) -> Session:
    """bench/store.py's weather agent, before its first step."""
    session = long_session(1)
    if wire:
        session.player = WirePlayer(session.player)
    return session


def grow(store: Store, messages: int, wire: bool) -> list[float]:
    """Step and save until the history holds ``messages`` messages: each save's seconds."""
    session = new_session(wire)
    saves = []
    revision = 0
    while len(session.state.conversation.messages) < messages:
        session.step()
        session.undo_stack.clear()  # the app keeps a bounded undo stack; not what is measured
        t = time.perf_counter()
        revision = store.save(session.state, expected=revision).revision
        saves.append(time.perf_counter() - t)
    loaded = store.load(session.state.id)
    assert loaded.model_dump_json() == session.state.model_dump_json(), "reads back differently"
    return saves


def sqlite_bytes(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def postgres_bytes(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE c.relkind = 'r' AND c.relname LIKE 'flowdebug%'"
            " AND n.nspname = current_schema()"
        ).fetchone()
    return int(row[0]) if row else 0


def report(label: str, size: int, saves: list[float], messages: int) -> bool:
    ms = [s * 1000 for s in saves]

    def med(xs: list[float]) -> float:
        return statistics.median(xs) if xs else float("nan")

    mb = size / 1e6
    flag = "" if mb < TARGET_MB else f"  over the {TARGET_MB:g} MB target"
    print(f"{label}: {messages} messages, {len(saves)} steps saved one by one")
    print(f"  database size        {mb:8.2f} MB ({size / messages:,.0f} bytes/message){flag}")
    print(
        f"  save/step median ms  first {WINDOW}: {med(ms[:WINDOW]):.2f}   "
        f"median {WINDOW}: {med(ms[len(ms) // 2 - WINDOW // 2 :][:WINDOW]):.2f}   "
        f"last {WINDOW}: {med(ms[-WINDOW:]):.2f}   all: {med(ms):.2f}"
    )
    return mb < TARGET_MB


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--wire", action="store_true", help="keep live wire exchanges")
    args = parser.parse_args()
    wire = " with wire exchanges" if args.wire else ""
    print(f"flowdebug from {Path(flowdebug.__file__).parent}{wire}")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "growth.db"
        with open_store(str(path)) as store:
            saves = grow(store, args.messages, args.wire)
        ok &= report("SQLite (WAL)", sqlite_bytes(path), saves, args.messages)
    url = os.environ.get("FLOWDEBUG_BENCH_PG")
    if url:
        with open_store(url) as store:
            saves = grow(store, args.messages, args.wire)
        ok &= report("PostgreSQL (all flowdebug tables)", postgres_bytes(url), saves, args.messages)
    else:
        print("PostgreSQL: set FLOWDEBUG_BENCH_PG=postgresql://… to measure it too")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
