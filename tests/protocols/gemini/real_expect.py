"""Expectations for the Gemini real payloads of issue 11: proto-JSON snake_case spellings,
Gemini 3 thought signatures on function calls, code execution parts (hosted) and Vertex
streamed function-call arguments (``partialArgs`` / ``willContinue``). Values read off the
payloads (sources in ``tests/fixtures/real/README.md``)."""

from __future__ import annotations

from tests.protocols.real_expect import Call, Expect, Result

MIXED_CALL_ID = "pyd_ai_d26c2a4bf5674f199a75f67dfa532610"
MIXED_ERROR = (
    "1 validation error:\n```json\n[\n  {\n"
    '    "type": "extra_forbidden",\n    "loc": [\n      "type"\n    ],\n'
    '    "msg": "Extra inputs are not permitted",\n    "input": "all"\n  }\n]\n```\n\n'
    "Fix the errors and try again."
)
UTRECHT = "Today in Utrecht is Tuesday, September 16, 2025."
INGREDIENTS = [
    ("16 oz", "Lasagna noodles"),
    ("1 lb", "Ground beef"),
    ("15 oz", "Ricotta cheese"),
    ("3 cups", "Mozzarella cheese"),
    ("1/2 cup", "Parmesan cheese"),
    ("24 oz", "Tomato sauce"),
    ("1", "Egg"),
    ("2 cloves", "Garlic"),
    ("1 tsp", "Salt"),
    ("1/2 tsp", "Pepper"),
]
STEPS = [
    "Preheat oven to 375°F (190°C).",
    "Cook lasagna noodles according to package directions, drain and set aside.",
    "Brown ground beef with minced garlic in a skillet. Drain fat and stir in tomato sauce. "
    "Simmer for 10 minutes.",
    "In a bowl, mix ricotta cheese, egg, salt, pepper, and Parmesan cheese.",
    "In a 9x13 baking dish, spread a thin layer of meat sauce.",
    "Layer noodles, ricotta mixture, mozzarella, and meat sauce. Repeat.",
    "Top with remaining mozzarella cheese.",
    "Cover with foil and bake for 25 minutes.",
    "Remove foil and bake for another 25 minutes until golden.",
    "Let stand for 15 minutes before serving.",
]
RECIPE = {
    "recipe": {
        "ingredients": [{"amount": a, "name": n} for a, n in INGREDIENTS],
        "name": "Lasagna",
        "steps": STEPS,
    }
}
OPERATIONS = {
    "operations": [
        {
            "action": "add",
            "description": "Fresh red apple",
            "itemid": "apple_001",
            "price": 0.5,
        },
        {
            "action": "add",
            "description": "Ripe yellow banana",
            "itemid": "banana_001",
            "price": 0.3,
        },
    ]
}

EXPECTED: dict[str, Expect] = {
    # Vertex, sent by the google-genai SDK: function_call / thought_signature /
    # function_response in snake_case, a Gemini 3 signature (URL-safe base64).
    "gemini.request.pydantic-ai-cassette-vertex-snake-case-call-signature.json": Expect(
        tools=("get_mixed_content",),
        calls=(Call(MIXED_CALL_ID, "get_mixed_content", {"type": "all"}),),
        results=(Result(MIXED_CALL_ID, "get_mixed_content", MIXED_ERROR, is_error=True),),
        signatures={0: "CosCAY89a1-29FZUayMk98Agr588X"},
    ),
    "gemini.response.pydantic-ai-cassette-vertex-gemini-3-call-signature.json": Expect(
        calls=(Call(None, "get_mixed_content", {"type": "all"}),),
        signatures={0: "CosCAY89a1+29FZUayMk98Agr588X"},
        stop_reason="tool_use",
        text="",
    ),
    "gemini.response.pydantic-ai-cassette-code-execution.json": Expect(
        hosted=("code_execution",),
        stop_reason="end_turn",
        text=UTRECHT,
    ),
    "gemini.request.pydantic-ai-cassette-code-execution-replay.json": Expect(
        system="You are a helpful chatbot.",
        hosted=("code_execution",),
    ),
    "gemini.stream.pydantic-ai-cassette-code-execution.json": Expect(
        hosted=("code_execution", "code_execution"),
        stop_reason="end_turn",
        text="The result is -428,330,955.97745.",
    ),
    "gemini.stream.vercel-ai-fixture-vertex-partial-args-nested.json": Expect(
        calls=(Call(None, "cookRecipe", RECIPE),),
        signatures={0: "CmIBjz1rX0OQAtrZnJaEf6TJDpx1JA"},
        stop_reason="tool_use",
    ),
    "gemini.stream.vercel-ai-fixture-partial-args-no-terminal-call.json": Expect(
        calls=(Call(None, "writeItems", OPERATIONS),),
        signatures={0: "AY89a19ZkXSMGh/bSOlwTCxl62lQdt"},
        stop_reason="tool_use",
        text="",
    ),
}
