"""The runtime: validation, dispatch, concurrency, timeouts, approval and the policy."""

from __future__ import annotations

import threading
import time

import pytest

from flowdebug.engine.execution.approval import Approve, Edit, Reject, needs_approval
from flowdebug.engine.execution.canned_handlers import FixedHandler
from flowdebug.engine.execution.handlers import CodeHandler, PythonHandler, ToolEntry, Toolset
from flowdebug.engine.execution.runtime import Batch, Policy, Runtime
from flowdebug.engine.execution.validation import argument_errors, unknown_tool_text
from flowdebug.model import Message, Tool, ToolCall
from sample_tools import TOOLSETS, toolset
from tests import cases

# The runtime's own waits and timeouts, on the wall clock (tests/clock.py).
pytestmark = pytest.mark.real_clock

# ---- functions used as python handlers ("tests.engine.test_runtime:<name>") ---------------------


def nap(args):
    time.sleep(args.get("seconds", 0.3))
    return f"slept {args.get('label', '')}"


def hang_forever(args):
    threading.Event().wait()


def exits(args):
    raise SystemExit(2)


def entry(name, handler, timeout=None, **tool):
    return ToolEntry(tool=Tool(name=name, **tool), handler=handler, timeout=timeout)


NAP = entry("nap", PythonHandler(function="tests.engine.test_runtime:nap"))
HANG = entry("hang", PythonHandler(function="tests.engine.test_runtime:hang_forever"), timeout=0.5)
CODE_HANG = entry(
    "code_hang", CodeHandler(source="import time\ndef handler(args):\n    time.sleep(1e6)\n"), 0.5
)
CODE_CRASH = entry("code_crash", CodeHandler(source="import os\ndef handler(a):\n    os._exit(9)"))
ECHO = entry("echo", FixedHandler(result="echo"))


def call(name, call_id="c1", **arguments):
    return ToolCall(id=call_id, name=name, arguments=arguments)


def one(runtime: Runtime, tool_call: ToolCall, **kw):
    return runtime.execute([tool_call], **kw).executions[0]


# ---- validation and refusals ----------------------------------------------------------


def test_invalid_arguments_name_the_failing_path_and_rule():
    rt = Runtime(TOOLSETS["weather"])
    ex = one(rt, call("get_weather", location="Paris", unit="kelvin"))
    assert (ex.result.is_error, ex.result.error_type) == (True, "validation")
    assert ex.result.content == "arguments.unit: 'kelvin' is not one of ['c', 'f']"
    assert ex.handler is None and ex.arguments is None


def test_validation_lists_every_error_with_nested_paths():
    schema = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "integer"}}},
        "required": ["items", "owner"],
    }
    assert argument_errors(schema, {"items": [1, "two"]}) == [
        "arguments: 'owner' is a required property",
        "arguments.items[1]: 'two' is not of type 'integer'",
    ]


def test_validation_uses_draft_2020_12_keywords():
    schema = {"type": "array", "prefixItems": [{"type": "string"}], "items": False}
    assert argument_errors(schema, ["a"]) == []
    assert argument_errors(schema, ["a", 1]) == [
        "arguments: Expected at most 1 item but found 1 extra: 1"
    ]


def test_a_tool_whose_schema_is_invalid_yields_invalid_schema():
    rt = Runtime(Toolset(entries=[entry("bad", FixedHandler(), parameters={"type": "objekt"})]))
    ex = one(rt, call("bad"))
    assert ex.result.error_type == "invalid_schema"
    assert ex.result.content.startswith("the declared parameters schema of bad is invalid:")


def test_unknown_tool_suggests_the_closest_names():
    rt = Runtime(toolset("weather", "tasks"))
    ex = one(rt, call("get_wether"))
    assert (ex.result.error_type, ex.result.name) == ("unknown_tool", "get_wether")
    assert ex.result.content == (
        "unknown tool 'get_wether'. Did you mean 'get_weather'? Available tools: get_weather, "
        "create_task, update_task, complete_task, delete_task, list_tasks"
    )
    assert unknown_tool_text("zzz", ["a"]) == "unknown tool 'zzz'. Available tools: a"
    assert unknown_tool_text("zzz", []) == "unknown tool 'zzz': no tools are declared"


def test_malformed_json_arguments_yield_malformed_arguments():
    rt = Runtime(TOOLSETS["weather"])
    bad = cases.MALFORMED_ARGS.message.tool_calls[0]
    ex = one(rt, bad)
    assert ex.result.error_type == "malformed_arguments"
    assert ex.result.call_id == "call_bad"
    assert ex.result.content.startswith("the arguments could not be read: they are not valid JSON")
    assert ex.result.content.endswith('Received: {"location": "Paris"')
    array = bad.model_copy(update={"raw_arguments": "[1, 2]"})
    assert "they must be a JSON object, not list" in one(rt, array).result.content


