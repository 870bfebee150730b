"""The lit event's wire fragment as the teaching picture prints it (flowdebug/views/wire_terms.py):
each container's one-line JSON is json.dumps's own, and a fragment short enough stays on one
line while a longer one opens by level."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from flowdebug.views.wire_terms import _flat, _flats, pretty
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


def test_a_container_used_twice_and_a_number_key_read_as_json_dumps_writes_them():
    shared = {"id": "call_2", "ok": [1, 2]}
    value = {"a": shared, "b": [shared, shared], "n": {1: "one"}}
    assert _flat(value, _flats(value)) == json.dumps(value, ensure_ascii=False)


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
