"""Expectations for the OpenAI Responses real payloads with hosted (vendor-run) tools,
echoed request fields and a ``previous_response_id`` continuation (sources in
``tests/fixtures/real/README.md``)."""

from __future__ import annotations

from tests.protocols.real_expect import Expect, Result

SYSTEM = "You are a helpful assistant."

EXPECTED: dict[str, Expect] = {
    "openai-responses.response.pydantic-ai-cassette-web-search.json": Expect(
        hosted=("web_search",),
        stop_reason="end_turn",
    ),
    "openai-responses.stream.pydantic-ai-cassette-web-search.json": Expect(
        hosted=("web_search",),
        stop_reason="end_turn",
    ),
    "openai-responses.request.pydantic-ai-cassette-web-search-replay.json": Expect(
        system=SYSTEM,
        tool_choice="auto",
        hosted=("web_search",),
    ),
    "openai-responses.response.pydantic-ai-cassette-mcp-list-tools-and-call.json": Expect(
        hosted=("mcp_list_tools", "ask_question"),
        stop_reason="end_turn",
    ),
    "openai-responses.request.pydantic-ai-cassette-mcp-replay.json": Expect(
        system=SYSTEM,
        tool_choice="auto",
        hosted=("mcp_list_tools", "ask_question"),
    ),
    "openai-responses.response.pydantic-ai-cassette-file-search.json": Expect(
        hosted=("file_search",),
        text="The capital of France is Paris.",
        stop_reason="end_turn",
    ),
    "openai-responses.response.pydantic-ai-cassette-code-interpreter.json": Expect(
        hosted=("code_interpreter",),
        stop_reason="end_turn",
    ),
    "openai-responses.request.pydantic-ai-cassette-previous-response-id-output.json": Expect(
        tools=("get_weather",),
        required={"get_weather": ["city"]},
        tool_choice="auto",
        results=(Result("call_N2BikjqNxghwNIwHl2XKfb0F", None, "Sunny, 72F"),),
    ),
}
