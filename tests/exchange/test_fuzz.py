"""Fuzzing (hypothesis): every public entrance gives a result or a FlowdebugError, for any JSON.

The entrances (:data:`ENTRANCES`): ``convert`` to every target, ``lint_payload``,
``import_session`` (parsed, text and bytes), the command line's reader (``flowdebug convert``
and ``lint`` on a file), ``load_json``, the paste on the Tools page (``parse_tools``) and the
History page's edits. Each is fed arbitrary JSON (recursive strategies, deep and wide, with NaN,
Infinity, lone surrogates and long numbers), and real payloads (tests/fixtures) whose random
subtrees were replaced by random JSON, or by random JSON written into a string (tool-call
arguments and outputs are JSON in a string). Accepted: a result, or a FlowdebugError with one
readable reason; and whatever the one reader (``jsontext.check``) refuses, every entrance
refuses. A refused edit leaves the session byte-identical.

Examples come from the hypothesis profile (tests/hypothesis_profiles.py): ``ci`` (the default:
100 a test, so 200 an entrance over its two tests), ``fast`` (`make test-fast`: 10 a test) or
``long`` (1,500 a test, 3,000 an entrance; run by hand: ``FLOWDEBUG_HYPOTHESIS=long``);
``FLOWDEBUG_FUZZ_EXAMPLES`` sets the examples a test.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import sys
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowdebug import jsontext
from flowdebug.cli.main import main as cli
from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.edits import EditError
from flowdebug.errors import CodecError, FlowdebugError
from flowdebug.exchange.exports import trace
from flowdebug.exchange.imports import import_session
from flowdebug.exchange.tool_imports import parse_tools
from flowdebug.lint.linter import lint_payload
from flowdebug.protocols.convert import TARGETS, convert, load_json
from flowdebug.store.rows import state_json
from tests.hypothesis_profiles import examples
from tests.paths import REAL, WIRE

FIXTURES = {
    p.name: json.loads(p.read_text("utf-8"))
    for folder in (WIRE, REAL)
    for p in sorted(folder.glob("*.json"))
}
REFERENCE = {p.name: FIXTURES[p.name] for p in sorted(WIRE.glob("*.json"))}

_OVERHEAD = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
FUZZ = settings(
    max_examples=int(os.environ.get("FLOWDEBUG_FUZZ_EXAMPLES", examples(100))),
    deadline=None,
    suppress_health_check=_OVERHEAD,
)

# Keys the decoders look for, so random objects reach past the first check.
KEYS = st.sampled_from(
    [
        "role", "content", "parts", "messages", "kind", "type", "text", "id", "name",
        "arguments", "input", "args", "call_id", "tool_use_id", "tool_call_id", "tools",
        "tool_calls", "function", "functionCall", "functionResponse", "contents", "output",
        "jsonrpc", "method", "params", "result", "isError", "format", "events", "toolset",
        "conversation", "model", "max_tokens", "system", "is_error", "response", "usage",
        "action", "toolUse", "toolResult", "toolSpec", "inputSchema", "input_schema",
        "parameters", "properties", "required", "candidates", "choices", "delta", "item",
    ]
)  # fmt: skip
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.text(st.characters(exclude_categories=[]), max_size=3)  # lone surrogates too
    | st.sampled_from(["user", "assistant", "tool", "text", "tool_call", "tool_result", "2.0"])
)
# What JSON text can say but a payload must not hold: each is refused by the one reader.
HOSTILE = st.sampled_from([float("nan"), float("inf"), float("-inf"), "\udfff"]) | st.builds(
    pow, st.just(10), st.just(5000)
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(KEYS | st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=24,
)
WIDE = st.recursive(
    SCALARS | HOSTILE,
    lambda inner: (
        st.lists(inner, max_size=40)
        | st.dictionaries(KEYS | st.text(max_size=8), inner, max_size=30)
    ),
    max_leaves=400,
)


@st.composite
def deep(draw: st.DrawFn) -> Any:
    """A value nested 100 to 3,000 levels, lists and objects in a drawn pattern (drawing each
    level would make hypothesis slow), built without recursion."""
    value = draw(SCALARS)
    pattern = draw(st.lists(st.booleans(), min_size=1, max_size=6))
    key = draw(KEYS)
    for level in range(draw(st.integers(100, 3000))):
        value = [value] if pattern[level % len(pattern)] else {key: value}
    return value


ANY_JSON = JSON | WIDE | deep()


def assert_clear(error: BaseException) -> None:
    """A refusal a person can act on: our error type, one short readable reason."""
    assert isinstance(error, FlowdebugError), f"{type(error).__name__}: {error}"
    message = str(error)
    assert message.strip(), "an empty error message"
    assert "Traceback" not in message and len(message) < 2000, message
    if isinstance(error, CodecError):
        assert error.path.startswith("$"), error.path


def _paths(value: Any) -> list[tuple[Any, ...]]:
    """Every place in ``value`` down to 64 levels (iterative: mutations nest deep)."""
    out: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        item, where = stack.pop()
        out.append(where)
        if len(where) >= 64:
            continue
        if isinstance(item, dict):
            stack += [(v, (*where, k)) for k, v in item.items()]
        elif isinstance(item, list):
            stack += [(v, (*where, i)) for i, v in enumerate(item)]
    return out


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


@contextlib.contextmanager
def _deep_enough():
    """Room for json.dumps to write a value nested 3,000 levels (deep() above)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def _text(value: Any) -> str | None:
    """``value`` as JSON text (NaN and Infinity as Python writes them, a lone surrogate
    escaped), or None when it has none (an integer longer than Python writes)."""
    with _deep_enough():
        try:
            return json.dumps(value)
        except ValueError:
            return None


