"""Expectations for the Anthropic real payloads with server tools, the MCP connector,
code execution, citations and documents in tool results (sources in the fixtures' README)."""

from __future__ import annotations

from tests.protocols.real_expect import Expect

EXPECTED: dict[str, Expect] = {
    "anthropic.response.pydantic-ai-cassette-web-search-citations.json": Expect(
        hosted=("web_search",),
        stop_reason="end_turn",
    ),
    "anthropic.stream.pydantic-ai-cassette-web-search.json": Expect(
        hosted=("web_search", "web_search"),
        stop_reason="end_turn",
    ),
    "anthropic.response.pydantic-ai-cassette-mcp-servers.json": Expect(
        hosted=("ask_question",),
        stop_reason="end_turn",
    ),
    "anthropic.stream.pydantic-ai-cassette-mcp-servers.json": Expect(
        hosted=("ask_question",),
        stop_reason="end_turn",
    ),
    "anthropic.response.pydantic-ai-cassette-bash-code-execution.json": Expect(
        hosted=("bash_code_execution",),
        stop_reason="end_turn",
        text="The result of **3 × 12,390 = 37,170**.",
        thinking=("The user wants to calculate 3 * 12390.", "EuMBClsIDRgCKkCBepwkio14"),
    ),
    "anthropic.request.pydantic-ai-cassette-web-fetch-replay.json": Expect(
        tool_choice="auto",
        hosted=("web_fetch",),
        thinking=("The user is asking me to fetch the content", "EsIDCkYICRgCKkAKi"),
    ),
}
