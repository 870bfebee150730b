"""Where a model id could appear in the teaching picture (issue 30 item 5): nowhere. Its cells
and the lit event's wire fragments are the parts of each payload that carry the event (the
declared tools, a call, a result, the answer), never the body's ``model`` nor a URL, so a
conversation naming another vendor's model shows no vendor a model id that is not its own,
and the session's model per vendor has nothing to replace there. Should a cell ever show a
model, this test fails and the picture must encode within ``protocols.models.choosing``."""

from __future__ import annotations

import json

from flowdebug import protocols
from flowdebug.engine.session.debugger import Session
from flowdebug.views import teaching

CHOSEN = {"anthropic": "claude-opus-4-1", "bedrock": "us.amazon.nova-pro-v1:0"}


def _model_ids() -> set[str]:
    """Every model id any vendor claims or defaults to, and the session's own choices."""
    return {
        "gpt-4o",
        *CHOSEN.values(),
        *(m for n in protocols.PROTOCOLS if (m := protocols.facts(n).default_model)),
    }


def test_no_model_id_reaches_the_teaching_picture_in_any_vendor_with_any_event_lit():
    session = Session.from_scenario("weather")
    session.run()
    state = session.state
    state.conversation = state.conversation.model_copy(update={"model": "gpt-4o"})
    state.models = dict(CHOSEN)
    teaching._PAYLOADS.clear()
    teaching._CELLS.clear()
    names = list(protocols.PROTOCOLS)
    ids = _model_ids()
    lit = [None, *(e.seq for e in state.events)]
    shown = [
        json.dumps(teaching.picture(state, names, {}, window=None, selected=seq).data())
        for seq in lit
    ]
    assert len(shown) == len(state.events) + 1 > 10
    assert sum('"wire": []' not in text for text in shown) > 10  # fragments shown in full
    found = {m for text in shown for m in ids if m in text}
    assert found == set()
    # the cells did read the vendors' payloads: the call ids and the tool's name are there
    assert all("get_weather" in text for text in shown)
