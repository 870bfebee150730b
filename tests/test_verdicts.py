"""The linter's verdict per drawn request is remembered (flowdebug.engine.verdicts): a Step
lints only a request it has not judged, and an edit is judged afresh."""

from __future__ import annotations

import pytest

from flowdebug.engine import trace, verdicts
from flowdebug.engine.debugger import Session
from flowdebug.engine.faults import parse_fault
from flowdebug.engine.trace import rejections
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
