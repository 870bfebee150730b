"""Rejections acted out: a history a vendor refuses is drawn as the request coming back as a
red 400 with the vendor's own message, and that vendor's cycle stops there (issue 12 item 4)."""

from __future__ import annotations

import json
import shutil

import pytest

from flowdebug.cli.main import main
from flowdebug.engine.execution.faults import parse_fault
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.tracing import trace
from flowdebug.engine.tracing.trace import Rejection, rejection, rejections, sequence
from flowdebug.exchange.exports import trace_json
from flowdebug.render import to_svg
from flowdebug.views import debugger as views

NAMES = ["anthropic", "openai-chat", "openai-responses", "gemini", "mcp"]
ANTHROPIC = "tool_use ids were found without tool_result blocks immediately after"
ANTHROPIC_WHOLE = (
    "`tool_use` ids were found without `tool_result` blocks immediately after: call_1. Each "
    "`tool_use` block must have a corresponding `tool_result` block in the next message."
)


def faulted(scenario: str = "weather", fault: str = "drop_result@#1") -> Session:
    s = Session.from_scenario(scenario)
    s.set_faults([parse_fault(fault)])
    s.run()
    return s


@pytest.fixture(scope="module")
def dropped() -> Session:
    return faulted()


def continuation_seq(s: Session, nth: int = 0) -> int:
    return [e.seq for e in s.state.events if e.kind == "continuation"][nth]


def test_a_dropped_result_ends_the_anthropic_lane_with_its_400(dropped):
    refused = rejection(dropped.conversation, dropped.state.events, "anthropic")
    assert refused == Rejection(continuation_seq(dropped), ANTHROPIC_WHOLE, "missing_result")
    arrows = sequence(dropped.state.events, "anthropic", refused)
    sent, back = arrows[-2:]
    assert (sent.kind, sent.source, sent.target) == ("continuation", "runtime", "model")
    assert (back.kind, back.source, back.target, back.error) == (
        "rejection",
        "model",
        "runtime",
        True,
    )
    assert back.label == f"400 · {ANTHROPIC}"
    assert back.detail == ANTHROPIC_WHOLE
    assert (back.step, back.phase) == (sent.step, "continuation")
    # The scripted model answered afterwards, but Anthropic never got that far.
    assert not any(a.kind in ("final_answer", "answer") for a in arrows)


def test_mcp_has_no_such_rule_and_goes_on(dropped):
    assert rejection(dropped.conversation, dropped.state.events, "mcp") is None
    arrows = sequence(dropped.state.events, "mcp")
    assert not any(a.kind == "rejection" for a in arrows)
    assert [a.kind for a in arrows[-3:]] == ["continuation", "final_answer", "answer"]


def test_every_vendor_that_pairs_by_id_refuses_with_its_own_words(dropped):
    found = rejections(dropped.conversation, dropped.state.events, NAMES)
    assert sorted(found) == ["anthropic", "gemini", "openai-chat", "openai-responses"]
    assert {r.seq for r in found.values()} == {continuation_seq(dropped)}
    assert found["openai-responses"].label == "400 · No tool output found for function call call_1"
    assert found["openai-chat"].message.startswith(
        "An assistant message with 'tool_calls' must be followed by tool messages"
    )
    # Shortened at a word, to fit the arrow; the whole text stays in ``message``.
    assert found["gemini"].label.endswith("…") and len(found["gemini"].label) <= 74


def test_a_history_every_vendor_accepts_is_drawn_as_it_ran():
    s = Session.from_scenario("weather")
    s.run()
    assert rejections(s.conversation, s.state.events, NAMES) == {}
    assert sequence(s.state.events, "anthropic")[-1].kind == "answer"


def test_nothing_is_refused_before_the_broken_history_is_sent():
    s = Session.from_scenario("weather")
    s.set_faults([parse_fault("drop_result@#1")])
    while s.state.next_phase != "continuation":
        s.step()
    assert rejections(s.conversation, s.state.events, NAMES) == {}
    s.step()  # the results go back: that request is the one refused
    assert rejection(s.conversation, s.state.events, "anthropic").seq == s.state.events[-1].seq


def test_the_first_refused_request_is_found_in_a_long_history():
    s = faulted("runaway")  # the dropped result is in round 1; three more requests follow
    sent = [e.seq for e in s.state.events if e.kind == "continuation"]
    assert len(sent) >= 3
    refused = rejection(s.conversation, s.state.events, "anthropic")
    assert refused.seq == sent[0]
    arrows = sequence(s.state.events, "anthropic", refused)
    assert arrows[-1].kind == "rejection" and max(a.seq for a in arrows) == sent[0]


