"""Save and load time of the session store for sessions of 100 and 1,000 messages.

A session is stepped to the size (a weather agent making two parallel calls per turn, so
every turn adds messages, trace events and executions), saved once whole (``cold``: a
store that has not seen it, e.g. after a restart), then stepped and saved after each step
as the app does (``step``: only what the step added is written), then loaded.
Target: a step's save under 20 ms at 1,000 messages.

    .venv/bin/python bench/store.py [--repeat 15]
    FLOWDEBUG_BENCH_PG=postgresql://user@127.0.0.1:5432/db .venv/bin/python bench/store.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flowdebug.engine.execution.runtime import Policy  # noqa: E402
from flowdebug.engine.session.debugger import Session  # noqa: E402
from flowdebug.engine.session.session_state import SessionState  # noqa: E402
from flowdebug.model import Conversation, Message, Text  # noqa: E402
from flowdebug.players import ScriptedPlayer, ScriptedTurn  # noqa: E402
from flowdebug.store.sessions import Store, open_store  # noqa: E402
from sample_tools import toolset  # noqa: E402

TARGET_MS = 20.0


def long_session(messages: int) -> Session:
    """A session stepped until its history holds ``messages`` messages."""
    tools = toolset("weather")
    turn = ScriptedTurn.model_validate(
        {
            "text": "Checking both cities again.",
            "calls": [
                {"name": "get_weather", "arguments": {"location": "Paris", "unit": "c"}},
                {"name": "get_weather", "arguments": {"location": "Lyon", "unit": "c"}},
            ],
        }
    )
    state = SessionState(
        conversation=Conversation(
            system="You are a weather assistant.",
            tools=tools.tools,
            messages=[Message(role="user", parts=[Text(text="Keep watching the weather.")])],
        ),
        toolset=tools,
        policy=Policy(max_rounds=10_000),
    )
    session = Session(state, ScriptedPlayer([turn], repeat_last=True))
    while len(session.state.conversation.messages) < messages:
        session.step()
    session.undo_stack.clear()
    return session


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def measure(store: Store, messages: int, repeat: int) -> dict[str, float]:
    session = long_session(messages)
    cold = []
    for _ in range(repeat):
        store._written.remember(session.state.id, None)  # as after a restart: nothing known
        t = time.perf_counter()
        store.save(session.state)
        cold.append(time.perf_counter() - t)
    step = []
    for _ in range(repeat):
        session.step()
        t = time.perf_counter()
        store.save(session.state)
        step.append(time.perf_counter() - t)
    load = []
    for _ in range(repeat):
        t = time.perf_counter()
        loaded = store.load(session.state.id)
        load.append(time.perf_counter() - t)
    assert loaded.model_dump_json() == session.state.model_dump_json()
    return {"step": median_ms(step), "cold": median_ms(cold), "load": median_ms(load)}


def run(label: str, store: Store, repeat: int) -> bool:
    ok = True
    print(f"{label}")
    print(f"  {'messages':>8}  {'save/step':>10}  {'save cold':>10}  {'load':>8}   (median ms)")
    for n in (100, 1000):
        r = measure(store, n, repeat)
        flag = ""
        if n == 1000 and r["step"] >= TARGET_MS:
            flag, ok = f"  over the {TARGET_MS:g} ms target", False
        print(f"  {n:>8}  {r['step']:>10.2f}  {r['cold']:>10.2f}  {r['load']:>8.2f}{flag}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as tmp, open_store(str(Path(tmp) / "bench.db")) as store:
        ok &= run("SQLite (WAL)", store, args.repeat)
    url = os.environ.get("FLOWDEBUG_BENCH_PG")
    if url:
        with open_store(url) as store:
            ok &= run("PostgreSQL", store, args.repeat)
    else:
        print("PostgreSQL: set FLOWDEBUG_BENCH_PG=postgresql://… to measure it too")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
