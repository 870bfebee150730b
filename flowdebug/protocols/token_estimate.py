"""The offline token estimate: what a vendor's tokenizer would count, without its tokenizer.

No vendor's tokenizer ships offline here (tiktoken downloads its encodings at first use; the
others have none to install), so offline counts are a labelled estimate: about four
characters a token, the rule of thumb Google (Gemini's token guide) and OpenAI (its tokenizer
page) both state for English text, applied to the JSON as the vendor receives it, compact
(no spaces after separators, keys sorted, so the figure does not depend on how a client
formatted it). JSON's punctuation and short keys make real counts run somewhat higher; an
exact figure comes from the vendor's count-tokens endpoint (``Facts.token_count``).
"""

from __future__ import annotations

import json
import math
from typing import Any

from flowdebug import protocols
from flowdebug.model import Conversation, Message, Text, Tool

CHARS_PER_TOKEN = 4
METHOD = "chars/4 of the encoded tools JSON"
# The one user message every footprint request carries (some vendors refuse an empty history).
PROMPT = "Hi"


def compact(value: Any) -> str:
    """``value`` as compact JSON text (a string stays as it is)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def estimate_tokens(value: Any) -> int:
    """About how many tokens ``value`` (text, or JSON as compact text) is: chars / 4, up."""
    return math.ceil(len(compact(value)) / CHARS_PER_TOKEN)


def footprint_request(tools: list[Tool], model: str | None = None) -> Conversation:
    """The smallest conversation that declares ``tools``: one short user message. A vendor's
    count of it with the tools, less its count without them, is the tools' footprint."""
    user = Message(role="user", parts=[Text(text=PROMPT)])
    return Conversation(tools=tools, messages=[user], model=model)


def declarations(protocol: str, tools: list[Tool]) -> Any:
    """``tools`` as ``protocol`` declares them in a request (the value at its tools path)."""
    body = protocols.get(protocol).encode_request(footprint_request(tools)).value
    for key in protocols.facts(protocol).tools_path:
        body = body.get(key) if isinstance(body, dict) else None
    return body if body is not None else []