def _replacement(data: st.DataObject) -> Any:
    """Random JSON, or random JSON written into a string (as tool-call arguments are)."""
    value = data.draw(ANY_JSON)
    if data.draw(st.booleans()):
        return value
    text = _text(value)
    return value if text is None else text


def _mutate(data: st.DataObject, payload: Any) -> Any:
    """``payload`` with one to three random edits: replace (by random JSON, deep and wide, or
    JSON in a string), restring (a string replaced by random JSON's text), delete, empty,
    duplicate, wrap."""
    payload = copy.deepcopy(payload)
    for _ in range(data.draw(st.integers(1, 3))):
        op = data.draw(st.sampled_from(["replace", "restring", "delete", "empty", "dup", "wrap"]))
        paths = _paths(payload)
        if op == "restring":  # a string the codec may read as JSON (arguments, an output)
            paths = [p for p in paths if isinstance(_at(payload, p), str)] or paths
        path = data.draw(st.sampled_from(paths))
        if not path:
            payload = _replacement(data) if op == "replace" else [payload]
            continue
        parent = payload
        for step in path[:-1]:
            parent = parent[step]
        key, old = path[-1], parent[path[-1]]
        match op:
            case "replace":
                parent[key] = _replacement(data)
            case "restring":
                parent[key] = _text(data.draw(ANY_JSON | HOSTILE)) or old
            case "delete":
                del parent[key]
            case "empty":
                parent[key] = type(old)() if isinstance(old, dict | list | str) else None
            case "dup" if isinstance(parent, list):
                parent.insert(key, copy.copy(old))
            case _:
                parent[key] = [old] if op == "wrap" else {"value": old}
    return payload


@pytest.fixture(scope="module")
def finished() -> Session:
    session = Session.from_scenario("tasks")
    session.run()
    return session


# -- importers ------------------------------------------------------------------------------------


def _try_import(data: Any) -> None:
    try:
        imported = import_session(data)
    except FlowdebugError as e:
        assert_clear(e)
        return
    except Exception as e:  # a crash: report it with the input
        pytest.fail(f"import crashed with {type(e).__name__}: {e}")
    state_json(imported.state)  # whatever imports can be saved


@FUZZ
@given(st.data())
def test_importing_mutated_traces_never_crashes(finished, data):
    _try_import(_mutate(data, trace(finished.state)))


# -- every public entrance -----------------------------------------------------------------------


def _cli(*command: str) -> Callable[[str], None]:
    """``flowdebug COMMAND -`` reading ``text`` on stdin: exit 0 or 1 is a result, 2 a
    refusal (one line), anything else a crash."""

    def run(text: str) -> None:
        stdin = io.TextIOWrapper(io.BytesIO(text.encode("utf-8", "surrogatepass")))
        out, err = io.StringIO(), io.StringIO()
        saved = sys.stdin
        sys.stdin = stdin
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = cli([*command, "-"])
        finally:
            sys.stdin = saved
        if code == 2:
            raise CodecError("cli", "$", err.getvalue().strip())
        assert code in (0, 1), f"flowdebug {' '.join(command)} exited {code}: {err.getvalue()}"

    return run


