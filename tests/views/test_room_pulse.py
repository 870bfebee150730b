"""A room's pulse over HTTP (issue 33 item 4): what a follower's page polls without a script
run. One read of the store per ``max_age`` for all the followers of a process; 404 for a code
that is no room, 410 once the room is closed or expired; JSON only, never the request echoed."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from starlette.applications import Starlette
from starlette.testclient import TestClient

from flowdebug.engine.session.debugger import Session
from flowdebug.protocols import PROTOCOLS, get
from flowdebug.store.errors import StoreError
from flowdebug.store.rooms import MAX_AGE as ROOM_AGE
from flowdebug.store.rooms import Rooms
from flowdebug.store.sessions import open_store
from flowdebug.views import predictions, room_pulse
from flowdebug.views.aligned import WINDOW
from flowdebug.views.debugger import explain, phase_now, phase_title, refusals, status_line
from flowdebug.views.room_pulse import PulseCache
from flowdebug.views.teaching import picture
from flowdebug.views.teaching_payload import drawn


def _room(tmp_path, steps: int = 1):
    store = open_store(str(tmp_path / "s.db"))
    s = Session.from_scenario("weather")
    for _ in range(steps):
        s.step()
    store.save(s.state)
    rooms = Rooms(store)
    return store, s, rooms, rooms.open(s.state.id).code


def _client(rooms: Rooms, max_age: float = room_pulse.MAX_AGE) -> tuple[TestClient, PulseCache]:
    cache = PulseCache(lambda: rooms, max_age=max_age)
    return TestClient(Starlette(routes=[room_pulse.route(cache)])), cache


def test_the_route_answers_the_rooms_pulse_as_json_and_a_step_moves_it(tmp_path):
    store, s, rooms, code = _room(tmp_path)
    client, _ = _client(rooms, max_age=0.0)
    with store, client:
        first = client.get(room_pulse.url(code))
        assert first.status_code == 200
        assert first.headers["content-type"] == "application/json"
        assert first.headers["cache-control"] == "no-store"
        assert first.json() == {"pulse": list(rooms.pulse(code).key), "step": 1}
        s.step()
        store.save(s.state)
        after = client.get(room_pulse.url(code.lower())).json()  # a code as typed, any case
        assert after["step"] == 2 and after["pulse"][0] > first.json()["pulse"][0]


def test_a_code_typed_otherwise_is_the_same_room_and_a_malformed_one_never_reaches_the_store(
    tmp_path,
):
    store, _, rooms, code = _room(tmp_path)
    client, cache = _client(rooms, max_age=60.0)
    with store, client:
        spelled = [code, code.lower(), f"{code[:5]}-{code[5:]}"]
        assert {client.get(room_pulse.url(c)).json()["step"] for c in spelled} == {1}
        assert cache.reads == 1  # one room, one read, however it was typed
        bad = client.get(room_pulse.url("not-a-code!"))
        assert bad.status_code == 404 and bad.json() == {"error": "not a room code"}
        assert cache.reads == 1


def test_sixty_pollers_at_once_cost_one_read_and_a_later_poll_reads_again(tmp_path):
    store, s, rooms, code = _room(tmp_path)
    cache = PulseCache(lambda: rooms, max_age=0.2)

    async def polls(n: int) -> list[room_pulse.Answer]:
        return await asyncio.gather(*(cache.get(code) for _ in range(n)))

    async def followers() -> None:  # one event loop, as one app server has
        answers = await polls(60)
        assert cache.reads == 1
        assert {a.body["step"] for a in answers} == {1}
        s.step()
        store.save(s.state)
        assert (await polls(1))[0].body["step"] == 1  # reused within max_age
        await asyncio.sleep(0.25)
        assert {a.body["step"] for a in await polls(60)} == {2}
        assert cache.reads == 2

    with store:
        asyncio.run(followers())


def test_an_unknown_or_malformed_code_is_404_and_the_answer_never_echoes_it(tmp_path):
    store, _, rooms, _ = _room(tmp_path)
    client, _ = _client(rooms)
    with store, client:
        unknown = client.get(room_pulse.url("ABCDEFGHJK"))
        assert unknown.status_code == 404 and "error" in unknown.json()
        for typed in ("<script>alert(1)<\\script>", "<img src=x onerror=alert(1)>", "x" * 500):
            bad = client.get("/_flowdebug/rooms/" + typed)
            assert bad.status_code == 404
            assert bad.headers["content-type"] == "application/json"
            assert bad.json() == {"error": "not a room code"}
            assert "<" not in bad.text


def test_a_closed_or_expired_room_is_410_gone(tmp_path):
    store, s, rooms, code = _room(tmp_path)
    client, _ = _client(rooms, max_age=0.0)
    with store, client:
        rooms.close(code)
        closed = client.get(room_pulse.url(code))
        assert closed.status_code == 410
        assert closed.json() == {"closed": True, "error": "the instructor closed this room"}
        later = rooms.open(s.state.id, now=time.time() - ROOM_AGE - 1).code
        expired = client.get(room_pulse.url(later))
        assert expired.status_code == 410 and expired.json()["error"] == "this room has expired"


def test_under_a_base_path_the_route_and_the_url_a_page_polls_agree(tmp_path):
    store, _, rooms, code = _room(tmp_path)
    cache = PulseCache(lambda: rooms)
    client = TestClient(Starlette(routes=[room_pulse.route(cache, base="/workshop/")]))
    with store, client:
        assert room_pulse.url(code, "workshop") == f"/workshop/_flowdebug/rooms/{code}"
        assert client.get(room_pulse.url(code, "/workshop/")).json()["step"] == 1
        assert client.get(room_pulse.url(code)).status_code == 404


def test_a_store_out_of_reach_is_503_without_its_address_and_polling_recovers(tmp_path):
    store, _, rooms, code = _room(tmp_path)
    client, _ = _client(rooms, max_age=0.0)
    read = store._db.transaction

    def unreachable(write: bool = False):
        raise StoreError(f"cannot reach the session database {tmp_path}: connection refused")

    with store, client:
        store._db.transaction = unreachable
        down = client.get(room_pulse.url(code))
        assert down.status_code == 503 and down.headers["content-type"] == "application/json"
        assert str(tmp_path) not in down.text
        store._db.transaction = read
        assert client.get(room_pulse.url(code)).json()["step"] == 1


def test_the_route_only_answers_get(tmp_path):
    store, _, rooms, code = _room(tmp_path)
    client, _ = _client(rooms)
    with store, client:
        assert client.post(room_pulse.url(code)).status_code == 405


# -- the follow payload: what a follower's page redraws without a script run ---------------------


def _follow(client: TestClient, code: str, vendors: str = "") -> Any:
    return client.get(room_pulse.url(code), params={"follow": "1", "vendors": vendors})


def test_the_follow_payload_holds_the_pictures_table_as_drawn_and_the_pages_lines(tmp_path):
    store, s, rooms, code = _room(tmp_path, steps=2)
    client, _ = _client(rooms, max_age=0.0)
    with store, client:
        got = _follow(client, code, "gemini,anthropic")
        assert got.status_code == 200 and got.headers["content-type"] == "application/json"
        body = got.json()
        names = ["anthropic", "gemini"]  # the usual order, whatever the request's
        state = s.state
        refused = refusals(state.conversation, state.events, names)
        table = picture(state, names, refused, window=WINDOW, selected=None, upto_seq=None)
        assert body["picture"] == json.loads(json.dumps(table.data()))
        assert [p for p, _ in body["picture"]["vendors"]] == names
        assert body["pulse"] == list(rooms.pulse(code).key) and body["step"] == 2
        assert body["heading"] == room_pulse.heading(code, state)
        assert body["heading"].startswith(f"Room {code} · {phase_title(state)} · step 2 · next: ")
        icon, text = status_line(state, refused, names)
        assert body["status"] == f"{icon} {text}"
        assert body["phase"] == phase_title(state)
        meaning, fields = explain(phase_now(state), names, final=False)
        assert body["explained"] == {
            "meaning": meaning.replace("`", ""),
            "fields": [[get(n).title, fields[n].replace("`", "")] for n in names],
        }
        assert "`" not in json.dumps(body["explained"]) and fields["gemini"].count("`")
        assert body["question"] == ""
        rooms.ask(code, predictions.make("next_tool", state, names, None))
        assert _follow(client, code).json()["question"] == "0:open"
        every = _follow(client, code).json()["picture"]["vendors"]
        assert [p for p, _ in every] == list(PROTOCOLS)


def test_a_play_beat_reveals_the_same_events_in_the_payload_as_on_the_page(tmp_path):
    store, s, rooms, code = _room(tmp_path, steps=3)
    client, _ = _client(rooms, max_age=0.0)
    with store, client:
        first = s.state.events[0].seq
        rooms.beat(code, first)
        body = _follow(client, code, "openai-chat").json()
        expected = drawn(s.state, ("openai-chat",), WINDOW, None, first)
        assert body["picture"] == json.loads(expected.data)
        assert len(body["picture"]["rows"]) < len(_all_rows(s.state))


def _all_rows(state) -> list[Any]:
    return json.loads(drawn(state, ("openai-chat",), WINDOW).data)["rows"]


def test_sixty_followers_cost_one_build_per_pulse_and_a_step_builds_again(tmp_path):
    store, s, rooms, code = _room(tmp_path)
    cache = PulseCache(lambda: rooms, max_age=0.0)
    names = tuple(PROTOCOLS)

    async def polls(n: int) -> list[Any]:
        return await asyncio.gather(*(cache.follow(code, names) for _ in range(n)))

    async def followers() -> None:
        first = await polls(60)
        assert cache.builds == 1 and len({id(b) for b in first}) == 1  # the same bytes
        assert json.loads(first[0])["step"] == 1
        assert cache.builds == 1 and await polls(60) == first
        s.step()
        store.save(s.state)
        after = await polls(60)
        assert cache.builds == 2 and {json.loads(b)["step"] for b in after} == {2}

    with store:
        asyncio.run(followers())


def test_a_follow_request_for_an_unknown_vendor_is_400_and_a_closed_room_410(tmp_path):
    store, _, rooms, code = _room(tmp_path)
    client, _ = _client(rooms, max_age=0.0)
    with store, client:
        bad = _follow(client, code, "anthropic,<b>x</b>")
        assert bad.status_code == 400 and bad.json() == {"error": "not a vendor"}
        rooms.close(code)
        gone = _follow(client, code)
        assert gone.status_code == 410 and gone.json()["closed"] is True
