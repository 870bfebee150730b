"""Failure injection: every fault in the catalog, its targeting and the CLI spec parser."""

from __future__ import annotations

import time
from typing import get_args

import pytest

from flowdebug.engine.execution.canned_handlers import FixedHandler
from flowdebug.engine.execution.faults import (
    CATALOG,
    Fault,
    FaultKind,
    apply_protocol_faults,
    apply_request_faults,
    execution_fault,
    first_call_number,
    invalid_arguments,
    parse_fault,
)
from flowdebug.engine.execution.handlers import ToolEntry, Toolset
from flowdebug.engine.execution.runtime import Policy, Runtime
from flowdebug.errors import UsageError
from flowdebug.model import Message, Text, Tool, ToolCall, ToolResult
from tests import cases

WEATHER = ToolEntry(tool=cases.WEATHER_TOOL, handler=FixedHandler(result={"temperature": 18}))
CLOCK = ToolEntry(tool=Tool(name="get_time"), handler=FixedHandler(result="09:00"), timeout=2.0)
TOOLS = Toolset(entries=[WEATHER, CLOCK])
PARIS, TOKYO = cases.PARIS, cases.TOKYO
CLOCK_CALL = ToolCall(id="call_clock", name="get_time")
TURN = Message(role="assistant", parts=[Text(text="Checking."), PARIS, TOKYO, CLOCK_CALL])
RESULTS = Message(
    role="tool",
    parts=[
        cases.PARIS_RESULT,
        cases.TOKYO_RESULT,
        ToolResult(call_id="call_clock", name="get_time", content="09:00"),
    ],
)


def run_with(*specs: str, calls=(PARIS,), policy=None):
    rt = Runtime(TOOLS, policy)
    return rt.execute(list(calls), faults=[parse_fault(s) for s in specs]).executions


def request(*specs: str, message=TURN, tools=(), first=1) -> list[ToolCall]:
    faults = [parse_fault(s) for s in specs]
    return apply_request_faults(message, faults, first, tools=tools).tool_calls


def protocol(*specs: str, first=1) -> list[Message]:
    return apply_protocol_faults(RESULTS, [parse_fault(s) for s in specs], first)


# ---- execution faults -----------------------------------------------------------------


def test_exception_fault_replaces_the_result_with_an_exception_error():
    (ex,) = run_with("exception:message=disk on fire")
    assert (ex.result.is_error, ex.result.error_type) == (True, "exception")
    assert ex.result.content == "RuntimeError: disk on fire"
    assert (ex.fault, ex.handler) == ("exception:message=disk on fire", None)
    assert ex.steps[-1] == "fault: exception:message=disk on fire"


def test_timeout_fault_reports_the_tool_timeout_without_waiting():
    started = time.perf_counter()
    clock, paris = run_with("timeout", calls=[CLOCK_CALL, PARIS], policy=Policy(default_timeout=7))
    assert time.perf_counter() - started < 1  # neither 2 s nor 7 s waited
    assert (clock.result.error_type, clock.result.content) == ("timeout", "timeout after 2s")
    assert paris.result.content == "timeout after 7s"


def test_permission_denied_fault_refuses_the_call():
    (ex,) = run_with("permission_denied")
    assert (ex.result.error_type, ex.result.content) == ("permission", "permission denied")


def test_rate_limited_fault_tells_the_model_when_to_retry():
    (ex,) = run_with("rate_limited:retry_after=5")
    assert (ex.result.error_type, ex.result.content) == (
        "rate_limited",
        "rate limited: retry after 5s",
    )


def test_slow_fault_delays_then_returns_the_real_result():
    (ex,) = run_with("slow:delay=0.2")
    assert (ex.result.is_error, ex.result.content) == (False, '{"temperature": 18}')
    assert ex.duration_ms >= 195 and ex.handler == "fixed"


def test_slow_fault_past_the_timeout_makes_the_call_time_out():
    started = time.perf_counter()
    (ex,) = run_with("slow:delay=5", policy=Policy(default_timeout=0.2))
    assert time.perf_counter() - started < 0.2 + 0.5
    assert (ex.result.error_type, ex.result.content) == ("timeout", "timeout after 0.2s")


def test_empty_result_fault_succeeds_with_no_content():
    (ex,) = run_with("empty_result")
    assert (ex.result.is_error, ex.result.content) == (False, "")


def test_oversized_result_fault_is_cut_by_the_policy_limit():
    (small,) = run_with("oversized_result:chars=500")
    assert len(small.result.content) == 500
    (big,) = run_with("oversized_result", policy=Policy(max_result_chars=1000))
    assert big.result.content.endswith("\n[truncated: 100000 characters, limit 1000]")
    assert big.result.content.startswith("lorem ipsum")
    assert big.steps[-1] == "result truncated from 100000 to 1000 characters"


