"""The Failures page's fault preview names the session's model per vendor (issue 30 item 5):
each vendor's request in the preview carries the model the session chose for it, and a vendor
the session chose nothing for keeps its default."""

from __future__ import annotations

from flowdebug import protocols
from flowdebug.engine.execution.faults import parse_fault
from flowdebug.engine.session.debugger import Session
from flowdebug.views.failures import preview

CHOSEN = {"anthropic": "claude-opus-4-1", "openai-responses": "gpt-4.1-mini"}
VENDORS = ["anthropic", "openai-chat", "openai-responses"]  # those naming the model in the body


def test_the_preview_of_a_session_names_the_model_it_chose_for_each_vendor():
    session = Session.from_scenario("weather")
    session.state.models = dict(CHOSEN)
    p = preview(session.state, [parse_fault("timeout@#1")], VENDORS)
    models = {n: e.payload["model"] for n, e in p.effects.items()}
    assert models == {
        "anthropic": "claude-opus-4-1",
        "openai-chat": protocols.facts("openai-chat").default_model,
        "openai-responses": "gpt-4.1-mini",
    }
    assert '"model": "claude-opus-4-1"' in p.effects["anthropic"].text


def test_models_given_to_the_preview_rule_over_the_vendors_defaults():
    p = preview("weather", [parse_fault("timeout@#1")], ["anthropic"], models=CHOSEN)
    assert p.effects["anthropic"].payload["model"] == "claude-opus-4-1"
    plain = preview("weather", [parse_fault("timeout@#1")], ["anthropic"])
    assert plain.effects["anthropic"].payload["model"] == protocols.facts("anthropic").default_model


def test_a_choice_changes_no_diff_against_the_replay_without_faults():
    """Both sides of the effect's diff name the same model: only the fault shows."""
    p = preview("weather", [parse_fault("timeout@#1")], ["anthropic"], models=CHOSEN)
    assert "claude" not in p.effects["anthropic"].diff
