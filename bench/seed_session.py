"""Save a session whose history holds N messages into a sessions database, and print its id.

Run with the checkout under test first on ``PYTHONPATH`` (``bench/workshop_load.py`` does), so
the session is written by that checkout's own store:

    PYTHONPATH=. .venv/bin/python bench/seed_session.py DB [--messages 1000]

The session is the ``runaway`` scenario (a model that keeps calling ``list_tasks``, whose
handler answers at once) with its round cap lifted, stopped just before a model turn: a
reopened link (``?session=ID``) gets the scenario's scripted player back, so Step goes on
for as long as the benchmark presses it, every phase without a slow tool.
"""

from __future__ import annotations

import argparse

try:
    from flowdebug.engine.session.debugger import Session
    from flowdebug.store.sessions import open_store
except ImportError:  # a checkout from before the engine had its floors (a "before" run)
    try:
        from flowdebug.engine.debugger import Session

        from flowdebug.store.sessions import open_store
    except ImportError:  # from before the package had its folders
        from flowdebug.debugger import Session

        from flowdebug.store import open_store


def long_session(messages: int) -> Session:
    """A runaway session with at least ``messages`` messages, next phase a model turn."""
    session = Session.from_scenario("runaway")
    session.state.policy = session.state.policy.model_copy(update={"max_rounds": 1_000_000})
    while len(session.conversation.messages) < messages or session.state.next_phase != "request":
        session.step()
    session.undo_stack.clear()
    return session


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("db")
    parser.add_argument("--messages", type=int, default=1000)
    args = parser.parse_args()
    session = long_session(args.messages)
    with open_store(args.db) as store:
        store.save(session.state, name=f"bench {args.messages} messages")
    print(session.state.id)


if __name__ == "__main__":
    main()
