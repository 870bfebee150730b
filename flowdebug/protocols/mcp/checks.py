"""What a tool result loses on its way into an MCP transcript and back, named as a warning.

:func:`flowdebug.protocols.mcp.convert.response_to_mcp` writes the wire; these checks say
what decoding that wire will not give back, path by path
(``tests/protocols/test_no_silent_change.py``).
"""

from __future__ import annotations

from typing import Any

from flowdebug.model import HostedCall, HostedResult, Image, Text, ToolResult
from flowdebug.protocols.base import Warnings, safe_call_id
from flowdebug.protocols.mcp.convert import PROTOCOL, PROTOCOL_ERROR_TYPES


def hosted_type(part: HostedCall | HostedResult) -> str:
    """How a vendor-run call or result is named on its own wire (``anthropic
    server_tool_use web_search``), for the warning that drops it."""
    wire = (part.provider_details or {}).get(part.source or "")
    kind = wire.get("type") if isinstance(wire, dict) else None
    label = " ".join(str(x) for x in (part.source, kind, part.name) if x)
    return label or part.kind


def check_result(result: ToolResult, names: dict[str, str], w: Warnings, path: str) -> None:
    """Warn what of ``result`` will not read back from its JSON-RPC response; ``names`` maps
    the JSON-RPC ids of the calls already written to their tool names."""
    back_name = names.get(safe_call_id(PROTOCOL, result.call_id))
    if result.name != back_name:
        # MCP: a CallToolResult names no tool; the reader takes the name of the call it
        # answers, when that call is in the transcript.
        w.add(
            "result_name_changed",
            f"{path}.name",
            f"MCP results carry no tool name: {result.name!r} reads back as {back_name!r} "
            "(the name of the call with its id, if any)",
        )
    mine = (result.provider_details or {}).get(PROTOCOL)
    wire_error = mine.get("error") if isinstance(mine, dict) else None
    if result.error_type in PROTOCOL_ERROR_TYPES or isinstance(wire_error, dict):
        _check_protocol_error(result, wire_error, w, path)
        return
    if result.error_type is not None:
        w.add(
            "error_type_dropped",
            f"{path}.error_type",
            f"MCP results carry only isError, not why ({result.error_type})",
        )
    if isinstance(result.content, str):
        return
    _check_content(result.content, w, f"{path}.content")


def _check_protocol_error(result: ToolResult, wire_error: Any, w: Warnings, path: str) -> None:
    same = (
        isinstance(wire_error, dict)
        and result.error_type == "protocol"
        and result.is_error
        and result.content == wire_error.get("message")
    )
    if not same:
        # MCP: an unknown tool is a JSON-RPC error (-32602), not a CallToolResult.
        w.add(
            "result_sent_as_protocol_error",
            path,
            f"a {result.error_type or 'protocol'} error travels as a JSON-RPC error: it reads "
            "back as error_type protocol, with its text as the message and the wire error "
            "in provider_details",
        )


def _check_content(content: list[Text | Image], w: Warnings, path: str) -> None:
    only_text = len(content) == 1 and isinstance(content[0], Text)
    if not content or (only_text and not (content[0].provider_details or {}).get(PROTOCOL)):
        # MCP content is always a block list; the reader gives one plain text block (or
        # none) back as a string.
        w.add(
            "content_flattened",
            path,
            "MCP content is a list of blocks; one text block (or none) reads back as a string",
        )
    for k, part in enumerate(content):
        if isinstance(part, Text) and part.refusal:
            w.add("refusal_flattened", f"{path}[{k}]", "MCP text blocks have no refusal flag")
        if isinstance(part, Image) and part.data is not None and part.url is not None:
            w.add(
                "image_url_dropped",
                f"{path}[{k}]",
                "an MCP image block is inline data only; the url is not sent",
            )
        if (
            isinstance(part, Image)
            and part.data is None
            and part.url is not None
            and not part.media_type.startswith("image/")
        ):
            w.add(
                "image_in_result_dropped",
                f"{path}[{k}]",
                f"a link of type {part.media_type} reads back as a resource link placeholder",
            )