def _history(session: Session) -> Callable[[Any], None]:
    """The History page: a message replaced by ``value`` (parsed, or its JSON text); a
    refused edit leaves the session as it was."""

    def run(value: Any) -> None:
        clone = session.clone()
        before = clone.state.model_dump_json()
        try:
            clone.edit_message(0, value)
        except EditError:
            assert clone.state.model_dump_json() == before
            raise
        state_json(clone.state)

    return run


def _entrances(session: Session) -> dict[str, tuple[bool, Callable[[Any], Any]]]:
    """Every public entrance: name -> (takes JSON text, the call)."""
    entrances: dict[str, tuple[bool, Callable[[Any], Any]]] = {
        f"convert to {t}": (False, lambda v, t=t: _clean_output(convert(v, t)[0])) for t in TARGETS
    }
    entrances |= {
        "lint_payload": (False, lint_payload),
        "import_session (parsed)": (False, lambda v: state_json(import_session(v).state)),
        "import_session (text)": (True, lambda t: state_json(import_session(t).state)),
        "import_session (bytes)": (
            True,
            lambda t: state_json(import_session(t.encode("utf-8", "surrogatepass")).state),
        ),
        "flowdebug convert": (True, _cli("convert", "--to", "openai-responses")),
        "flowdebug lint": (True, _cli("lint")),
        "load_json": (True, load_json),
        "paste tools (parsed)": (False, parse_tools),
        "paste tools (text)": (True, parse_tools),
        "history edit (parsed)": (False, _history(session)),
        "history edit (text)": (True, _history(session)),
    }
    return entrances


def _clean_output(out: Any) -> None:
    """What a conversion writes is JSON the one reader accepts."""
    jsontext.check(out, "output")
    assert _text(out) is not None


@pytest.fixture(scope="module")
def entrances(finished: Session) -> dict[str, tuple[bool, Callable[[Any], Any]]]:
    return _entrances(finished)


def _refused_by_the_reader(value: Any) -> bool:
    try:
        jsontext.check(value)
    except CodecError:
        return True
    return False


def _copied(value: Any) -> Any:
    """A JSON value copied without recursion (the deep ones nest 3,000 levels), keys in order."""
    out: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, out, 0)]
    while stack:
        v, parent, key = stack.pop()
        if isinstance(v, dict):
            parent[key] = c = dict.fromkeys(v)
            stack += [(x, c, k) for k, x in v.items()]
        elif isinstance(v, list):
            parent[key] = c = [None] * len(v)
            stack += [(x, c, i) for i, x in enumerate(v)]
        else:
            parent[key] = v
    return out[0]


def _feed(entrance: str, takes_text: bool, call: Callable[[Any], Any], value: Any) -> None:
    """Give ``value`` to the entrance: accept a result or a clear FlowdebugError, and make
    sure what the one reader refuses is refused here too."""
    given_value: Any = value
    if takes_text:
        given_value = _text(value)
        if given_value is None:
            return
    try:
        call(given_value)
    except FlowdebugError as e:
        assert_clear(e)
        return
    except Exception as e:  # a crash: report it with the input
        pytest.fail(f"{entrance} crashed with {type(e).__name__}: {e}")
    assert not _refused_by_the_reader(value), f"{entrance} accepted what the reader refuses"


# Every entrance is fed every drawn value: drawing is most of these tests' time (70 % of their
# CPU was hypothesis's own), so the entrances share the draws rather than each drawing its own
# (they were a test per entrance: 18 of each, 30 s of CPU in all). Each entrance still gets
# every example, a copy of its own; a failure names the entrance, and hypothesis shrinks the
# value that broke it.
@FUZZ
@given(data=st.data())
def test_every_entrance_gives_a_result_or_a_flowdebug_error_for_any_json(entrances, data):
    value = data.draw(ANY_JSON, label="value")
    for entrance, (takes_text, call) in entrances.items():
        _feed(entrance, takes_text, call, _copied(value))  # each its own, as if drawn


@FUZZ
@given(data=st.data())
def test_every_entrance_gives_a_result_or_a_flowdebug_error_for_mutated_real_payloads(
    entrances, data
):
    name = data.draw(st.sampled_from(sorted(FIXTURES)), label="fixture")
    value = _mutate(data, FIXTURES[name])
    for entrance, (takes_text, call) in entrances.items():
        _feed(entrance, takes_text, call, _copied(value))  # each its own, as if drawn