def test_an_edit_that_puts_the_result_back_lifts_the_rejection(dropped):
    s = Session.from_scenario("weather")
    s.run()
    whole = s.conversation.messages[2]
    broken = faulted()
    assert views.refusals(broken.conversation, broken.state.events, ["anthropic"])
    broken.edit_message(2, whole.model_dump(mode="json"))
    assert views.refusals(broken.conversation, broken.state.events, ["anthropic"]) == {}


# -- the graphs ---------------------------------------------------------------------------------


def test_the_graphs_draw_the_400_and_caption_the_whole_message(dropped):
    graphs = {g.protocol: g for g in views.graphs(dropped.state, NAMES)}
    anthropic = graphs["anthropic"]
    assert anthropic.rejection.code == "missing_result"
    assert "400 · tool_use ids were" in anthropic.dot
    assert 'tooltip="`tool_use` ids were found without `tool_result` blocks' in anthropic.dot
    assert anthropic.caption == (
        "Anthropic Messages refuses this request (HTTP 400), so its cycle stops: " + ANTHROPIC_WHOLE
    )
    assert f"Note over runtime,model: {ANTHROPIC_WHOLE}" in anthropic.mermaid
    assert "model--)runtime: 400 · " + ANTHROPIC in anthropic.mermaid
    mcp = graphs["mcp"]
    assert mcp.rejection is None and mcp.caption is None
    assert "400 ·" not in mcp.dot
    assert mcp.arrows > anthropic.arrows


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz not installed")
def test_the_exported_svg_shows_the_400_and_keeps_the_message_on_hover(dropped):
    g = views.graphs(dropped.state, ["anthropic"])[0]
    svg = to_svg(g.dot)
    assert "400 · tool_use ids were" in svg
    assert 'xlink:title="`tool_use` ids were found without `tool_result` blocks' in svg
    assert svg.count("#d11f1f") >= 2  # the timeout and the refusal


def test_a_long_history_windows_a_refused_lane_up_to_its_refusal():
    s = faulted("runaway")
    refused = views.refusals(s.conversation, s.state.events, ["anthropic"])["anthropic"]
    g = views.graphs(s.state, ["anthropic"], window=4)[0]
    assert g.hidden == refused.seq + 1 - 4
    assert g.dot.count("400 · ") == 1


def test_the_lint_runs_once_per_conversation_revision(dropped, monkeypatch):
    calls = []
    real = trace.check_conversation

    def counting(conv, chosen):
        calls.append(chosen)
        return real(conv, chosen)

    monkeypatch.setattr(trace, "check_conversation", counting)
    s = faulted()
    views.graphs(s.state, NAMES)
    first = len(calls)
    assert 1 <= first <= 1 + len(NAMES)  # one lint of the whole, then a halving per vendor
    views.graphs(s.state, NAMES)
    views.graphs(s.state, NAMES, presenter=True)
    assert len(calls) == first
    s.undo()
    views.graphs(s.state, NAMES)
    assert len(calls) == first  # undo returns to requests already judged
    s.edit_part(0, 0, {"kind": "text", "text": "Weather in Lyon?"})
    views.graphs(s.state, NAMES)
    assert len(calls) > first  # an edited history is judged again


# -- the command line -------------------------------------------------------------------------


def test_flowdebug_render_draws_the_rejection_from_a_session_trace(dropped, tmp_path, capsys):
    path = tmp_path / "dropped.trace.json"
    path.write_text(trace_json(dropped.state, name="weather"))
    assert main(["render", str(path), "--protocol", "anthropic", "--format", "mermaid"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-3:] == [
        "        model--)runtime: 400 · " + ANTHROPIC,
        f"        Note over runtime,model: {ANTHROPIC_WHOLE}",
        "    end",
    ]
    assert main(["render", str(path), "--protocol", "mcp", "--format", "mermaid"]) == 0
    assert "400 ·" not in capsys.readouterr().out


def test_flowdebug_render_of_bare_events_draws_what_they_say(dropped, tmp_path, capsys):
    data = json.loads(trace_json(dropped.state))
    path = tmp_path / "events.json"
    path.write_text(json.dumps(data["events"]))  # no history: nothing to judge
    assert main(["render", str(path), "--protocol", "anthropic", "--format", "mermaid"]) == 0
    assert "400 ·" not in capsys.readouterr().out
