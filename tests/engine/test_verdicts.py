"""The linter's verdict per drawn request is remembered (flowdebug.engine.tracing.verdicts): a Step
lints only a request it has not judged, and an edit is judged afresh."""

from __future__ import annotations

import threading

import pytest

from flowdebug.engine.execution.faults import parse_fault
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.tracing import trace, verdicts
from flowdebug.engine.tracing.trace import rejections
from flowdebug.protocols import PROTOCOLS

NAMES = tuple(PROTOCOLS)


@pytest.fixture
def lints(monkeypatch):
    """Counts the linter's runs; the cache starts empty."""
    calls: list[int] = []
    real = trace.check_conversation

    def counted(conv, chosen):
        calls.append(len(conv.messages))
        return real(conv, chosen)

    monkeypatch.setattr(trace, "check_conversation", counted)
    verdicts.VERDICTS.clear()
    yield calls
    verdicts.VERDICTS.clear()


def test_steps_that_send_no_request_lint_nothing(lints):
    s = Session.from_scenario("runaway")
    s.state.policy = s.state.policy.model_copy(update={"max_rounds": 100})
    per_step = []
    for _ in range(12):
        s.step()
        before = len(lints)
        rejections(s.conversation, s.state.events, NAMES)
        per_step.append((s.state.events[-1].kind, len(lints) - before))
    # A request goes out at the declaration and at each continuation: one lint each; the
    # model's turn and the execution add no request, so nothing is linted again.
    for kind, count in per_step:
        assert count == (1 if kind in ("declare", "continuation") else 0), per_step
    assert sum(c for _, c in per_step) == 4


def dropped() -> Session:
    """The weather cycle with Paris's result dropped: the continuation Anthropic refuses."""
    s = Session.from_scenario("weather")
    s.set_faults([parse_fault("drop_result@#1")])
    s.run()
    return s


def test_cached_verdicts_equal_a_fresh_lint(lints):
    s = dropped()
    cached = [rejections(s.conversation, s.state.events, NAMES) for _ in range(2)]
    runs = len(lints)
    rejections(s.conversation, s.state.events, NAMES)
    assert len(lints) == runs  # judged once
    verdicts.VERDICTS.clear()
    fresh = rejections(s.conversation, s.state.events, NAMES)
    assert cached[0] == cached[1] == fresh
    assert fresh["anthropic"].code == "missing_result"


def test_an_edit_is_judged_again(lints):
    whole = Session.from_scenario("weather")
    whole.run()
    s = dropped()
    assert "anthropic" in rejections(s.conversation, s.state.events, NAMES)
    runs = len(lints)
    s.edit_message(2, whole.conversation.messages[2].model_dump(mode="json"))  # result back
    assert rejections(s.conversation, s.state.events, NAMES) == {}
    assert len(lints) > runs


def long_session(messages: int = verdicts.AHEAD_FROM) -> Session:
    """The runaway cycle stepped until its history holds ``messages`` and its next Step sends
    the results back (the request a lint ahead is for)."""
    s = Session.from_scenario("runaway")
    s.state.policy = s.state.policy.model_copy(update={"max_rounds": 10_000})
    while len(s.conversation.messages) < messages or s.state.next_phase != "continuation":
        s.step()
    return s


def test_a_long_historys_next_request_is_linted_between_the_steps(lints):
    s = long_session()
    thread = verdicts.VERDICTS.ahead(s.conversation, NAMES, trace.check_conversation)
    assert thread is not None and thread.name == "flowdebug-lint-ahead"
    thread.join(10)
    assert not thread.is_alive()  # the thread ends with its lint
    assert lints == [len(s.conversation.messages)]
    s.step()  # the continuation: the request just linted
    assert s.state.events[-1].kind == "continuation"
    rejections(s.conversation, s.state.events, NAMES)
    assert len(lints) == 1  # the Step found its verdict ready


