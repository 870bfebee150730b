"""Exchanges read back as shared objects (flowdebug.store.objects): the same values as the
text they were packed from, a history item one object in every request that holds it, a raw
text that is its parsed body's JSON a reference to it; exports unchanged, byte for byte."""

from __future__ import annotations

import sqlite3

import pytest

from flowdebug.engine.execution.handlers import Toolset
from flowdebug.engine.session.exchange_bodies import JSON_OF, compact, raw_text
from flowdebug.engine.session.session_state import SessionState
from flowdebug.model import Conversation
from flowdebug.store.db import StoreError
from flowdebug.store.rows import state_json
from flowdebug.store.sessions import open_store


def _message(i: int) -> dict:
    return {"role": "user" if i % 2 else "assistant", "content": f"turn {i} " + "x" * 80}


def _exchange(turns: int) -> dict:
    request = {"model": "m", "messages": [_message(i) for i in range(turns)]}
    return {
        "protocol": "anthropic",
        "request": request,
        "status": 200,
        "raw_request": compact(request),
        "raw_response": '{"id":"msg"}',
        "step": turns,
    }


def _recording(n: int) -> SessionState:
    """A session as the recorder kept it before exchanges were shared: every request whole,
    its exact text beside it."""
    return SessionState(
        conversation=Conversation(),
        toolset=Toolset(),
        exchanges=[_exchange(2 * i + 1) for i in range(n)],
    )


# That any item reads back as objects equal to what the text unpacker reads is
# tests/store/test_store_packing.py's property test: the two readers share its draws.


def test_a_loaded_recording_shares_each_history_item_between_its_requests(tmp_path):
    with open_store(str(tmp_path / "s.db")) as store:
        store.save(state := _recording(40))
    with open_store(str(tmp_path / "s.db")) as store:
        loaded = store.load(state.id)
    first, last = loaded.exchanges[20]["request"], loaded.exchanges[39]["request"]
    assert first["messages"] == last["messages"][:41]
    assert all(a is b for a, b in zip(first["messages"], last["messages"], strict=False))


def test_a_raw_text_that_is_its_body_compact_json_loads_as_a_reference_to_it(tmp_path):
    with open_store(str(tmp_path / "s.db")) as store:
        store.save(state := _recording(12))
        loaded = store.load(state.id)
    got = loaded.exchanges[11]
    assert got["raw_request"] == {JSON_OF: "request"}
    assert raw_text(got, "raw_request") == state.exchanges[11]["raw_request"]
    assert got["raw_response"] == '{"id":"msg"}'  # short: written out in its row


def test_a_loaded_recording_exports_byte_for_byte_as_the_one_saved(tmp_path):
    with open_store(str(tmp_path / "s.db")) as store:
        store.save(state := _recording(30))
    with open_store(str(tmp_path / "s.db")) as store:
        loaded = store.load(state.id)
        assert state_json(loaded) == state_json(state)
        store.save(loaded, expected=1)  # saved again as it was read: the same rows
        assert state_json(store.load(state.id)) == state_json(state)


def test_a_raw_request_deeper_in_the_data_stays_text(tmp_path):
    inner = {"messages": [_message(i) for i in range(12)]}
    exchange = {"protocol": "mcp", "data": {"request": inner, "raw_request": compact(inner)}}
    state = SessionState(conversation=Conversation(), toolset=Toolset(), exchanges=[exchange])
    with open_store(str(tmp_path / "s.db")) as store:
        store.save(state)
        got = store.load(state.id).exchanges[0]
    assert got == exchange and isinstance(got["data"]["raw_request"], str)


def test_an_exchange_that_is_no_object_is_refused_with_its_path(tmp_path):
    state = SessionState(conversation=Conversation(), toolset=Toolset(), exchanges=[{"a": 1}])
    with open_store(str(tmp_path / "s.db")) as store:
        store.save(state)
    with sqlite3.connect(tmp_path / "s.db") as db:
        db.execute("UPDATE flowdebug_items SET body = '[1]', zbody = NULL WHERE list = 'exchanges'")
    with (
        open_store(str(tmp_path / "s.db")) as store,
        pytest.raises(StoreError, match=r"\$\.exchanges\[0\]: not an object"),
    ):
        store.load(state.id)
