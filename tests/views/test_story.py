"""The cycle in plain words (flowdebug.views.story) over the real scenarios: each sentence says
what happened in that session (tools, cities, a timeout and its duration, a fault, an edit, a
rejection), and each vendor's note is in that vendor's own terms."""

from __future__ import annotations

import pytest

from flowdebug import protocols
from flowdebug.engine.execution.approval import Edit, Reject
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.tracing.replay import replay
from flowdebug.engine.tracing.trace import PHASES, TraceEvent, rejections
from flowdebug.model import Conversation, HostedCall, HostedResult, Message, Text
from flowdebug.views.story import (
    MEANING,
    caption,
    phase_events,
    phase_refused,
    phase_story,
    rejection_sentence,
    vendor_note,
)
from tests.scenario_runs import ran

NAMES = ["anthropic", "openai-chat", "openai-responses", "gemini", "mcp"]


def captions(s: Session, kind: str) -> list[str]:
    refused = rejections(s.state.conversation, s.state.events, NAMES)
    return [caption(e, s.state.events, s.state, refused) for e in s.state.events if e.kind == kind]


def event(s: Session, kind: str, n: int = 0) -> TraceEvent:
    return [e for e in s.state.events if e.kind == kind][n]


# -- the default weather scenario ---------------------------------------------------------------


def test_the_batch_is_told_as_two_calls_of_one_tool_in_one_reply():
    first, second = captions(ran("weather"), "tool_call")
    assert first == "The model asks for get_weather twice, in one reply: for Paris and for Tokyo."
    assert "Tokyo" in second and "same reply" in second


def test_the_timeout_names_tokyo_and_the_second_it_waited():
    paris, tokyo = captions(ran("weather"), "result")
    assert tokyo == (
        "get_weather for Tokyo never answers: after 1 s the runtime sends an error result instead."
    )
    assert paris.startswith("get_weather for Paris answers in ")
    assert "temperature 18" in paris and "partly cloudy" in paris


def test_the_runs_are_parallel_and_the_results_go_back_together():
    s = ran("weather")
    runs = captions(s, "dispatch")
    assert runs[0] == (
        "The runtime runs the 2 calls at the same time: get_weather for Paris and "
        "get_weather for Tokyo."
    )
    assert runs[1].startswith("At the same time") and "Tokyo" in runs[1]
    (back,) = captions(s, "continuation")
    assert back.startswith("The runtime sends the 2 results back to the model")
    assert "refuse" not in back  # every vendor accepts this history


def test_the_question_the_tools_and_the_answer():
    s = ran("weather")
    assert captions(s, "user_message") == ["The user asks: “Weather in Paris and Tokyo?”"]
    (declare,) = captions(s, "declare")
    assert declare.endswith("with the tool it may call: get_weather.")
    (final,) = captions(s, "final_answer")
    assert final.startswith("The model answers in words, without asking for a tool: “Paris is 18")
    assert captions(s, "answer") == ["The runtime hands the answer to the user: the cycle is over."]


def test_captions_name_no_json_field():
    s = ran("weather")
    refused = rejections(s.state.conversation, s.state.events, NAMES)
    text = " ".join(caption(e, s.state.events, s.state, refused) for e in s.state.events)
    for term in ("tool_use", "tool_calls", "functionCall", "function_call", "call_id", "is_error"):
        assert term not in text


def test_without_the_session_the_trace_alone_still_tells_it():
    s = ran("weather")
    tokyo = event(s, "result", 1)
    assert caption(tokyo, s.state.events).startswith("get_weather for Tokyo never answers")


# -- each fault -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "kind", "n", "words"),
    [
        ("exception@#1", "result", 0, ["Paris crashes", "RuntimeError: injected failure"]),
        ("timeout@#1", "result", 0, ["Paris never answers", "after 1 s", "injected fault"]),
        ("permission_denied@#1", "result", 0, ["Paris is refused", "permission denied"]),
        ("rate_limited@#1", "result", 0, ["Paris is turned away", "retry after 30s"]),
        ("slow@#1", "dispatch", 0, ["slows the tool down"]),
        ("empty_result@#1", "result", 0, ["Paris succeeds but returns nothing"]),
        ("oversized_result@#1", "result", 0, ["long result", "characters"]),
        ("unknown_tool@#1", "tool_call", 0, ["No tool is called get_weathers", "get_weather?"]),
        ("unknown_tool@#1", "result", 0, ["no tool called get_weathers", "runs nothing"]),
        ("invalid_arguments@#1", "result", 0, ["refuses to run", "'location' is a required"]),
        ("malformed_json@#1", "tool_call", 0, ["arguments are not valid JSON"]),
        ("malformed_json@#1", "result", 0, ["cannot read get_weather's arguments"]),
        ("duplicate_call_id", "tool_call", 1, ["reuses the id call_1"]),
        ("duplicate_call_id", "result", 1, ["does not run get_weather for Tokyo", "call_1"]),
        ("missing_call_id@#1", "tool_call", 0, ["without a call id"]),
        ("drop_result@#1", "result", 0, ["Paris answers", "dropped", "never sees it"]),
        ("drop_result@#1", "continuation", 0, ["1 result back", "1 result of 2 went missing"]),
        ("reorder_results", "continuation", 0, ["different order than the calls"]),
        ("wrong_result_id@#1", "result", 0, ["under the id wrong_call_1", "matches no call"]),
        ("text_before_results@#1", "continuation", 0, ["A user message now comes before"]),
    ],
)
def test_each_fault_is_told_where_it_happens(fault, kind, n, words):
    said = captions(ran("weather", fault), kind)[n]
    for word in words:
        assert word in said, said


