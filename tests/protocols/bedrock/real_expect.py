"""Expectations for the real Bedrock Converse payloads (pydantic-ai cassettes recorded against
the live Bedrock Runtime service): Claude's signed and redacted reasoning, Amazon Nova's
``<thinking>`` text, toolUse / toolResult with ``status: success``, and ConverseStream events."""

from __future__ import annotations

from tests.protocols.real_expect import Call, Expect, Result

COUNTRY = "tooluse_W9DaUFg4Tj2cRPpndqxWSg"
LONDON = "tooluse_xTYmv3jIR0yGxOYLOxSLJg"
LONDON_ARGS = {"city": "London", "date": "2022-01-01"}
CLAUDE_THINKING = ("The user is asking for the largest city in their country.", "ErcBCkgIBhABGAIi")
NOVA_TEXT = (
    "<thinking> To find the temperature in London on 1st January 2022, I need to use the "
    '"temperature" tool with the appropriate arguments. The required arguments are "date" and '
    '"city". The date is provided as "1st January 2022" and the city is "London". I will use '
    'these arguments to call the "temperature" tool.</thinking>\n'
)

EXPECTED: dict[str, Expect] = {
    "bedrock.response.pydantic_ai_claude_thinking_tool_use.json": Expect(
        calls=(Call(COUNTRY, "get_user_country", {}),),
        stop_reason="tool_use",
        text="I'll need to check what country you're from to answer that question.",
        thinking=CLAUDE_THINKING,
    ),
    # The reasoning goes back signed; the recording sends no toolChoice.
    "bedrock.request.pydantic_ai_claude_thinking_continuation.json": Expect(
        tools=("get_user_country",),
        required={"get_user_country": []},
        calls=(Call(COUNTRY, "get_user_country", {}),),
        results=(Result(COUNTRY, "get_user_country", "Mexico"),),
        thinking=CLAUDE_THINKING,
    ),
    "bedrock.response.pydantic_ai_nova_tool_use.json": Expect(
        calls=(Call(LONDON, "temperature", LONDON_ARGS),),
        stop_reason="tool_use",
        text=NOVA_TEXT,
    ),
    "bedrock.request.pydantic_ai_nova_continuation.json": Expect(
        tools=("temperature", "final_result"),
        required={"temperature": ["city", "date"], "final_result": ["temperature", "date", "city"]},
        system="You are a helpful chatbot.",
        calls=(Call(LONDON, "temperature", LONDON_ARGS),),
        results=(Result(LONDON, "temperature", "30°C"),),
    ),
    "bedrock.stream.pydantic_ai_nova_tool_use.json": Expect(
        calls=(Call("tooluse_lAG_zP8QRHmSYOwZzzaCqA", "get_temperature", {"city": "Paris"}),),
        stop_reason="tool_use",
        text="<thinking> To find the temperature of the capital of France, I need to first "
        "determine the capital of France and then get the current temperature in that city. The "
        'capital of France is Paris. I will use the "get_temperature" tool to find the current '
        "temperature in Paris.</thinking>\n",
    ),
    "bedrock.stream.pydantic_ai_claude_thinking.json": Expect(
        stop_reason="end_turn",
        text="Hello! It's nice to meet you. How can I help you today?",
        thinking=('The user has greeted me with a simple "Hello".', "Eu0CCkgIBxABGAIqQJDc"),
    ),
    # Redacted reasoning: the encrypted redactedContent is kept as the thinking's text.
    "bedrock.response.pydantic_ai_claude_redacted_thinking.json": Expect(
        stop_reason="end_turn",
        text="I notice you've sent what appears to be some kind of trigger or command string. I "
        "can't respond to attempts to access internal systems or manipulate how I process "
        "information. \n\nInstead, I'd be happy to have a normal conversation with you. Is there "
        "something specific I can help you with today? I'm here to provide information, have "
        "discussions, or assist with tasks within my guidelines.",
        thinking=("RXU4RUNrZ0lCeEFCR0FJcVFJaGtJYVN0OHBF", ""),
    ),
}