def test_execution_fault_targets_a_tool_the_nth_call_or_a_call_id():
    assert execution_fault([parse_fault("timeout@get_time")], PARIS, 1) is None
    assert execution_fault([parse_fault("timeout@get_time")], CLOCK_CALL, 1).kind == "timeout"
    assert execution_fault([parse_fault("timeout@#2")], PARIS, 1) is None
    assert execution_fault([parse_fault("timeout@#2")], TOKYO, 2).kind == "timeout"
    assert execution_fault([parse_fault(f"timeout@id={TOKYO.id}")], TOKYO, 9).kind == "timeout"
    assert execution_fault([parse_fault("drop_result")], PARIS, 1) is None  # other phase


def test_nth_call_counts_across_the_session():
    history = [cases.WEATHER_USER, cases.WEATHER_CALLS, cases.WEATHER_RESULTS]
    assert first_call_number(history) == 3
    rt = Runtime(TOOLS)
    batch = rt.execute([PARIS, TOKYO], faults=[parse_fault("empty_result@#4")], first_call_number=3)
    assert [r.content for r in batch.results] == ['{"temperature": 18}', ""]


# ---- request faults ----------------------------------------------------------------------


def test_unknown_tool_fault_renames_the_call_to_a_near_miss():
    paris, _, clock = request("unknown_tool@#1", "unknown_tool@get_time")
    assert (paris.name, clock.name) == ("get_weathers", "get_times")
    assert request("unknown_tool@#1:name=weather")[0].name == "weather"
    (ex,) = Runtime(TOOLS).execute([paris]).executions
    assert ex.result.error_type == "unknown_tool"
    assert ex.result.content == (
        "unknown tool 'get_weathers'. Did you mean 'get_weather' or 'get_time'? "
        "Available tools: get_weather, get_time"
    )


def test_invalid_arguments_fault_breaks_the_tool_schema():
    broken = request("invalid_arguments@#1", tools=[cases.WEATHER_TOOL])[0]
    assert broken.arguments == {"unit": "c"}  # the required location dropped
    (ex,) = Runtime(TOOLS).execute([broken]).executions
    assert (ex.result.error_type, ex.result.content) == (
        "validation",
        "arguments: 'location' is a required property",
    )
    assert request("invalid_arguments@#1")[0].arguments == {"location": 12345, "unit": "c"}


def test_invalid_arguments_breaks_a_schema_without_required_fields_by_type():
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert invalid_arguments({"n": 3}, schema) == {"n": "not-a-integer"}
    assert invalid_arguments({}, schema) == {"n": "not-a-integer"}


def test_malformed_json_fault_sends_arguments_that_do_not_parse():
    paris = request("malformed_json@#1")[0]
    assert paris.arguments == {}
    assert paris.raw_arguments == '{"location": "Paris", "unit": "c"'
    (ex,) = Runtime(TOOLS).execute([paris]).executions
    assert ex.result.error_type == "malformed_arguments"


def test_duplicate_call_id_fault_gives_a_later_call_the_first_call_id():
    calls = request("duplicate_call_id@#2")
    assert [c.id for c in calls] == [PARIS.id, PARIS.id, "call_clock"]
    results = Runtime(TOOLS).execute(calls).results
    assert [r.error_type for r in results] == [None, "duplicate_call_id", None]


def test_duplicate_call_id_fault_on_the_first_call_sends_it_twice():
    calls = request("duplicate_call_id@#1")
    assert [(c.id, c.name) for c in calls] == [
        (PARIS.id, "get_weather"),
        (PARIS.id, "get_weather"),
        (TOKYO.id, "get_weather"),
        ("call_clock", "get_time"),
    ]
    everyone = request("duplicate_call_id")
    assert [c.id for c in everyone] == [PARIS.id] * 3


def test_missing_call_id_fault_empties_the_id():
    calls = request(f"missing_call_id@id={TOKYO.id}")
    assert [c.id for c in calls] == [PARIS.id, "", "call_clock"]
    tokyo = Runtime(TOOLS).execute(calls).results[1]
    assert (tokyo.call_id, tokyo.is_error) == ("", False)


def test_request_faults_keep_text_parts_and_target_by_session_number():
    faulted = apply_request_faults(TURN, [parse_fault("missing_call_id@#5")], 4)
    assert faulted.parts[0] == Text(text="Checking.")
    assert [c.id for c in faulted.tool_calls] == [PARIS.id, "", "call_clock"]
    assert apply_request_faults(TURN, [parse_fault("timeout")]) == TURN


# ---- protocol faults -------------------------------------------------------------------


def test_drop_result_fault_leaves_out_the_targeted_result():
    (tool_message,) = protocol("drop_result@#2")
    assert [r.call_id for r in tool_message.tool_results] == [PARIS.id, "call_clock"]
    (none_left,) = protocol("drop_result")
    assert none_left.parts == []


