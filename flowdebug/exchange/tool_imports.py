"""Tools pasted in any vendor's format, read into canonical tools and added to a tool set.

Pasted tools are read by the protocols' own decoders (``flowdebug.protocols.convert``): a whole
request of any vendor, an MCP ``tools/list`` message or result, or bare declarations (one, or
a list) in any vendor's spelling, which :func:`tool_envelope` wraps in the smallest request of
that vendor. Every refusal names the JSON path of what is wrong in what was pasted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from flowdebug import jsontext, protocols
from flowdebug.engine.execution.canned_handlers import FixedHandler
from flowdebug.engine.execution.handlers import ToolEntry, Toolset
from flowdebug.errors import CodecError
from flowdebug.model import Tool
from flowdebug.protocols.base import ConversionWarning
from flowdebug.protocols.convert import CANONICAL, Decoded, decode, is_canonical
from flowdebug.protocols.facts import BareTool
from flowdebug.protocols.tools import Envelope, bare_tools, tool_envelope, tool_shape

DEFAULT_RESULT = "ok"  # what an imported tool answers until someone gives it a handler

_KIND_TITLES = {
    "tools_list": "tools/list",
    "tools_call": "tools/call request",
    "call_result": "tools/call result",
}


@dataclass(frozen=True)
class ImportedTools:
    """Tools read from a paste: the protocol whose spelling they were in (CLI name, or
    ``canonical``), what the paste was (``source``, e.g. "OpenAI Chat tools list"), the
    canonical tools, and what the decoder could not carry."""

    protocol: str
    tools: list[Tool]
    warnings: list[ConversionWarning] = field(default_factory=list)
    source: str = ""

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tools]


def parse_tools(source: str | Any) -> ImportedTools:
    """Read tools from pasted JSON text (or an already parsed payload).

    Accepts a whole request of any vendor, an MCP ``tools/list`` message or result, an object
    with just a ``tools`` list, and bare declarations of any vendor (one, or a list). Raises
    CodecError naming the JSON path when the text is not JSON, the shape is unknown, a
    declaration does not decode, nothing declares a tool, or two tools share a name.
    """
    if isinstance(source, str):
        if not source.strip():
            raise CodecError("input", "$", "nothing pasted: paste a tools list or a request")
        payload = jsontext.loads(source)
    else:
        payload = source
        jsontext.check(payload)
    envelope = tool_envelope(payload)
    if envelope is None and tools_only(payload):
        envelope = tool_envelope(payload["tools"], "$.tools")
        if envelope is None:
            raise _unknown_shape(payload["tools"], "$.tools")
    if envelope is None and protocols.detect(payload) is None and not is_canonical(payload):
        raise _unknown_shape(payload, "$")
    try:
        decoded = decode(envelope.request, envelope.protocol) if envelope else decode(payload)
    except CodecError as e:
        if envelope is None:
            raise
        raise CodecError(e.protocol, envelope.path(e.path), e.reason) from None
    tools = _declared(decoded)
    names: set[str] = set()
    for i, tool in enumerate(tools):
        if tool.name in names:
            where = envelope.path(f"{envelope.inner}[{i}]") if envelope else f"$.tools[{i}]"
            raise CodecError(decoded.protocol, where, f"two tools are named {tool.name!r}")
        names.add(tool.name)
    return ImportedTools(decoded.protocol, tools, decoded.warnings, _describe(decoded, envelope))


def tools_only(payload: Any) -> bool:
    """An object that is nothing but a tools list (plus perhaps a tool choice)."""
    return (
        isinstance(payload, dict)
        and isinstance(payload.get("tools"), list)
        and set(payload) <= {"tools", "tool_choice", "toolConfig"}
        and protocols.detect(payload) is None
    )


def _unknown_shape(payload: Any, path: str) -> CodecError:
    if isinstance(payload, list):
        if not payload:
            return CodecError("input", path, "the list is empty: there are no tools to import")
        first_shape: BareTool | None = None
        for i, item in enumerate(payload):
            if not isinstance(item, dict):
                kind = type(item).__name__
                return CodecError("input", f"{path}[{i}]", f"expected a tool object, got {kind}")
            found = tool_shape(item)
            if found is None:
                keys = ", ".join(item) or "none"
                return CodecError(
                    "input",
                    f"{path}[{i}]",
                    f"not a tool declaration of any vendor (keys: {keys}); {_expected()}",
                )
            shape = found[1]
            if first_shape is None:
                first_shape = shape
            elif shape != first_shape:
                return CodecError(
                    "input",
                    f"{path}[{i}]",
                    f"an {shape.title} after {first_shape.title}s: paste one "
                    "vendor's format at a time",
                )
    if isinstance(payload, dict):
        keys = ", ".join(payload) or "none"
        return CodecError(
            "input",
            path,
            "not a tool, a tools list or a request of any known protocol "
            f"({', '.join(protocols.PROTOCOLS)}); keys found: {keys}; {_expected()}",
        )
    kind = type(payload).__name__
    return CodecError("input", path, f"expected a JSON object or list of tools, got {kind}")


def _declared(decoded: Decoded) -> list[Tool]:
    title = _title(decoded.protocol)
    if decoded.response is not None:
        raise CodecError(
            decoded.protocol,
            "$",
            f"{title} {decoded.kind} (a model turn): it declares no tools; paste a request, "
            "a tools list or an MCP tools/list result",
        )
    tools = decoded.as_conversation().tools
    if not tools:
        kind = _KIND_TITLES.get(decoded.kind, decoded.kind)
        raise CodecError(decoded.protocol, "$", f"this {title} {kind} declares no tools")
    return list(tools)


def _expected() -> str:
    """What a bare declaration of each registered vendor holds, for a paste no vendor reads:
    ``expected "input_schema" (Anthropic tool), ... or "toolSpec" (Bedrock toolSpec)``."""
    each = [f"{bare.keys} ({bare.title})" for _, bare in bare_tools()]
    return "expected " + (", ".join(each[:-1]) + " or " if len(each) > 1 else "") + each[-1]


def _title(protocol: str) -> str:
    return "canonical" if protocol == CANONICAL else protocols.get(protocol).title


def _describe(decoded: Decoded, envelope: Envelope | None) -> str:
    if envelope is not None:
        many = not envelope.inner.endswith("]")
        return envelope.shape.title + ("s list" if many else "")
    kind = _KIND_TITLES.get(decoded.kind, decoded.kind)
    if decoded.protocol == "mcp" and decoded.kind == "tools_list":
        kind = "tools/list result"
    return f"{_title(decoded.protocol)} {kind}"


def import_tools(toolset: Toolset, tools: Iterable[Tool]) -> Toolset:
    """``toolset`` with ``tools`` added, each answering the fixed result "ok"; a tool whose
    name is already taken replaces that declaration and keeps its handler and timeout."""
    out = toolset
    for tool in tools:
        current = toolset.get(tool.name)
        if current is None:
            entry = ToolEntry(tool=tool, handler=FixedHandler(result=DEFAULT_RESULT))
        else:
            entry = current.model_copy(update={"tool": tool})
        out = out.with_entry(entry)
    return out
