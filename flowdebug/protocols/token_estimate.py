"""The offline token estimate: what a vendor's tokenizer would count, without its tokenizer.

Offline counts are a labelled estimate: about four characters a token, the rule of thumb
Google (Gemini's token guide) and OpenAI (its tokenizer page) both state for English text,
applied to the JSON as the vendor receives it, compact (no spaces after separators, keys
sorted, so the figure does not depend on how a client formatted it). JSON's punctuation and
short keys make real counts run somewhat higher; an exact figure comes from the vendor's
count-tokens endpoint (``Facts.token_count``).

For a vendor whose facts name its tiktoken encoding (``Facts.tokenizer``: OpenAI's
``o200k_base``) the estimate is that encoding's count of the same JSON, but only when tiktoken
is installed and its cache already holds the encoding file: tiktoken downloads the file at
first use, and nothing here may reach that host. No package on the registries flowdebug
installs from ships ``o200k_base`` in tiktoken's format (one ships ``cl100k_base``, the
encoding of OpenAI's older models), so tiktoken is not a dependency. Even then it is an
estimate: OpenAI renders the declarations in a format of its own before tokenizing them.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
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


def tiktoken_cached(url: str | None) -> bool:
    """Does tiktoken's cache hold the encoding file it downloads from ``url`` (the vendor's
    ``Facts.tokenizer_file``), so loading it reaches no network? The cache is where tiktoken
    looks: ``TIKTOKEN_CACHE_DIR``, else ``DATA_GYM_CACHE_DIR``, else ``data-gym-cache`` in the
    temporary folder; an empty variable turns it off."""
    folder = os.environ.get(
        "TIKTOKEN_CACHE_DIR",
        os.environ.get("DATA_GYM_CACHE_DIR", os.path.join(tempfile.gettempdir(), "data-gym-cache")),
    )
    if url is None or not folder:
        return False
    return os.path.isfile(os.path.join(folder, hashlib.sha1(url.encode()).hexdigest()))


def tiktoken_tokens(encoding: str, url: str | None, text: str) -> int | None:
    """``text``'s length in tiktoken's ``encoding`` (its file downloaded from ``url``), or None
    when tiktoken or the cached encoding file is not there (see the module's docstring)."""
    if not tiktoken_cached(url):
        return None
    try:
        import tiktoken  # type: ignore[import-not-found]
    except ImportError:
        return None
    try:
        return len(tiktoken.get_encoding(encoding).encode(text, disallowed_special=()))
    except (OSError, ValueError):  # a damaged cache file
        return None


def tools_estimate(protocol: str, tools: list[Tool]) -> tuple[int, str]:
    """The offline estimate of ``tools`` as ``protocol`` declares them, and how it was made."""
    if not tools:
        return 0, METHOD
    text = compact(declarations(protocol, tools))
    found = protocols.facts(protocol)
    encoding = found.tokenizer
    counted = tiktoken_tokens(encoding, found.tokenizer_file, text) if encoding else None
    if counted is not None:
        return counted, f"tiktoken {encoding} of the encoded tools JSON"
    return estimate_tokens(text), METHOD
