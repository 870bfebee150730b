"""Expectations for the MCP real payloads added for issue 11 (tasks, output schemas, bare
MCP objects pasted as fragments); sources in ``tests/fixtures/real/README.md``."""

from __future__ import annotations

from tests.protocols.real_expect import Call, Expect, Result

NEW_YORK = "Current weather in New York:\nTemperature: 72°F\nConditions: Partly cloudy"
USERS = [
    {"id": "1", "name": "Alice", "email": "alice@example.com"},
    {"id": "2", "name": "Bob", "email": "bob@example.com"},
]

EXPECTED: dict[str, Expect] = {
    # A task-augmented tools/call: params.task rides with the call, the call is the same.
    "mcp.tools_call.spec-tasks-augmented-get-weather.json": Expect(
        calls=(Call("1", "get_weather", {"city": "New York"}),),
    ),
    # The CreateTaskResult answering it: no result yet (a task_pending warning).
    "mcp.call_result.spec-tasks-create-task-result.json": Expect(),
    # The tasks/result answer alone: without the originating call in the payload, the
    # result keeps its own JSON-RPC id.
    "mcp.call_result.spec-tasks-result-new-york.json": Expect(
        results=(Result("4", None, NEW_YORK),),
    ),
    # A draft-schema response: a string JSON-RPC id is the call id as is; resultType rides.
    "mcp.call_result.schema-draft-string-id-result-type.json": Expect(
        results=(Result("call-tool-example", None, NEW_YORK),),
    ),
    # Task bookkeeping messages: detected, nothing of the cycle in them.
    "mcp.transcript.spec-tasks-status-notification.json": Expect(),
    "mcp.transcript.spec-tasks-cancel-response.json": Expect(),
    # Fragments: a bare Tool (read as a tools/list result) and a bare CallToolResult (read as
    # the response to request id 1).
    "mcp.fragment.spec-tool-get-weather-data-output-schema.json": Expect(
        tools=("get_weather_data",),
        required={"get_weather_data": ["location"]},
    ),
    "mcp.fragment.schema-draft-tool-array-output-schema.json": Expect(
        tools=("list_users",),
        required={"list_users": []},
    ),
    "mcp.fragment.schema-draft-call-tool-result-array-structured.json": Expect(
        results=(
            Result(
                "1", None, "Found 2 users: Alice (alice@example.com) and Bob (bob@example.com)."
            ),
        ),
        structured=USERS,
    ),
}
