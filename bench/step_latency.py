"""Server-side time of one `Step` on the Debugger page, all five protocols shown.

Builds sessions whose histories hold about 20, 200 and 1,000 messages (a task agent that
keeps calling tools), opens the Debugger page in Streamlit's AppTest (the same script run the
server does for a click, without the browser), clicks Step and times the script run.
Targets: median under 100 ms at 200 messages and under 400 ms at 1,000.

    .venv/bin/python bench/step_latency.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from flowdebug.engine.execution.runtime import Policy  # noqa: E402
from flowdebug.engine.session.debugger import Session  # noqa: E402
from flowdebug.engine.session.session_state import SessionState  # noqa: E402
from flowdebug.players import ScriptedPlayer, ScriptedTurn  # noqa: E402
from sample_tools import toolset  # noqa: E402


def long_session(messages: int) -> Session:
    """A session whose history has at least ``messages`` messages, stopped mid-cycle."""
    tools = toolset("tasks")
    turn = ScriptedTurn.model_validate(
        {
            "calls": [
                {"name": "create_task", "arguments": {"title": "step"}},
                {"name": "list_tasks", "arguments": {"status": "open"}},
            ]
        }
    )
    from flowdebug.model import Conversation, Message, Text

    state = SessionState(
        scenario=None,
        conversation=Conversation(
            system="You manage tasks.",
            tools=tools.tools,
            messages=[Message(role="user", parts=[Text(text="Keep adding tasks.")])],
        ),
        toolset=tools,
        policy=Policy(max_rounds=10_000),
    )
    session = Session(state, ScriptedPlayer([turn], repeat_last=True))
    while len(session.conversation.messages) < messages:
        session.step()
    return session


def time_steps(session: Session, repeat: int) -> list[float]:
    at = AppTest.from_file(str(ROOT / "pages" / "debugger.py"), default_timeout=120)
    at.session_state["fd_session"] = session
    at.run()
    assert not at.exception, at.exception
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        at.button(key="step").click().run()
        runs.append((time.perf_counter() - t) * 1000)
        assert not at.exception, at.exception
    return runs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    print("one Step on the Debugger page, 5 protocols shown (AppTest script run)")
    print(f"{'messages':>9} {'median ms':>10} {'min ms':>8} {'max ms':>8}")
    for n in (20, 200, 1000):
        session = long_session(n)
        runs = time_steps(session, args.repeat)
        print(
            f"{len(session.conversation.messages):>9} {statistics.median(runs):>10.1f} "
            f"{min(runs):>8.1f} {max(runs):>8.1f}"
        )


if __name__ == "__main__":
    main()
