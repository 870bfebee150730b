"""AppTest: replay a recorded agent's turn (issue 32 item 4). An agent's SDK (a live player on
the vendor's real client) goes through ``flowdebug record`` to the emulator; the recording is
opened on the Sessions page, a tool's description is edited on the Tools page, and "Re-run the
turn" on the History page sends the second request again as a fork: "before" is the request the
agent sent, read from the recorded wire body, "after" has the edited tool."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from flowdebug import protocols
from flowdebug.players.live.player import live_player
from flowdebug.players.live.settings import LIVE_PROTOCOLS
from flowdebug.record.server import RecordingProxy
from flowdebug.record.sessions import Recorder
from flowdebug.store.sessions import open_store
from tests import cases
from tests.app.markdown import tables_with

APP = Path(__file__).resolve().parents[2] / "app.py"
PROTOCOL = LIVE_PROTOCOLS[0]
EDITED = "Current temperature and conditions for one city; call it once per city"


def _record(emulator) -> str:
    """An agent's two requests (the question, then the tool results) recorded; the session id."""
    with open_store() as store:
        recorder = Recorder(store, "my agent")
        with RecordingProxy(recorder, upstream=emulator.url) as proxy:
            agent = live_player(PROTOCOL, base_url=proxy.base_url(PROTOCOL), api_key="sk-test-1")
            agent.respond(cases.WEATHER_INITIAL)
            agent.respond(cases.WEATHER_CONTINUATION)
            recorder.flush()
        recorder.close()
        [info] = store.list()
        return info.id


def test_a_recorded_turn_re_run_with_an_edited_description_shows_the_sent_and_the_new_request(
    emulator,
):
    recorded = _record(emulator)
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.run()
    app.switch_page("pages/sessions.py").run()
    app.selectbox(key="sess_pick").select(recorded).run()
    app.button(key="sess_open").click().run()
    assert app.session_state.fd_session.state.id == recorded
    app.switch_page("pages/tools.py").run()
    assert app.selectbox(key="tool_pick").value == cases.WEATHER_TOOL.name
    app.text_area(key="tool_description").input(EDITED).run()
    app.button(key="tool_save").click().run()
    app.switch_page("pages/history.py").run()
    assert not app.exception
    # Turn 1 ends at the question, turn 2 at the tool results.
    assert [b.key for b in app.button if str(b.key).startswith("rerun_")] == ["rerun_0", "rerun_2"]
    app.button(key="rerun_2").click().run()
    assert not app.exception

    fork = app.session_state.fd_session
    assert fork.state.id != recorded
    assert open_store().info(fork.state.id).parent == recorded
    # The fork kept the recorded history up to the tool results; the model answered again.
    messages = fork.state.conversation.messages
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    with open_store() as store:
        sent = store.load(recorded).exchanges[1]["request"]
    assert messages[:3] == protocols.get(PROTOCOL).decode_request(sent).value.messages
    assert [p.call_id for p in messages[2].tool_results] == [
        c.id for c in cases.WEATHER_CONTINUATION.messages[1].tool_calls
    ]
    # Both requests: the one the agent sent (as recorded) and the one sent again.
    requests = [json.loads(c.value) for c in app.code if c.value.startswith('{\n  "system"')]
    assert [r["tools"][0]["description"] for r in requests] == [
        cases.WEATHER_TOOL.description,
        EDITED,
    ]
    assert requests[0]["messages"] == requests[1]["messages"]
    assert len(requests[0]["messages"]) == 3
    diff = tables_with(app, "path", "before", "after")[0]  # the requests', then the turns'
    assert diff.to_dict("records")[0] == {
        "path": "$.tools[0].description",
        "before": json.dumps(cases.WEATHER_TOOL.description),
        "after": json.dumps(EDITED),
    }
    assert len(diff) == 1
    # The wire body the agent sent is shown as its vendor spelt it.
    assert [json.loads(c.value) for c in app.code].count(sent) == 1
    assert app.selectbox(key="branch").value == "re-run after message 2"
