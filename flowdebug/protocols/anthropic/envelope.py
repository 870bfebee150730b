"""What an Anthropic payload needs around its messages, and what filling it in changes.

Anthropic requires ``model`` and ``max_tokens`` on every request and ``id``, ``model`` and
``usage`` on every Message; when the canonical value has none, one is made up and a warning
says which. Usage counters Anthropic has no field for are named when they are dropped.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from flowdebug.model import Conversation, ModelResponse, canonical_json
from flowdebug.protocols.anthropic.facts import SERVER_TOOLS
from flowdebug.protocols.base import Warnings
from flowdebug.protocols.models import own_model

_VERSION = re.compile(r"_\d{8}$")  # a tool type's version: web_search_20250305
DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_MAX_TOKENS = 1024  # Anthropic requires max_tokens on every request
# Anthropic's Usage counters. input_tokens excludes cache reads and writes, which have their
# own counters; output_tokens includes thinking, so no reasoning count exists apart.
USAGE_KEYS = ("input_tokens", "output_tokens")
USAGE_EXTRA = ("cache_creation_input_tokens", "cache_read_input_tokens")


def model(value: str | None, w: Warnings) -> str:
    value = own_model(value, w)  # another vendor's model id is replaced, and said so
    if value is not None:
        return value
    w.add(
        "model_filled_in",
        "model",
        f"the source names no model and Anthropic requires one; {DEFAULT_MODEL} was filled in",
    )
    return DEFAULT_MODEL


def max_tokens(conv: Conversation, w: Warnings) -> int:
    if conv.max_tokens is not None:
        return conv.max_tokens
    w.add(
        "max_tokens_filled_in",
        "max_tokens",
        f"Anthropic requires max_tokens; the source has none, so {DEFAULT_MAX_TOKENS} was sent",
    )
    return DEFAULT_MAX_TOKENS


def message_id(resp: ModelResponse, w: Warnings) -> str:
    """``resp.id`` when it is an Anthropic id, else a deterministic ``msg_`` id (warned)."""
    if resp.id is not None and resp.id.startswith("msg_"):
        return resp.id
    digest = hashlib.sha1(canonical_json(resp.message).encode()).hexdigest()[:24]
    made = f"msg_{digest}"
    if resp.id is None:
        w.add("response_id_replaced", "id", f"the response has no id; Anthropic needs one: {made}")
    else:
        w.add(
            "response_id_replaced",
            "id",
            f"Anthropic message ids start with msg_; {resp.id!r} became {made}",
        )
    return made


def usage(resp: ModelResponse, w: Warnings) -> dict[str, int]:
    """Anthropic's Usage counters from the canonical usage; what it cannot hold is named."""
    have = resp.usage or {}
    if resp.usage is None:
        w.add(
            "usage_rewritten",
            "usage",
            "the response has no usage; Anthropic requires one, so 0 tokens in and out was sent",
        )
    else:
        for key in USAGE_KEYS:
            if key not in have:
                w.add(
                    "usage_rewritten",
                    f"usage.{key}",
                    f"the usage has no {key}; Anthropic requires it, so 0 was sent",
                )
    for key in have:
        if key not in USAGE_KEYS + USAGE_EXTRA:
            w.add(
                "usage_dropped",
                f"usage.{key}",
                f"Anthropic usage has no {key} counter (output_tokens already includes "
                "thinking); it was dropped",
            )
    out = {k: have.get(k, 0) for k in USAGE_KEYS}
    return out | {k: v for k, v in have.items() if k in USAGE_EXTRA}


# Anthropic: ServerToolUsage counts every server tool, and newer SDKs require each counter
# (web_fetch_requests came after web_search_requests; responses from before omit it).
SERVER_TOOL_COUNTERS = ("web_search_requests", "web_fetch_requests")


def usage_extra(extra: dict[str, Any], w: Warnings) -> dict[str, Any]:
    """The usage's vendor fields as kept from an Anthropic source, with every counter of
    ``server_tool_use`` present (0, named by a warning, when the source had none)."""
    server = extra.get("server_tool_use") if isinstance(extra, dict) else None
    if not isinstance(server, dict):
        return extra
    missing = [k for k in SERVER_TOOL_COUNTERS if k not in server]
    for key in missing:
        w.add(
            "usage_rewritten",
            f"usage.server_tool_use.{key}",
            f"the server tool usage has no {key}; Anthropic's types require it, so 0 was sent",
        )
    return extra | {"server_tool_use": server | dict.fromkeys(missing, 0)}


def merge_tools(encoded: list[dict[str, Any]], stashed: Any) -> list[dict[str, Any]]:
    """The request's tools in wire order: server tools (web_search_20250305, code execution,
    ...) have no canonical form and ride in provider_details with their place in the list;
    client tools come from the canonical ones."""
    if not isinstance(stashed, list):
        return encoded
    rest = iter(encoded)
    out: list[dict[str, Any]] = []
    for tool in stashed:
        if is_server_tool(tool):
            out.append(tool)
        elif (client := next(rest, None)) is not None:
            out.append(client)
    return out + list(rest)


def is_server_tool(tool: Any) -> bool:
    """A declaration of one of Anthropic's documented server tools or connectors (any
    version); an unknown type is a client tool."""
    kind = tool.get("type") if isinstance(tool, dict) else None
    return isinstance(kind, str) and _VERSION.sub("", kind) in SERVER_TOOLS


def is_typed_client_tool(tool: Any) -> bool:
    """A client tool whose schema Anthropic defines (``memory_20250818``, ``bash_...``)."""
    kind = tool.get("type") if isinstance(tool, dict) else None
    return isinstance(kind, str) and kind != "custom" and not is_server_tool(tool)
