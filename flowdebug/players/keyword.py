"""The keyword player: calls a tool only when the tool's description matches a word.

A deterministic stand-in for a model that reads tool descriptions, so description A/B tests
(:func:`flowdebug.views.compare.ab_test`) have something to measure offline: behind the emulator,
a variant whose description does not match the word gets a text answer instead of a call.
"Matches" is the offline model's own score (:mod:`flowdebug.players.similarity`) of the word
against the descriptions alone reaching its threshold, so ``flights`` matches "Find a flight"
and the A/B and the offline model (:mod:`flowdebug.players.reading`) decide alike.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from flowdebug.model import Conversation, Message, ModelResponse, Text, ToolCall
from flowdebug.players.base import PlayerTurn
from flowdebug.players.similarity import score_tools


class KeywordRule(BaseModel):
    """Call ``tool`` with ``arguments`` when its description matches ``word``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    word: str
    arguments: dict[str, JsonValue] = Field(default_factory=dict)


class KeywordPlayer:
    """Applies every matching rule in order; after tool results, or when
    no rule matches, it answers with text."""

    name = "keyword"
    local = True  # answers from memory: no network, nothing to wait for

    def __init__(
        self,
        rules: list[KeywordRule],
        no_match: str = "I have no tool for that.",
        after_results: str = "Done.",
    ):
        self.rules = rules
        self.no_match = no_match
        self.after_results = after_results

    def respond(self, conv: Conversation) -> PlayerTurn:
        if conv.messages and conv.messages[-1].role == "tool":
            return self._text(self.after_results)
        done = sum(len(m.tool_calls) for m in conv.messages)
        calls = []
        for rule in self.rules:
            scores = score_tools(rule.word, conv.tools, whole_tool=False)
            if any(s.tool == rule.tool and s.enough for s in scores):
                call_id = f"call_{done + len(calls) + 1}"
                calls.append(ToolCall(id=call_id, name=rule.tool, arguments=rule.arguments))
        if not calls:
            return self._text(self.no_match)
        message = Message(role="assistant", parts=calls)
        return PlayerTurn(ModelResponse(message=message, stop_reason="tool_use", model=self.name))

    def _text(self, text: str) -> PlayerTurn:
        message = Message(role="assistant", parts=[Text(text=text)])
        return PlayerTurn(ModelResponse(message=message, stop_reason="end_turn", model=self.name))