def test_reorder_results_fault_reverses_the_results():
    (tool_message,) = protocol("reorder_results")
    assert [r.call_id for r in tool_message.tool_results] == ["call_clock", TOKYO.id, PARIS.id]
    (weather_only,) = protocol("reorder_results@get_weather")
    assert [r.call_id for r in weather_only.tool_results] == [TOKYO.id, PARIS.id, "call_clock"]


def test_wrong_result_id_fault_pairs_the_result_with_no_call():
    (tool_message,) = protocol(f"wrong_result_id@id={PARIS.id}")
    assert [r.call_id for r in tool_message.tool_results] == [
        f"wrong_{PARIS.id}",
        TOKYO.id,
        "call_clock",
    ]
    (custom,) = protocol("wrong_result_id@#3:id=call_zzz")
    assert custom.tool_results[2].call_id == "call_zzz"
    assert custom.tool_results[2].content == "09:00"


def test_text_before_results_fault_puts_a_user_text_message_first():
    text, tool_message = protocol("text_before_results:text=Results below")
    assert text == Message(role="user", parts=[Text(text="Results below")])
    assert tool_message == RESULTS
    assert protocol("text_before_results@nope") == [RESULTS]


def test_protocol_faults_target_by_session_number_after_other_faults():
    (tool_message,) = protocol("drop_result@#10", "wrong_result_id@#11", first=10)
    assert [r.call_id for r in tool_message.tool_results] == [f"wrong_{TOKYO.id}", "call_clock"]


# ---- the catalog and the CLI spec --------------------------------------------------------


def test_catalog_describes_every_kind_in_one_line_with_its_phase():
    assert list(CATALOG) == list(get_args(FaultKind))
    phases = {k: f.phase for k, f in CATALOG.items()}
    assert [k for k, p in phases.items() if p == "execution"] == [
        "exception",
        "timeout",
        "permission_denied",
        "rate_limited",
        "slow",
        "empty_result",
        "oversized_result",
    ]
    assert [k for k, p in phases.items() if p == "protocol"] == [
        "drop_result",
        "reorder_results",
        "wrong_result_id",
        "text_before_results",
    ]
    for info in CATALOG.values():
        assert info.description.endswith(".") and "\n" not in info.description


def test_every_catalog_kind_has_a_test_of_its_effect():
    tests = " ".join(name for name in globals() if name.startswith("test_"))
    assert [k for k in CATALOG if f"test_{k}_fault" not in tests] == []


def test_parse_fault_reads_kind_target_and_params():
    assert parse_fault("timeout") == Fault(kind="timeout")
    assert parse_fault("timeout@get_weather") == Fault(kind="timeout", tool="get_weather")
    assert parse_fault("slow@#2:delay=1.5") == Fault(kind="slow", nth=2, params={"delay": "1.5"})
    assert parse_fault("drop_result@id=call_1") == Fault(kind="drop_result", call_id="call_1")
    fault = parse_fault("rate_limited:retry_after=12")
    assert fault.param("retry_after") == 12.0 and fault.phase == "execution"
    assert parse_fault("slow").param("delay") == 2.0


@pytest.mark.parametrize(
    "spec", ["timeout", "slow@#2:delay=1.5", "drop_result@id=call_1", "exception@get_time"]
)
def test_fault_spec_round_trips_through_the_parser(spec):
    assert parse_fault(spec).spec == spec


def test_parse_fault_unknown_kind_suggests_and_lists_the_valid_kinds():
    with pytest.raises(UsageError) as err:
        parse_fault("timout@get_weather")
    message = str(err.value)
    assert message.startswith("unknown fault kind 'timout' (did you mean timeout?); valid kinds: ")
    assert message.endswith(", ".join(CATALOG))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("slow@#x", "bad fault target '#x': #N needs a call number, e.g. #2"),
        ("slow@#0", "bad fault 'slow@#0': nth counts calls from 1"),
        ("slow:speed=3", "bad fault 'slow:speed=3': slow has no param 'speed' (params: delay)"),
        ("slow:delay=soon", "bad fault 'slow:delay=soon': slow param delay='soon' is not a number"),
        ("slow:delay", "bad fault param 'delay' in 'slow:delay': expected key=value"),
        ("timeout:x=1", "bad fault 'timeout:x=1': timeout has no param 'x' (params: none)"),
        ("", "bad fault '': expected KIND[@TARGET][:key=value,...]"),
    ],
)
def test_parse_fault_errors_name_the_problem(spec, message):
    with pytest.raises(UsageError) as err:
        parse_fault(spec)
    assert str(err.value) == message


def test_a_fault_targets_at_most_one_thing():
    with pytest.raises(ValueError, match="not several"):
        Fault(kind="timeout", tool="a", nth=1)
