"""Messages per second for encoding and decoding a 1,000-message history in every protocol.

When LiteLLM is importable, its OpenAI → Anthropic message conversion runs on the same
history in the same process, as the peer to beat (it is never a dependency of flowdebug).

    .venv/bin/python bench/codec_throughput.py [--messages 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flowdebug import protocols
from flowdebug.model import Conversation, Message, Text, ToolCall, ToolResult, dump

SAMPLE = Path(__file__).resolve().parent.parent / "sample_tools" / "weather_conversation.json"


def history(n: int) -> Conversation:
    """A weather conversation grown to ``n`` messages of user/calls/results/answer rounds."""
    base = Conversation.model_validate_json(SAMPLE.read_text())
    messages: list[Message] = []
    i = 0
    while len(messages) < n:
        city = f"City{i}"
        a, b = f"toolu_{i:06d}a", f"toolu_{i:06d}b"
        messages += [
            Message(role="user", parts=[Text(text=f"Weather in {city} and its twin?")]),
            Message(
                role="assistant",
                parts=[
                    ToolCall(id=a, name="get_weather", arguments={"location": city, "unit": "c"}),
                    ToolCall(id=b, name="get_weather", arguments={"location": f"{city}-2"}),
                ],
            ),
            Message(
                role="tool",
                parts=[
                    ToolResult(
                        call_id=a,
                        name="get_weather",
                        content=json.dumps({"location": city, "temperature": i % 30}),
                    ),
                    ToolResult(
                        call_id=b, name="get_weather", content="timeout after 10s", is_error=True
                    ),
                ],
            ),
            Message(role="assistant", parts=[Text(text=f"{city} is {i % 30} degrees.")]),
        ]
        i += 1
    return base.model_copy(update={"messages": messages[:n]})


def timed(fn, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def litellm_peer(openai_messages: list, repeat: int) -> float | None:
    # LiteLLM fetches a price list from the network at import unless told not to.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        from litellm.litellm_core_utils.prompt_templates.factory import anthropic_messages_pt
    except Exception:
        return None
    return timed(
        lambda: anthropic_messages_pt(
            messages=[dict(m) for m in openai_messages],
            model="claude-sonnet-4-6",
            llm_provider="anthropic",
        ),
        repeat,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=21)
    args = ap.parse_args()
    conv = history(args.messages)
    n = len(conv.messages)
    print(f"history: {n} messages, median of {args.repeat} runs")
    print(f"{'protocol':18} {'encode msg/s':>14} {'decode msg/s':>14}")
    for name, codec in protocols.PROTOCOLS.items():
        payload = codec.encode_request(conv).value
        enc = timed(lambda c=codec: c.encode_request(conv), args.repeat)
        dec = timed(lambda c=codec, p=payload: c.decode_request(p), args.repeat)
        print(f"{name:18} {n / enc:14,.0f} {n / dec:14,.0f}")

    chat_codec, anthropic = protocols.get("openai-chat"), protocols.get("anthropic")
    chat = chat_codec.encode_request(conv).value["messages"]
    body = {"model": "gpt-4.1", "messages": chat}
    decoded = chat_codec.decode_request(body).value
    ours = timed(
        lambda: anthropic.encode_request(chat_codec.decode_request(body).value), args.repeat
    )
    # The floor of any conversion through the canonical model: building its pydantic objects
    # for this history from plain data, with no wire parsing and no encoding at all.
    plain = dump(decoded)
    floor = timed(lambda: Conversation.model_validate(plain), args.repeat)
    print(f"\nOpenAI Chat → Anthropic messages, {len(chat)} OpenAI messages:")
    print(f"  flowdebug (decode + encode): {len(chat) / ours:12,.0f} msg/s  {ours * 1e3:5.2f} ms")
    print(f"    of which canonical objects alone: {floor * 1e3:5.2f} ms")
    peer = litellm_peer(chat, args.repeat)
    if peer is None:
        print("  litellm: not installed (pip install litellm into the venv to compare)")
    else:
        print(
            f"  litellm anthropic_messages_pt: {len(chat) / peer:8,.0f} msg/s  {peer * 1e3:5.2f} ms"
        )
        print(f"  ratio flowdebug / litellm: {peer / ours:.2f}x")


if __name__ == "__main__":
    main()
