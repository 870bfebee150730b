"""A session's values stored once (flowdebug.store.packing): items read back exactly, a request
one turn longer adds a few values, and a database from before packing opens and reads back
identically."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from flowdebug.engine.session.debugger import Session
from flowdebug.engine.session.exchange_bodies import expanded
from flowdebug.jsontext import compact
from flowdebug.store.db import MIGRATIONS, SqliteDatabase, migrate
from flowdebug.store.objects import Objects
from flowdebug.store.packing import PACKED, Packer, unpacker
from flowdebug.store.rows import LISTS, heads, item_json, state_items
from flowdebug.store.sessions import open_store
from tests.hypothesis_profiles import examples, size

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=40) | st.dictionaries(st.text(), inner, max_size=8),
    max_leaves=200,
)


def roundtrip(items: list[str]) -> list[str]:
    packer = Packer()
    bodies = [packer.pack(t) for t in items]
    unpack = unpacker(dict(packer.values))
    return [unpack(b) for b in bodies]


# One property test for both readers of a packed item, the text unpacker and the store's
# objects (flowdebug.store.objects): drawing these items is most of its time (18 of 25 s of
# CPU for 300), so the two readers share the draws rather than each drawing its own (they were
# two tests, 300 and 200 examples: 41 s of CPU between them).
@settings(max_examples=examples(300), deadline=None)
@given(st.dictionaries(st.text(), json_values, max_size=6))
def test_any_item_reads_back_as_the_same_value_as_text_and_as_objects(item):
    packer = Packer()
    body = packer.pack(json.dumps(item))
    values = dict(packer.values)
    text = unpacker(values)(body)
    assert json.loads(text) == item
    # the objects a loaded session holds are the values the text unpacker reads
    got = expanded(Objects(values).row(body))
    assert json.dumps(got, ensure_ascii=False) == json.dumps(json.loads(text), ensure_ascii=False)


@settings(max_examples=examples(100), deadline=None)
@given(json_values)
def test_a_string_holding_compact_json_reads_back_as_the_same_string(value):
    compact = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    item = json.dumps({"raw_request": compact, "request": value, "raw": " " + compact})
    (back,) = roundtrip([item])
    assert json.loads(back) == json.loads(item)


# Values around the packer's thresholds, small and quick to draw: strings either side of
# ELEMENT_BYTES and MIN_BYTES, arrays either side of FANOUT, commas inside strings.
near_thresholds = st.recursive(
    st.none()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", ",", "é,", '"{', "\\", "\ud800", "[1]"])
    | st.builds(str.__mul__, st.sampled_from(["a", ",", "é", "{"]), st.integers(20, 560)),
    lambda inner: (
        st.lists(inner, min_size=6, max_size=10)
        | st.dictionaries(st.sampled_from("abcdefghij"), inner, max_size=9)
    ),
    max_leaves=40,
)


@settings(max_examples=examples(200), deadline=None)
@given(st.dictionaries(st.sampled_from("xyz"), near_thresholds, max_size=3))
@example({"x": [[0] * 9]})  # a long array inside a short one: chunked
@example({"x": {"a": "a" * 503}})  # an object one byte short of MIN_BYTES: inline
@example({"x": {"a": "a" * 510}})  # a string that reaches it: kept on its own
@example({"x": [["a" * 59], 1, 1, 1, 1, 1, 1, 1, 1], "y": [["a" * 60]] * 9})  # ELEMENT_BYTES
def test_the_quick_way_packs_exactly_as_walking_every_container(item):
    text = json.dumps(item)
    quick, walked = Packer(), Packer(quick=False)
    assert quick.pack(text) == walked.pack(text)
    assert quick.values == walked.values
    assert compact(item) == json.dumps(item, ensure_ascii=False, separators=(",", ":"))


def test_compact_refuses_what_json_dumps_refuses():
    for value in (float("nan"), {"a": [float("inf")]}, -float("inf")):
        with pytest.raises(ValueError):
            compact(value)
    with pytest.raises(TypeError):
        compact({"a": object()})


def test_an_item_whose_own_data_looks_like_a_reference_is_kept_as_it_is():
    item = json.dumps({"arguments": {"$fd": "0123456789abcdef"}, "pad": "x" * 100})
    packer = Packer()
    assert packer.pack(item) == item and not packer.values
    assert unpacker({})(item) == item


def request(turns: int) -> dict:
    messages = [{"role": "system", "content": "You are a weather assistant."}]
    for n in range(turns):
        messages.append(
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": f"call_{n}", "function": {"name": "get_weather", "arguments": "{}"}}
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": f"call_{n}", "content": f"{n} C"})
    return {"model": "gpt-4o", "messages": messages}


def test_a_request_one_turn_longer_adds_a_few_values_not_the_history_again():
    turns = size(400, fast=160)  # each turn packs the whole request: the cost is turns squared
    stored: dict[str, str] = {}
    added = []
    for n in range(1, turns):
        body = request(n)
        text = json.dumps(body, separators=(",", ":"))
        exchange = json.dumps({"request": body, "codec_request": body, "raw_request": text})
        packer = Packer()
        packed = packer.pack(exchange)
        new = {h: v for h, v in packer.values.items() if h not in stored}
        stored.update(new)
        added.append(len(packed) + sum(map(len, new.values())))
        assert json.loads(unpacker(stored)(packed)) == json.loads(exchange)
    whole = len(json.dumps(request(turns - 1))) * 3
    # Per turn: the new messages and a path of chunks, whatever the length of the history.
    quarter = turns // 4
    assert max(added[-quarter:]) < 2_500 < whole / 10
    assert sum(added[-quarter:]) / quarter < 2 * sum(added[quarter : 2 * quarter]) / quarter


def test_a_database_from_before_packing_opens_and_reads_back_identically(tmp_path):
    session = Session.from_scenario("tasks")
    for _ in range(6):
        session.step()
    state = session.state
    path = tmp_path / "old.db"
    # The database as flowdebug wrote it at schema version 2: plain JSON item rows.
    old = SqliteDatabase(path)
    assert migrate(old, MIGRATIONS[:2]) == 2
    head, conversation = heads(state, [])
    with old.transaction(write=True) as tx:
        now = time.time()
        tx.execute(
            "INSERT INTO flowdebug_sessions (id, name, created, updated, messages, step, status,"
            " revision, head, conversation) VALUES (?, 'old', ?, ?, ?, ?, ?, 3, ?, ?)",
            (
                state.id,
                now,
                now,
                len(state.conversation.messages),
                state.step,
                state.status,
                head,
                conversation,
            ),
        )
        tx.executemany(
            "INSERT INTO flowdebug_items (session, list, idx, body) VALUES (?, ?, ?, ?)",
            [
                (state.id, kind, i, item_json(kind, i, item, []))
                for kind, items in state_items(state).items()
                for i, item in enumerate(items)
            ],
        )
    old.close()

    with open_store(str(path)) as store:
        assert store.version == len(MIGRATIONS)
        loaded, revision = store.load_at(state.id)
        assert revision == 3
        assert loaded.model_dump_json() == state.model_dump_json()
        session.step()  # goes on saving step by step from the converted rows
        store.save(session.state, expected=3)
    with open_store(str(path)) as store:
        assert store.load(state.id).model_dump_json() == session.state.model_dump_json()
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT body, zbody FROM flowdebug_items").fetchall()
        kinds = {k for (k,) in conn.execute("SELECT DISTINCT list FROM flowdebug_items")}
        values = conn.execute("SELECT COUNT(*) FROM flowdebug_values").fetchone()[0]
    # Every row packed by migration 3 (or compressed when written since, by the step).
    assert kinds <= set(LISTS) and values >= 0
    assert all(b.startswith(PACKED) or (b == "" and z) for b, z in rows)