def test_the_debugger_asks_for_a_lint_ahead_only_before_a_continuation(monkeypatch):
    from flowdebug.views import debugger

    asked: list[tuple[int, str]] = []
    monkeypatch.setattr(
        debugger.VERDICTS,
        "ahead",
        lambda conv, chosen: asked.append((len(conv.messages), ",".join(chosen))),
    )
    s = Session.from_scenario("runaway")
    expected = []
    for _ in range(10):  # declaration, then (request, execution, continuation) three times
        s.step()
        debugger.lint_ahead(s.state, NAMES)
        debugger.lint_ahead(s.state, ())  # no vendor shown: nothing to lint
        if s.state.next_phase == "continuation":
            expected.append((len(s.conversation.messages), ",".join(NAMES)))
    assert len(expected) == 3 and asked == expected


def test_short_histories_and_judged_requests_are_not_linted_ahead():
    cache, runs = verdicts.Verdicts(), []

    def counted(conv, chosen):
        runs.append(len(conv.messages))
        return []

    short = Session.from_scenario("weather")
    short.run()
    assert len(short.conversation.messages) < verdicts.AHEAD_FROM
    assert cache.ahead(short.conversation, NAMES, counted, delay=0) is None
    s = long_session()
    cache.findings(s.conversation, len(s.conversation.messages), NAMES, counted)
    assert cache.ahead(s.conversation, NAMES, counted, delay=0) is None  # judged already
    assert runs == [len(s.conversation.messages)]
    assert not [t for t in threading.enumerate() if t.name == "flowdebug-lint-ahead"]


def test_no_lint_ahead_when_the_round_cap_halts_the_cycle_instead(monkeypatch):
    from flowdebug.views import debugger

    asked: list[int] = []
    monkeypatch.setattr(
        debugger.VERDICTS, "ahead", lambda conv, chosen: asked.append(len(conv.messages))
    )
    s = Session.from_scenario("runaway")
    s.state.policy = s.state.policy.model_copy(update={"max_rounds": 1})
    while s.state.next_phase != "continuation":
        s.step()
    debugger.lint_ahead(s.state, NAMES)
    assert asked == []
    s.step()
    assert s.state.status == "halted"  # the continuation sent nothing


def test_a_step_waits_for_the_lint_ahead_of_its_request_instead_of_linting_it_twice():
    cache = verdicts.Verdicts()
    s = long_session()
    started, release, runs = threading.Event(), threading.Event(), []

    def slow(conv, chosen):
        runs.append(threading.current_thread().name)
        started.set()
        release.wait(10)
        return [f"{len(conv.messages)} messages"]

    thread = cache.ahead(s.conversation, NAMES, slow, delay=0)
    assert thread is not None and started.wait(10)
    assert cache.ahead(s.conversation, NAMES, slow, delay=0) is None  # one at a time
    got: list = []
    step = threading.Thread(
        target=lambda: got.append(
            cache.findings(s.conversation, len(s.conversation.messages), NAMES, slow)
        )
    )
    step.start()
    step.join(0.3)
    assert step.is_alive()  # the Step waits for the lint under way...
    release.set()
    step.join(10)
    thread.join(10)
    assert runs == ["flowdebug-lint-ahead"]  # ...and uses its verdict: one lint
    assert got == [[f"{len(s.conversation.messages)} messages"]]


def test_a_failed_lint_ahead_leaves_the_step_to_lint_and_report_it():
    cache = verdicts.Verdicts()
    s = long_session()
    calls: list[str] = []

    def broken(conv, chosen):
        calls.append(threading.current_thread().name)
        raise RuntimeError("lint failed")

    thread = cache.ahead(s.conversation, NAMES, broken, delay=0)
    assert thread is not None
    thread.join(10)
    with pytest.raises(RuntimeError, match="lint failed"):
        cache.findings(s.conversation, len(s.conversation.messages), NAMES, broken)
    assert len(calls) == 2 and calls[0] == "flowdebug-lint-ahead"