def test_a_dropped_result_names_the_vendors_that_refuse_the_next_request():
    (back,) = captions(ran("weather", "drop_result@#1"), "continuation")
    assert "Anthropic, OpenAI Chat, OpenAI Responses and Gemini refuse this request" in back
    assert "MCP" not in back  # MCP carries each call on its own: nothing to refuse


# -- a person's edit and decisions --------------------------------------------------------------


def test_an_edited_result_says_what_the_tool_did_and_what_the_model_now_sees():
    s = Session.from_scenario("weather")
    for _ in range(3):  # declaration, request, execution
        s.step()
    last = len(s.state.conversation.messages) - 1
    sunny = '{"location": "Tokyo", "temperature": 21, "unit": "c", "conditions": "sunny"}'
    s.edit_part(last, 1, {"kind": "tool_result", "call_id": "call_2", "content": sunny})
    tokyo = captions(s, "result")[1]
    assert tokyo.startswith("get_weather for Tokyo never answers: after 1 s")
    assert "You then edited it into a success" in tokyo
    assert "temperature 21" in tokyo and "sunny" in tokyo
    assert "edited" not in captions(s, "result")[0]


def test_approvals_edits_and_rejections_are_the_persons():
    s = Session.from_scenario("destructive")
    s.run()
    s.decide("call_2", Edit(arguments={"task_id": "T-1"}))
    s.run()
    assert captions(s, "approval") == [
        "You change the arguments of delete_task for T-1 before it runs."
    ]
    assert "with the arguments you edited" in captions(s, "dispatch")[-1]

    s = Session.from_scenario("destructive")
    s.run()
    s.decide("call_2", Reject(reason="not today"))
    s.run()
    (decided,) = captions(s, "approval")
    assert decided.startswith("You reject delete_task for T-1: it will not run")
    assert captions(s, "result")[-1].startswith("delete_task for T-1 does not run: you rejected it")


# -- other scenarios -----------------------------------------------------------------------------


def test_the_round_cap_halt_says_why_the_loop_stopped():
    (halt,) = captions(ran("runaway"), "halt")
    assert "round cap reached (4)" in halt and "without an answer" in halt


def test_a_schema_refusal_and_the_retry():
    s = ran("schema_retry")
    first, retry = captions(s, "tool_call")
    assert "'kelvin' is not one of" in first
    assert retry == "The model asks to run get_weather for Sydney."


def test_mcp_tools_are_listed_and_called_on_the_server():
    s = ran("mcp_weather")
    (listed,) = captions(s, "discover")
    assert "MCP server" in listed and "tools/list" in listed and "8 tools" in listed
    assert "on the MCP server" in captions(s, "dispatch")[0]
    tokyo = captions(s, "result")[1]
    assert "Tokyo never answers" in tokyo and "after 0.8 s" in tokyo


# -- each vendor's terms ------------------------------------------------------------------------


def test_vendor_notes_use_each_vendors_own_terms():
    s = ran("weather")
    call = event(s, "tool_call")
    notes = {n: vendor_note(call, n) for n in NAMES}
    for name in ("anthropic", "openai-chat", "openai-responses", "gemini"):
        facts = protocols.facts(name)
        expected = facts.terms.tool_call.format(id="call_1", name="get_weather", i=0)
        assert notes[name] == f"{facts.short}: {expected}"
    assert notes["mcp"] is None  # the model's choice is not MCP's part
    tokyo = event(s, "result", 1)
    assert vendor_note(tokyo, "anthropic") is None  # runtime-side: nothing of Anthropic's own
    assert vendor_note(tokyo, "mcp") == "MCP: CallToolResult isError:true · timeout after 1s"
    discover = event(s, "discover")
    assert vendor_note(discover, "mcp") == "MCP: tools/list → 1 tool"
    assert vendor_note(discover, "gemini") is None


# -- a phase's story ------------------------------------------------------------------------------


def test_the_execution_story_tells_this_sessions_runs_and_keeps_the_fields():
    s = ran("weather")
    story = phase_story(s.state, "execution", NAMES)
    assert story.meaning == MEANING["execution"]
    assert story.sentences == (
        "The runtime runs the 2 calls at the same time: get_weather for Paris and "
        "get_weather for Tokyo.",
        captions(s, "result")[0],
        "get_weather for Tokyo never answers: after 1 s the runtime sends an error result instead.",
    )
    assert story.fields["anthropic"] == protocols.facts("anthropic").fields.execution
    assert story.notes["mcp"][0] == "MCP: tools/call get_weather id=call_1"
    assert story.rejections == ()


