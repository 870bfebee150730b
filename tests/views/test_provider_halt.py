"""A live vendor's failure is drawn where the cycle is: a red arrow with its words, then halt."""

from __future__ import annotations

from flowdebug.engine.session.debugger import Session
from flowdebug.engine.tracing.trace import sequence
from flowdebug.errors import ProviderError
from flowdebug.views.aligned import aligned


class FailingPlayer:
    """A player whose vendor answers 529 Overloaded, as a live player reports it."""

    def respond(self, conv):
        raise ProviderError(
            "anthropic",
            529,
            '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
            "wait and step again",
        )


def test_a_provider_failure_halts_the_cycle_with_a_red_arrow_in_the_vendors_words():
    s = Session(Session.from_scenario("weather").state, FailingPlayer())
    s.step()  # user → runtime → model: the request goes out
    s.step()  # the vendor fails it
    events = s.state.events
    last = events[-1]
    assert (last.kind, last.source, last.target, last.error) == ("halt", "model", "runtime", True)
    assert last.label.startswith("HTTP 529 · ") and "Overloaded" in last.label
    assert last.error_type == "provider_error"
    assert s.state.status == "halted"
    assert "529" in s.state.status_text and "wait and step again" in s.state.status_text
    for protocol in ("anthropic", "openai-chat", "gemini"):
        arrow = sequence(list(events), protocol)[-1]
        assert arrow.error and arrow.label == last.label
    svg = aligned(s.state, ["anthropic", "openai-chat"], {}).svg
    assert svg.count("HTTP 529") == 2  # in every vendor's column, in red
    s.undo()  # back before the failed call: Step retries it
    assert s.state.status != "halted"


def test_plays_caption_tells_the_failure_in_plain_words():
    from flowdebug.views.story import caption

    s = Session(Session.from_scenario("weather").state, FailingPlayer())
    s.step()
    s.step()
    said = caption(s.state.events[-1], s.state.events, s.state)
    assert "HTTP 529" in said and "Overloaded" in said and "retry" in said
