"""Bare tool declarations recognised in any vendor's spelling and wrapped in the smallest
request of that vendor, so its codec reads them (pasted tools, ``flowdebug lint`` on a list)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Envelope:
    """Bare tool declarations wrapped in the smallest request ``protocol`` decodes.

    ``inner`` is where the declarations sit in ``request`` and ``outer`` where they sat in
    what was pasted, so a decoder's JSON path can be told in the person's terms.
    """

    protocol: str
    request: dict[str, Any]
    shape: str
    inner: str
    outer: str = "$"

    def path(self, codec_path: str) -> str:
        """``codec_path`` (into ``request``) as a path into the pasted payload."""
        rest = codec_path[len(self.inner) :]
        if codec_path.startswith(self.inner) and (not rest or rest[0] in ".["):
            return self.outer + rest
        return codec_path


def tool_shape(tool: Any) -> str | None:
    """Which vendor spells this one declaration so (``gemini-tool``: a Gemini Tool object
    holding ``functionDeclarations``; ``gemini``: one FunctionDeclaration), or None."""
    if not isinstance(tool, dict):
        return None
    if "input_schema" in tool:
        return "anthropic"
    if tool.get("type") == "function":
        return "openai-chat" if "function" in tool else "openai-responses"
    if "functionDeclarations" in tool or "function_declarations" in tool:
        return "gemini-tool"
    params = ("parametersJsonSchema", "parameters_json_schema", "parameters")
    if "name" in tool and any(k in tool for k in params):
        return "gemini"  # a FunctionDeclaration
    if "name" in tool and "inputSchema" in tool:
        return "mcp"
    return None


def tool_envelope(payload: Any, outer: str = "$") -> Envelope | None:
    """Bare tool declarations (one, or a list) in some vendor's spelling, wrapped in the
    smallest request of that vendor, so that its codec reads them; None for anything else."""
    many = isinstance(payload, list)
    tools = payload if many else [payload]
    if not tools or not all(isinstance(t, dict) for t in tools):
        return None
    shapes = {tool_shape(t) for t in tools}
    if len(shapes) != 1 or None in shapes:
        return None
    shape = shapes.pop()
    assert shape is not None
    at = "$.tools" if many else "$.tools[0]"
    match shape:
        case "anthropic":
            request = {"model": "-", "max_tokens": 1, "messages": [], "tools": tools}
            return Envelope("anthropic", request, shape, at, outer)
        case "openai-chat":
            request = {"model": "-", "messages": [], "tools": tools}
            return Envelope("openai-chat", request, shape, at, outer)
        case "openai-responses":
            request = {"model": "-", "input": [], "tools": tools}
            return Envelope("openai-responses", request, shape, at, outer)
        case "gemini-tool":
            return Envelope("gemini", {"contents": [], "tools": tools}, shape, at, outer)
        case "gemini":
            request = {"contents": [], "tools": [{"functionDeclarations": tools}]}
            at = "$.tools[0].functionDeclarations" + ("" if many else "[0]")
            return Envelope("gemini", request, shape, at, outer)
        case _:
            return Envelope("mcp", {"tools": tools}, shape, at, outer)
