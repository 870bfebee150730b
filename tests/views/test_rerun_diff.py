"""views/rerun.json_diff: the JSON paths where two values differ, order ignored."""

from flowdebug.views.rerun import Difference, diff_rows, json_diff


def test_reordered_keys_and_list_items_are_no_difference():
    before = {"tools": [{"name": "a", "x": 1}, {"name": "b"}], "system": "s"}
    after = {"system": "s", "tools": [{"name": "b"}, {"x": 1, "name": "a"}]}
    assert json_diff(before, after) == []


def test_list_items_pair_by_name_then_by_position_and_extra_items_are_absent_on_one_side():
    before = {"tools": [{"name": "a", "d": "old"}, 1, 2]}
    after = {"tools": [3, {"name": "a", "d": "new"}, 1, 4, 5]}
    assert json_diff(before, after) == [
        Difference("$.tools[1].d", "old", "new"),
        Difference("$.tools[0]", 2, 3),
        Difference("$.tools[3]", None, 4, "before"),
        Difference("$.tools[4]", None, 5, "before"),
    ]


def test_a_key_on_one_side_only_is_shown_as_absent_on_the_other():
    rows = diff_rows(json_diff({"a": 1, "b": {"c": True}}, {"a": 1, "d": None}))
    assert rows == [
        {"path": "$.b", "before": '{"c": true}', "after": "(absent)"},
        {"path": "$.d", "before": "(absent)", "after": "null"},
    ]
