"""Expectations for the OpenAI Chat payloads of issue 11: OpenAI-compatible reasoning
(DeepSeek ``reasoning_content``, Ollama ``reasoning``), Gemini's OpenAI endpoint, refusals and
legacy ``functions`` / ``function_call``."""

from __future__ import annotations

from tests.protocols.real_expect import Call, Expect, Result

DICE = "call_00_sXqYgMESDht75NCLLZtt9804"
SEARCH = "auto_load_eb5fc31bb581b4e7"
NAME = "call_00_6edlnw3Z1MgeMfey687g8451"
ROLL = "call_01_km02sac7sHxNDPATKLZy7705"
DISCOVERED = {
    "discovered_tools": [
        {"name": "get_player_name", "description": "Get the player's name."},
        {"name": "roll_dice", "description": "Roll a six-sided die and return the result."},
    ]
}

EXPECTED: dict[str, Expect] = {
    "openai-chat.response.pydantic-ai-cassette-deepseek-reasoning-tool-call.json": Expect(
        calls=(Call(DICE, "load_capability", {"id": "DICE_ROLL"}),),
        stop_reason="tool_use",
        text="Let me load the dice rolling capability!",
        thinking=("The user wants to play a dice game.", ""),
    ),
    "openai-chat.request.pydantic-ai-cassette-deepseek-reasoning-echo.json": Expect(
        tools=("load_capability", "get_player_name", "roll_dice", "search_tools"),
        required={"load_capability": ["id"], "search_tools": ["queries"]},
        system="You're a dice game, you should roll the die and see if the number you get back "
        "matches the user's guess. If so, tell them they're a winner. Use the player's name in "
        "the response.",
        tool_choice="auto",
        calls=(
            Call(DICE, "load_capability", {"id": "DICE_ROLL"}),
            Call(SEARCH, "search_tools", {"queries": ["DICE_ROLL"]}),
            Call(NAME, "get_player_name", {}),
            Call(ROLL, "roll_dice", {}),
        ),
        results=(
            Result(DICE, "load_capability", {}),
            Result(SEARCH, "search_tools", DISCOVERED),
            Result(NAME, "get_player_name", "Anne"),
            Result(ROLL, "roll_dice", "4"),
        ),
    ),
    "openai-chat.stream.pydantic-ai-cassette-deepseek-reasoning.json": Expect(
        stop_reason="end_turn",
        text="Hello there! 😊 How can I help you today?",
        thinking=('Hmm, the user just said "Hello".', ""),
    ),
    "openai-chat.response.pydantic-ai-cassette-ollama-reasoning-tool-call.json": Expect(
        calls=(Call("call_o2vnpxrw", "final_result", {"city": "Paris", "country": "France"}),),
        stop_reason="tool_use",
        text="",
        thinking=('The conversation: user asked "What is the capital of France?"', ""),
    ),
    # Gemini's OpenAI endpoint (2025-06): an empty call id, extra_content on the message.
    "openai-chat.response.pydantic-ai-cassette-gemini-compat-thought-signature.json": Expect(
        calls=(Call("", "get_current_time", {}),),
        stop_reason="tool_use",
        text="",
    ),
    "openai-chat.response.sdk-refusal-anthrax.json": Expect(
        stop_reason="refusal",
        text="I'm very sorry, but I can't assist with that.",
    ),
    "openai-chat.stream.sdk-refusal-anthrax.json": Expect(
        stop_reason="refusal",
        text="I'm sorry, I can't assist with that request.",
    ),
    "openai-chat.request.openllmetry-cassette-legacy-functions.json": Expect(
        tools=("get_current_weather",),
        required={"get_current_weather": ["location"]},
        tool_choice="auto",
    ),
    "openai-chat.response.openllmetry-cassette-legacy-function-call.json": Expect(
        calls=(Call(None, "get_current_weather", {"location": "Boston"}),),
        stop_reason="tool_use",
    ),
}