def test_a_repeated_call_id_is_refused_and_an_empty_id_still_runs():
    rt = Runtime(Toolset(entries=[ECHO]))
    batch = rt.execute([call("echo", "same"), call("echo", "same"), call("echo", "")])
    first, second, empty = batch.executions
    assert (first.result.content, first.result.is_error) == ("echo", False)
    assert second.result.error_type == "duplicate_call_id"
    assert (empty.result.call_id, empty.result.content) == ("", "echo")
    assert empty.steps[0] == "the call has no id: its result pairs by name and position"


# ---- dispatch, concurrency, timeouts --------------------------------------------------


def test_parallel_batch_runs_concurrently_and_returns_results_in_call_order():
    rt = Runtime(Toolset(entries=[NAP, ECHO]))
    # Two naps of a second: one after the other they take two; together, about one, with
    # room for a loaded machine to start the threads (0.3 s naps under 0.5 s failed once).
    naps = [call("nap", "a", label="a", seconds=1.0), call("nap", "b", label="b", seconds=1.0)]
    calls = [*naps, call("echo", "c")]
    started = time.perf_counter()
    batch = rt.execute(Message(role="assistant", parts=calls))
    elapsed = time.perf_counter() - started
    assert elapsed < 1.6
    assert [(r.call_id, r.name, r.content) for r in batch.results] == [
        ("a", "nap", "slept a"),
        ("b", "nap", "slept b"),
        ("c", "echo", "echo"),
    ]
    a, b, c = batch.executions
    assert a.duration_ms >= 990 and b.duration_ms >= 990 and c.duration_ms < 100
    assert [e.number for e in batch.executions] == [1, 2, 3]
    assert batch.message == Message(role="tool", parts=batch.results)


def test_python_handler_that_never_returns_times_out_and_the_runtime_stays_usable():
    rt = Runtime(Toolset(entries=[HANG, ECHO]))
    started = time.perf_counter()
    ex = one(rt, call("hang"))
    assert time.perf_counter() - started < 0.5 + 0.5
    assert (ex.result.is_error, ex.result.error_type) == (True, "timeout")
    assert ex.result.content == "timeout after 0.5s"
    assert ex.steps[-1] == "abandoned at the 0.5s timeout"
    started = time.perf_counter()
    assert one(rt, call("echo")).result.content == "echo"
    assert time.perf_counter() - started < 0.5  # not held by the call left hanging


def test_code_handler_that_never_returns_times_out_and_the_runtime_stays_usable():
    rt = Runtime(Toolset(entries=[CODE_HANG, ECHO]))
    started = time.perf_counter()
    ex = one(rt, call("code_hang"))
    assert time.perf_counter() - started < 0.5 + 0.5
    assert (ex.result.error_type, ex.result.content) == ("timeout", "timeout after 0.5s")
    assert one(rt, call("echo")).result.content == "echo"


def test_code_handler_that_crashes_its_process_yields_an_error_and_the_runtime_goes_on():
    rt = Runtime(Toolset(entries=[CODE_CRASH, ECHO]))
    batch = rt.execute([call("code_crash", "x"), call("echo", "y")])
    crash, echo = batch.results
    assert (crash.is_error, crash.error_type) == (True, "crash")
    assert crash.content == "the handler process died (exit code 9)"
    assert (echo.is_error, echo.content) == (False, "echo")
    assert one(rt, call("code_crash")).result.error_type == "crash"


def test_the_policy_default_timeout_applies_to_tools_without_their_own():
    rt = Runtime(Toolset(entries=[NAP]), Policy(default_timeout=0.1))
    ex = one(rt, call("nap", seconds=0.3))
    assert (ex.result.error_type, ex.result.content) == ("timeout", "timeout after 0.1s")


def test_canonical_weather_batch_gives_paris_and_times_out_tokyo():
    rt = Runtime(TOOLSETS["weather"])
    started = time.perf_counter()
    paris, tokyo = rt.execute(cases.WEATHER_CALLS).results
    assert time.perf_counter() - started < 1.0 + 0.5
    assert paris == cases.PARIS_RESULT
    assert (tokyo.call_id, tokyo.is_error, tokyo.error_type) == (cases.TOKYO.id, True, "timeout")
    assert tokyo.content == "timeout after 1s"


def test_a_handler_raising_system_exit_is_an_error_result_not_an_exit():
    rt = Runtime(
        Toolset(entries=[entry("exits", PythonHandler(function="tests.engine.test_runtime:exits"))])
    )
    ex = one(rt, call("exits"))
    assert (ex.result.error_type, ex.result.content) == ("exception", "SystemExit: 2")


def test_execution_record_holds_timing_arguments_and_steps():
    rt = Runtime(Toolset(entries=[NAP]))
    ex = one(rt, call("nap", seconds=0.05))
    assert ex.started_ms <= ex.ended_ms and ex.duration_ms >= 45
    assert (ex.arguments, ex.handler, ex.decision, ex.fault) == (
        {"seconds": 0.05},
        "python",
        None,
        None,
    )
    assert ex.steps == ["arguments valid", "ran the python handler"]
    assert Batch.model_validate_json(Batch(executions=[ex]).model_dump_json()).executions == [ex]