@FUZZ
@given(blob=st.text(max_size=200) | st.binary(max_size=200))
def test_importing_any_text_or_bytes_succeeds_or_names_the_problem(blob):
    _try_import(blob)


# -- the history editor ---------------------------------------------------------------------------

PART_KINDS = st.sampled_from(["text", "thinking", "image", "tool_call", "tool_result", "x"])


def _part_like() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"kind": PART_KINDS},
        optional={
            "text": SCALARS,
            "id": SCALARS,
            "name": SCALARS,
            "arguments": JSON,
            "call_id": SCALARS,
            "content": JSON,
            "is_error": SCALARS,
            "signature": SCALARS,
            "extra": JSON,
        },
    )


EDITS = (
    _part_like()
    | st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool", "system", "bot"])},
        optional={"parts": st.lists(_part_like(), max_size=3), "provider_details": JSON},
    )
    | JSON
    | st.text(max_size=60)
    | _part_like().map(json.dumps)
)


@FUZZ
@given(
    op=st.sampled_from(["edit_part", "edit_message"]),
    msg=st.integers(-1, 12),
    part=st.integers(-1, 3),
    edit=EDITS,
)
def test_an_edit_is_applied_or_refused_leaving_the_session_byte_identical(
    finished, op, msg, part, edit
):
    session = finished.clone()
    before, undo = session.state.model_dump_json(), len(session.undo_stack)
    try:
        if op == "edit_part":
            session.edit_part(msg, part, edit)
        else:
            session.edit_message(msg, edit)
    except EditError as e:
        assert_clear(e)
        assert session.state.model_dump_json() == before
        assert len(session.undo_stack) == undo
        return
    state_json(session.state)  # an accepted edit leaves a session that can be saved
    session.undo()
    assert session.state.model_dump_json() == before


def test_an_edit_with_text_that_is_not_unicode_is_refused(finished):
    session = finished.clone()
    before = session.state.model_dump_json()
    with pytest.raises(EditError, match=r"messages\[0\]\.parts\[0\].*surrogate"):
        session.edit_part(0, 0, '{"kind": "text", "text": "\\ud800"}')
    assert session.state.model_dump_json() == before


# -- converters -----------------------------------------------------------------------------------


# -- inputs that once crashed a codec (found by the fuzzers above) --------------------------------


def _encoded(protocol: str, op: str) -> Any:
    from flowdebug import protocols
    from tests import cases

    codec = protocols.get(protocol)
    if op == "stream":
        return copy.deepcopy(codec.encode_stream(cases.WEATHER_TOOL_USE).value)
    return copy.deepcopy(codec.encode_response(cases.WEATHER_TOOL_USE).value)


def _anthropic_stream_usage_text() -> Any:
    events = _encoded("anthropic", "stream")
    events[0]["message"]["usage"] = "many"
    return events


def _responses_usage_details_list() -> Any:
    payload = _encoded("openai-responses", "response")
    payload["usage"] = {"input_tokens": 1, "output_tokens": 1, "input_tokens_details": [1]}
    return payload


def _responses_stream_output_flag() -> Any:
    events = _encoded("openai-responses", "stream")
    events[-1]["response"]["output"] = True
    return events


ONCE_CRASHED = {
    "anthropic stream event type is a list": lambda: [{"type": ["message_start"]}],
    "anthropic stream usage is text": _anthropic_stream_usage_text,
    "responses usage details is a list": _responses_usage_details_list,
    "responses stream output is a boolean": _responses_stream_output_flag,
    "anthropic request tools is a number": lambda: {
        "model": "claude-sonnet-4-6",
        "max_tokens": 5,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": 5,
    },
    "chat content part type is a list": lambda: {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": [1]}]}],
    },
    "tool schema type is a list next to a format": lambda: {
        "messages": [],
        "tools": [{"name": "t", "parameters": {"format": "date", "type": ["string"]}}],
    },
    "a call id with a lone surrogate": lambda: {
        "model": "m",
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "\ud800", "type": "function", "function": {"name": "f", "arguments": ""}}
                ],
            }
        ],
    },
}


@pytest.mark.parametrize("case", list(ONCE_CRASHED))
@pytest.mark.parametrize("target", TARGETS)
def test_inputs_that_once_crashed_a_codec_convert_or_are_refused(case, target):
    try:
        convert(ONCE_CRASHED[case](), target)
    except FlowdebugError as e:
        assert_clear(e)
