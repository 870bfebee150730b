"""The teaching picture's row table (issue 29 items 1-3): one row per event, each vendor's
words for it read from the payloads its codec encodes, the lit event's wire in full."""
# ruff: noqa: F811 (the shared fixture is a parameter of the tests)

from __future__ import annotations

import json

from flowdebug.engine.execution.faults import parse_fault
from flowdebug.engine.session.debugger import Session
from flowdebug.views.debugger import refusals
from flowdebug.views.teaching import Picture, picture

# The weather cycle run to its end, shared with the aligned view's tests.
from tests.views.test_aligned import ALL, weather  # noqa: F401


def words(p: Picture, kind: str) -> dict[str, str]:
    """Per vendor (short name), the text of its cell on the first row of ``kind``."""
    row = next(r for r in p.rows if r.kind == kind)
    return {
        short: " / ".join("".join(t for t, _ in line) for line in cell.lines)
        for (_, short), cell in zip(p.vendors, row.cells, strict=True)
        if cell is not None
    }


def test_continuation_row_names_each_vendors_linking_field_and_error_mark(weather):
    cont = words(picture(weather.state, ALL, {}), "continuation")
    assert cont["Anthropic"].startswith("tool_result ×2")
    assert 'tool_use_id: "call_2" · is_error: true' in cont["Anthropic"]
    assert 'role: "tool"' in cont["OpenAI Chat"]
    assert 'tool_call_id: "call_2" · no error flag' in cont["OpenAI Chat"]
    assert cont["OpenAI Responses"].startswith("function_call_output ×2")
    assert 'call_id: "call_2"' in cont["OpenAI Responses"]
    assert "functionResponse ×2" in cont["Gemini"]
    assert 'id: "call_2" · name: "get_weather" · response.error' in cont["Gemini"]
    assert "toolResult ×2" in cont["Bedrock"]
    assert 'toolUseId: "call_2" · status: "error"' in cont["Bedrock"]
    assert "MCP" not in cont  # MCP's results are on the execution rows, not the model's wire


def test_failed_result_names_tokyo_and_mcp_marks_it_is_error(weather):
    p = picture(weather.state, ALL, {})
    failed = next(r for r in p.rows if r.kind == "result" and r.error)
    assert failed.label.startswith("call_2 · get_weather(Tokyo) → timeout")
    mcp = words(p, "result")  # the first result: Paris, not failed
    assert mcp == {"MCP": 'tools/call result / id: "call_1"'}
    cell = failed.cells[ALL.index("mcp")]
    assert cell is not None and cell.error
    assert "isError: true" in "".join(t for line in cell.lines for t, _ in line)


def test_declaration_names_the_field_and_the_tools(weather):
    p = picture(weather.state, ALL, {})
    declared = words(p, "declare")
    assert declared["Anthropic"] == "tools: [get_weather] / schema in input_schema"
    assert declared["Gemini"].startswith("functionDeclarations: [get_weather]")
    assert declared["Bedrock"].endswith("toolSpec.inputSchema.json")
    assert words(p, "discover") == {
        "MCP": "tools/list result / tools: [get_weather] / schema in inputSchema"
    }


def test_rows_are_shared_an_event_off_a_vendors_wire_leaves_its_cell_empty(weather):
    p = picture(weather.state, ALL, {})
    assert len(p.rows) == len(weather.state.events)
    for row in p.rows:
        assert len(row.cells) == len(ALL)
    by_kind = {r.kind: r for r in p.rows}
    assert all(c is None for c in by_kind["user_message"].cells)
    assert [c is None for c in by_kind["dispatch"].cells] == [n != "mcp" for n in ALL]


def test_final_answer_band_is_answer_and_names_the_stop_field(weather):
    p = picture(weather.state, ALL, {})
    final = next(r for r in p.rows if r.kind == "final_answer")
    assert final.band == "answer"
    assert p.data()["rows"][final.seq]["band"] == "answer"
    stop = words(p, "final_answer")
    assert stop["Anthropic"] == 'text / stop_reason: "end_turn"'
    assert stop["Gemini"] == 'text / finishReason: "STOP"'


def test_lit_continuation_shows_each_vendors_failed_fragment_with_its_keys_marked(weather):
    seq = next(e.seq for e in weather.state.events if e.kind == "continuation")
    p = picture(weather.state, ALL, {}, selected=seq)
    wire = dict(p.wire)
    marked = {v: [line for line, m in lines if m] for v, lines in wire.items()}
    assert any('"tool_use_id": "call_2"' in line for line in marked["Anthropic"])
    assert any('"is_error": true' in line for line in marked["Anthropic"])
    assert any('"status": "error"' in line for line in marked["Bedrock"])
    assert json.loads("\n".join(line for line, _ in wire["OpenAI Chat"]))["tool_call_id"] == (
        "call_2"
    )


def test_only_the_lit_row_carries_its_label_whole(weather):
    final = next(e.seq for e in weather.state.events if e.kind == "final_answer")
    rows = {r["seq"]: r for r in picture(weather.state, ALL, {}, selected=final).data()["rows"]}
    assert rows[final]["label"].endswith("timeout after 1s.")
    other = picture(weather.state, ALL, {}, selected=0).data()["rows"]
    assert other[final]["label"].endswith("…")


def test_a_refusing_vendor_gets_a_red_cell_that_makes_the_row_taller():
    s = Session.from_scenario("weather")
    s.set_faults([parse_fault("drop_result@#1")])
    s.run()
    refused = refusals(s.state.conversation, s.state.events, ALL)
    assert refused
    p = picture(s.state, ALL, refused)
    name, r = next(iter(refused.items()))
    row = next(row for row in p.rows if row.seq == r.seq)
    cell = row.cells[ALL.index(name)]
    assert cell is not None and cell.error
    assert cell.lines[-1][0][0].startswith(f"{r.status} · ")


def _whole(monkeypatch) -> None:
    """Requests encoded with their whole history (the caches emptied, so nothing is reused)."""
    from flowdebug.views import teaching

    teaching._PAYLOADS.clear()
    teaching._CELLS.clear()
    monkeypatch.setattr(teaching, "_turn_start", lambda conv, n: 0)


def test_a_request_encoded_from_its_last_turn_names_what_the_whole_history_names(
    monkeypatch, weather
):
    """The rows of a long history's request are read from its last turn alone: the same
    words, values and fragments as from the whole request, in every vendor."""
    from flowdebug.views import teaching

    runaway = Session.from_scenario("runaway")
    runaway.state.policy = runaway.state.policy.model_copy(update={"max_rounds": 1_000_000})
    while len(runaway.conversation.messages) < 60:
        runaway.step()
    for state in (runaway.state, weather.state):
        teaching._PAYLOADS.clear()
        teaching._CELLS.clear()
        tail = picture(state, ALL, {}, window=None)
        with monkeypatch.context() as m:
            _whole(m)
            whole = picture(state, ALL, {}, window=None)
        assert tail.rows == whole.rows
        assert tail.data() == whole.data()
        assert sum(c is not None for r in tail.rows for c in r.cells) >= 30