def test_results_longer_than_the_policy_limit_are_truncated():
    big = entry("big", FixedHandler(result="x" * 50))
    rt = Runtime(Toolset(entries=[big]), Policy(max_result_chars=10))
    ex = one(rt, call("big"))
    assert ex.result.content == "xxxxxxxxxx\n[truncated: 50 characters, limit 10]"
    assert ex.steps[-1] == "result truncated from 50 to 10 characters"


def test_a_dict_result_becomes_structured_content_when_the_tool_declares_an_output_schema():
    plain = entry("plain", FixedHandler(result={"n": 1}))
    typed = entry("typed", FixedHandler(result={"n": 1}), output_schema={"type": "object"})
    rt = Runtime(Toolset(entries=[plain, typed]))
    p, t = rt.execute([call("plain", "p"), call("typed", "t")]).results
    assert (p.structured, t.structured, t.content) == (None, {"n": 1}, '{"n": 1}')


def test_policy_holds_the_round_cap_for_the_debugger():
    assert Policy().max_rounds == 10 and Policy(max_rounds=3).max_rounds == 3
    with pytest.raises(ValueError):
        Policy(max_rounds=0)


# ---- session state --------------------------------------------------------------------


def test_task_store_is_scoped_to_each_runtime_and_restored_from_saved_state():
    one_session, other_session = Runtime(TOOLSETS["tasks"]), Runtime(TOOLSETS["tasks"])
    one(one_session, call("create_task", title="buy milk"))
    assert one(other_session, call("list_tasks")).result.content == "[]"
    restored = Runtime(TOOLSETS["tasks"], state=one_session.state)
    assert '"title": "buy milk"' in one(restored, call("list_tasks")).result.content


def test_parallel_creates_in_one_batch_get_distinct_ids():
    rt = Runtime(TOOLSETS["tasks"])
    batch = rt.execute([call("create_task", f"c{i}", title=str(i)) for i in range(8)])
    ids = [r.content.split('"id": "')[1].split('"')[0] for r in batch.results]
    assert sorted(ids) == sorted(f"T-{i}" for i in range(1, 9))


# ---- approval ---------------------------------------------------------------------------


def test_needs_approval_for_destructive_tools_only():
    tasks = TOOLSETS["tasks"]
    assert needs_approval(call("delete_task", task_id="T-1"), tasks)
    assert not needs_approval(call("complete_task", task_id="T-1"), tasks)
    assert not needs_approval(call("nope"), tasks)


def test_destructive_call_without_a_decision_does_not_run():
    rt = Runtime(TOOLSETS["shell"])
    ex = one(rt, call("run_command", command="ls"))
    assert (ex.result.error_type, ex.handler) == ("permission", None)
    assert ex.result.content == (
        "run_command is destructive and needs a person's approval; none was given, "
        "so the call was not run"
    )


def test_approved_destructive_call_runs():
    rt = Runtime(TOOLSETS["shell"])
    ex = one(rt, call("run_command", "c1", command="ls"), decisions={"c1": Approve()})
    assert (ex.result.is_error, ex.decision) == (False, "approve")
    assert '"stdout": "README.md\\nnotes\\nsrc\\n"' in ex.result.content


def test_edited_call_runs_with_the_new_arguments_after_validation():
    rt = Runtime(TOOLSETS["shell"] + TOOLSETS["weather"])
    ex = one(
        rt,
        call("run_command", "c1", command="rm -rf /"),
        decisions={"c1": Edit(arguments={"command": "pwd"})},
    )
    assert (ex.decision, ex.arguments) == ("edit", {"command": "pwd"})
    assert ex.call.arguments == {"command": "rm -rf /"}
    assert '"/home/demo\\n"' in ex.result.content
    bad = one(rt, call("get_weather", "w", location="Paris"), decisions={"w": Edit(arguments={})})
    assert bad.result.content == "arguments: 'location' is a required property"


def test_rejected_call_yields_a_permission_error_with_the_reason():
    rt = Runtime(TOOLSETS["tasks"])
    decisions = {"c1": Reject(reason="keep my tasks")}
    ex = one(rt, call("delete_task", "c1", task_id="T-1"), decisions=decisions)
    assert (ex.result.error_type, ex.decision) == ("permission", "reject")
    assert ex.result.content == "the user rejected this call: keep my tasks"
    ex = one(rt, call("create_task", "c1", title="x"), decisions=decisions)
    assert ex.result.error_type == "permission"


def test_an_unreadable_decision_fails_closed():
    rt = Runtime(TOOLSETS["shell"])
    ex = one(rt, call("run_command", "c1", command="ls"), decisions={"c1": {"kind": "approve"}})
    assert ex.result.error_type == "permission" and ex.handler is None