def test_the_request_story_of_a_final_answer_uses_the_answer_fields():
    s = ran("weather")
    story = phase_story(s.state, "request", NAMES)
    assert story.meaning == MEANING["answer"]
    assert story.fields["gemini"] == protocols.facts("gemini").fields.answer
    assert story.notes["anthropic"] == ("Anthropic: text · stop_reason: end_turn",)


def test_a_phase_not_run_yet_has_its_meaning_and_no_sentences():
    s = Session.from_scenario("weather")
    story = phase_story(s.state, "declaration", NAMES)
    assert story.sentences == () and story.meaning == MEANING["declaration"]
    assert set(story.fields) == set(NAMES)


def test_the_continuation_story_acts_out_each_refusal_and_who_goes_on():
    s = ran("weather", "drop_result@#1")
    story = phase_story(s.state, "continuation", NAMES)
    anthropic = next(r for r in story.rejections if r.startswith("Anthropic "))
    assert anthropic.startswith(
        "Anthropic refuses the next request: a call has no result right after it"
    )
    assert "`tool_use` ids were found without `tool_result` blocks" in anthropic
    assert anthropic.endswith("Its cycle stops here; MCP goes on.")
    assert len(story.rejections) == 4
    later = phase_story(s.state, "request", NAMES)
    assert later.rejections == (
        "Anthropic, OpenAI Chat, OpenAI Responses and Gemini stopped earlier, at step 4: each "
        "refused the request (a call has no result right after it, and every call needs one).",
    )


@pytest.mark.parametrize("fault", [None, "drop_result@#1"])
def test_phase_refused_says_whether_the_story_tells_a_refusal_without_telling_it(fault):
    s = ran("weather", fault)
    refused = rejections(s.state.conversation, s.state.events, NAMES)
    told = {p: bool(phase_story(s.state, p, NAMES, refused).rejections) for p in PHASES}
    assert {p: phase_refused(s.state.events, p, refused) for p in told} == told
    assert any(told.values()) == (fault is not None)


def test_rejection_sentence_when_every_vendor_shown_refuses():
    s = ran("weather", "drop_result@#1")
    refused = rejections(s.state.conversation, s.state.events, ["openai-responses"])
    said = rejection_sentence("openai-responses", refused["openai-responses"])
    assert said == (
        "OpenAI Responses refuses the next request: a call has no result right after it, and "
        "every call needs one. It answers HTTP 400: “No tool output found for function call "
        "call_1.” Its cycle stops here."
    )


def test_phase_events_are_the_last_step_of_that_phase():
    s = ran("tasks")
    mine = phase_events(s.state.events, "execution")
    assert {e.step for e in mine} == {max(e.step for e in s.state.events if e.phase == "execution")}
    assert [e.kind for e in mine] == ["dispatch", "result"]
    with pytest.raises(ValueError, match="no phase"):
        phase_story(s.state, "teleport", NAMES)


# -- a history imported, not stepped ------------------------------------------------------------


def test_a_replayed_history_with_a_hosted_tool_is_told_from_its_messages():
    conv = Conversation(
        messages=[
            Message(role="user", parts=[Text(text="Any news about Tokyo?")]),
            Message(
                role="assistant",
                parts=[
                    HostedCall(id="srv_1", name="web_search", arguments={"query": "Tokyo news"}),
                    HostedResult(call_id="srv_1", name="web_search", content="Tokyo hosts…"),
                    Text(text="Tokyo hosts a festival."),
                ],
            ),
        ]
    )
    events = replay(conv).events
    told = {e.kind: caption(e, events) for e in events}
    assert told["hosted_call"].startswith("The model runs web_search itself, on the vendor's side")
    assert "never sees it run" in told["hosted_call"]
    assert told["hosted_result"] == (
        "The vendor's web_search answers inside the same reply: “Tokyo hosts…”"
    )
    assert told["final_answer"].endswith("“Tokyo hosts a festival.”")
    call = next(e for e in events if e.kind == "hosted_call")
    assert vendor_note(call, "anthropic") == (
        'Anthropic: server_tool_use · web_search(query="Tokyo news")'
    )


def test_a_vendor_that_stopped_has_no_notes_after_its_refusal():
    s = ran("weather", "drop_result@#1")
    story = phase_story(s.state, "request", NAMES)
    assert story.notes["anthropic"] == ()  # it refused the request before this answer
    assert story.fields["anthropic"] == protocols.facts("anthropic").fields.answer
    continuation = phase_story(s.state, "continuation", NAMES)
    assert continuation.notes["anthropic"] == ("Anthropic: user turn: tool_result ×1",)
