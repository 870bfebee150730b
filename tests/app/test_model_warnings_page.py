"""AppTest: an imported gpt-4o request on the Protocols page (issue 30 item 5): each vendor's
request warning says which model replaced gpt-4o, listed under the request, and none says the
source names no model."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from flowdebug.engine.session.debugger import Session
from flowdebug.exchange.imports import import_session
from flowdebug.players.reading import ReadingPlayer
from tests.players.test_model_names import GPT4O_REQUEST

PAGE = Path(__file__).resolve().parents[2] / "pages" / "protocols.py"


def test_an_imported_gpt4o_request_shows_each_vendors_model_replacement_under_the_request():
    app = AppTest.from_file(str(PAGE), default_timeout=60)
    app.run()
    app.session_state.fd_session = Session(import_session(GPT4O_REQUEST).state, ReadingPlayer())
    app.run()
    assert not app.exception
    shown = [m.value for m in app.markdown]
    replaced = [
        (shown[i - 1], m.split("\n")[1])
        for i, m in enumerate(shown)
        if m.startswith("⚠ `model_replaced`")
    ]
    assert [text.split("\\:")[0] for _, text in replaced] == [
        "gpt\\-4o names a model of OpenAI Chat\\, not of Anthropic",
        "gpt\\-4o names a model of OpenAI Chat\\, not of Gemini",
        "gpt\\-4o names a model of OpenAI Chat\\, not of Bedrock",
    ]
    assert all(before == "*The request*" for before, _ in replaced)
    assert not any("names no model" in m for m in shown)
