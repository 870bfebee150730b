"""The lit event's wire fragment as the teaching picture prints it (flowdebug/views/wire_terms.py):
each container's one-line JSON is json.dumps's own, and a fragment short enough stays on one
line while a longer one opens by level."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from flowdebug import jsontext
from flowdebug.views.wire_terms import _cut_strings, _flat, _flats, pretty
from tests.hypothesis_profiles import examples

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=40,
)


@settings(max_examples=examples(300), deadline=None)
@given(JSON)
def test_each_containers_line_is_what_json_dumps_writes(value):
    flats = _flats(value)
    assert _flat(value, flats) == json.dumps(value, ensure_ascii=False)
    # the encoder made once writes what json.dumps writes, infinities included
    assert jsontext.shown(value) == json.dumps(value, ensure_ascii=False)


def _reference(value, indent="", head="", tail=""):
    """The lines as json.dumps at every level makes them (what pretty printed before)."""
    flat = json.dumps(value, ensure_ascii=False)
    if len(flat) <= 44 or not isinstance(value, (dict, list)) or not value:
        return [f"{indent}{head}{flat}{tail}"]
    items = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
    opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
    out = [f"{indent}{head}{opening}"]
    for i, (k, v) in enumerate(items):
        key = "" if k is None else f"{json.dumps(k, ensure_ascii=False)}: "
        out += _reference(v, indent + "  ", key, "," if i < len(items) - 1 else "")
    return [*out, f"{indent}{closing}{tail}"]


@settings(max_examples=examples(200), deadline=None)
@given(JSON)
def test_the_lines_are_those_json_dumps_makes_at_every_level(value):
    lines = [text for text, _ in pretty(value, set(), lines=10_000)]
    assert lines == _reference(_cut_strings(value))  # long strings cut, as pretty shows them


def test_a_container_used_twice_and_a_number_key_read_as_json_dumps_writes_them():
    shared = {"id": "call_2", "ok": [1, 2]}
    value = {"a": shared, "b": [shared, shared], "n": {1: "one"}}
    assert _flat(value, _flats(value)) == json.dumps(value, ensure_ascii=False)
    long = {1: {"content": [{"text": "x" * 40}], "status": "error"}}  # opens by level
    assert [text for text, _ in pretty(long, set(), lines=100)] == _reference(long)


def test_a_long_fragment_opens_by_level_and_marks_the_lines_of_its_keys():
    fragment = {"toolResult": {"toolUseId": "call_2", "content": [{"text": "x" * 30}],
                               "status": "error"}}  # fmt: skip
    lines = pretty(fragment, {"toolUseId", "status"})
    assert [text for text, _ in lines] == [
        "{",
        '  "toolResult": {',
        '    "toolUseId": "call_2",',
        '    "content": [{"text": "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}],',
        '    "status": "error"',
        "  }",
        "}",
    ]
    assert [marked for _, marked in lines] == [False, False, True, False, True, False, False]
