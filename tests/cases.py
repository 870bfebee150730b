"""Canonical conversations used by every test: the weather scenario and harder variants."""

from __future__ import annotations

import json

from flowdebug.model import (
    Conversation,
    Image,
    Message,
    ModelResponse,
    Text,
    Thinking,
    Tool,
    ToolCall,
    ToolChoice,
    ToolResult,
)

WEATHER_TOOL = Tool(
    name="get_weather",
    description="Get the current weather for a location.",
    parameters={
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "City name, e.g. Paris"},
            "unit": {"type": "string", "enum": ["c", "f"], "description": "Temperature unit"},
        },
        "required": ["location"],
    },
)

PARIS = ToolCall(
    id="toolu_01A7Pq3rT9xWcE5bLmN2kVdY",
    name="get_weather",
    arguments={"location": "Paris", "unit": "c"},
)
TOKYO = ToolCall(
    id="toolu_01B8Qr4sU0yXdF6cMnO3lWeZ",
    name="get_weather",
    arguments={"location": "Tokyo", "unit": "c"},
)
PARIS_RESULT = ToolResult(
    call_id=PARIS.id,
    name="get_weather",
    content=json.dumps(
        {"location": "Paris", "temperature": 18, "unit": "c", "conditions": "partly cloudy"}
    ),
)
TOKYO_RESULT = ToolResult(
    call_id=TOKYO.id,
    name="get_weather",
    content="timeout after 10s",
    is_error=True,
    error_type="timeout",
)
FINAL_TEXT = (
    "Paris is 18 degrees C and partly cloudy. I couldn't get the weather for Tokyo: "
    "the request timed out."
)

WEATHER_USER = Message(role="user", parts=[Text(text="Weather in Paris and Tokyo?")])
WEATHER_CALLS = Message(role="assistant", parts=[PARIS, TOKYO])
WEATHER_RESULTS = Message(role="tool", parts=[PARIS_RESULT, TOKYO_RESULT])
WEATHER_FINAL = Message(role="assistant", parts=[Text(text=FINAL_TEXT)])

WEATHER_INITIAL = Conversation(
    system="You are a weather assistant.",
    tools=[WEATHER_TOOL],
    tool_choice=ToolChoice(mode="auto"),
    messages=[WEATHER_USER],
)
WEATHER_CONTINUATION = WEATHER_INITIAL.model_copy(
    update={"messages": [WEATHER_USER, WEATHER_CALLS, WEATHER_RESULTS]}
)
WEATHER_COMPLETE = WEATHER_INITIAL.model_copy(
    update={"messages": [WEATHER_USER, WEATHER_CALLS, WEATHER_RESULTS, WEATHER_FINAL]}
)
WEATHER_TOOL_USE = ModelResponse(message=WEATHER_CALLS, stop_reason="tool_use")
WEATHER_FINAL_RESPONSE = ModelResponse(message=WEATHER_FINAL, stop_reason="end_turn")

# Text before calls, a thinking block with a signature, then one call.
THINKING_CALL = ModelResponse(
    message=Message(
        role="assistant",
        parts=[
            Thinking(text="The user wants Paris weather; call the tool.", signature="c2lnbmF0dXJl"),
            Text(text="Let me check."),
            ToolCall(id="toolu_think_1", name="get_weather", arguments={"location": "Paris"}),
        ],
    ),
    stop_reason="tool_use",
)

# A multi-round task conversation with a named tool choice and parallel calls disabled.
TASK_TOOLS = [
    Tool(
        name="create_task",
        description="Create a task and return its id.",
        parameters={
            "type": "object",
            "properties": {"title": {"type": "string"}},
            "required": ["title"],
        },
    ),
    Tool(
        name="complete_task",
        description="Mark a task done.",
        parameters={
            "type": "object",
            "properties": {"task_id": {"type": "string"}},
            "required": ["task_id"],
        },
        annotations={"destructiveHint": True},
    ),
]
TASKS = Conversation(
    system="You manage tasks.",
    tools=TASK_TOOLS,
    tool_choice=ToolChoice(mode="tool", name="create_task", parallel=False),
    messages=[
        Message(role="user", parts=[Text(text="Add 'buy milk' then mark it done.")]),
        Message(
            role="assistant",
            parts=[ToolCall(id="call_1", name="create_task", arguments={"title": "buy milk"})],
        ),
        Message(
            role="tool",
            parts=[ToolResult(call_id="call_1", name="create_task", content='{"id": "T-1"}')],
        ),
        Message(
            role="assistant",
            parts=[ToolCall(id="call_2", name="complete_task", arguments={"task_id": "T-1"})],
        ),
        Message(
            role="tool", parts=[ToolResult(call_id="call_2", name="complete_task", content="done")]
        ),
        Message(role="assistant", parts=[Text(text="Added and completed 'buy milk'.")]),
    ],
)

# An image inside a tool result, and a tool whose name has a dot (legal only in MCP/Gemini).
PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9"
    "awAAAABJRU5ErkJggg=="
)
IMAGE_RESULT = Conversation(
    tools=[
        Tool(
            name="camera.snapshot",
            description="Take a picture.",
            parameters={"type": "object", "properties": {}},
        )
    ],
    messages=[
        Message(role="user", parts=[Text(text="What does the camera see?")]),
        Message(
            role="assistant", parts=[ToolCall(id="call_cam", name="camera.snapshot", arguments={})]
        ),
        Message(
            role="tool",
            parts=[
                ToolResult(
                    call_id="call_cam",
                    name="camera.snapshot",
                    content=[
                        Text(text="snapshot taken"),
                        Image(media_type="image/png", data=PIXEL),
                    ],
                )
            ],
        ),
    ],
)

# Arguments the model sent that are not valid JSON (OpenAI can send these).
MALFORMED_ARGS = ModelResponse(
    message=Message(
        role="assistant",
        parts=[
            ToolCall(
                id="call_bad",
                name="get_weather",
                arguments={},
                raw_arguments='{"location": "Paris"',
            )
        ],
    ),
    stop_reason="tool_use",
)

CONVERSATIONS = {
    "weather_initial": WEATHER_INITIAL,
    "weather_continuation": WEATHER_CONTINUATION,
    "weather_complete": WEATHER_COMPLETE,
    "tasks": TASKS,
    "image_result": IMAGE_RESULT,
}
RESPONSES = {
    "weather_tool_use": WEATHER_TOOL_USE,
    "weather_final": WEATHER_FINAL_RESPONSE,
    "thinking_call": THINKING_CALL,
    "malformed_args": MALFORMED_ARGS,
}


def issued_by(obj, protocol: str):
    """``obj`` with every signed (or redacted) thinking part marked as issued by ``protocol``,
    as that protocol's decoder marks them."""
    from pydantic import BaseModel

    if isinstance(obj, Thinking):
        signed = obj.signature is not None or obj.redacted
        return obj.model_copy(update={"source": protocol}) if signed else obj
    if isinstance(obj, list):
        return [issued_by(x, protocol) for x in obj]
    if isinstance(obj, BaseModel):
        updates = {}
        for name in ("parts", "messages", "message"):
            if hasattr(obj, name):
                updates[name] = issued_by(getattr(obj, name), protocol)
        return obj.model_copy(update=updates) if updates else obj
    return obj
