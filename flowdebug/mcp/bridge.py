"""How MCP tools and results reach the model: the MCP form beside every vendor's form.

An MCP server declares tools and answers ``tools/call``; the model never sees MCP. The runtime
re-encodes each tool as the vendor's declaration and each ``CallToolResult`` as the vendor's
tool result, and things change on the way: names with ``.`` or ``/`` are renamed
(:func:`~flowdebug.protocols.base.safe_name`), ``structuredContent`` and images may be dropped,
``isError`` becomes a JSON ``{"error": ...}`` text where the vendor has no error flag.

:func:`mcp_bridge_report` shows it per tool and per result, with the codecs' own encodings:
each tool is encoded in a request that declares it, each result in a one-call conversation
(user, the call, its result), and what the codec warned about is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from flowdebug import protocols
from flowdebug.model import Conversation, Message, Text, Tool, ToolCall, ToolResult, dump
from flowdebug.protocols.base import ConversionWarning, Converted, safe_name
from flowdebug.protocols.mcp.response import response_to_mcp
from flowdebug.protocols.mcp.tools import tool_to_mcp

if TYPE_CHECKING:
    from flowdebug.mcp.call import McpCall

_ASK = "Use the tool."
_RESULT_PATH = "messages[2]"  # the tool message of the one-call conversation


@dataclass
class VendorForm:
    """One vendor's form of a tool or a result: the name it sees, the JSON, what was lost."""

    protocol: str
    name: str
    value: Any
    warnings: list[ConversionWarning] = field(default_factory=list)
    renamed_from: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "renamed_from": self.renamed_from,
            "value": self.value,
            "warnings": [_warning(w) for w in self.warnings],
        }


@dataclass
class Bridge:
    """One MCP tool (``mcp``: its ``tools/list`` entry) or one result (``mcp``: the JSON-RPC
    response to its ``tools/call``) and its form in each vendor protocol."""

    name: str
    mcp: dict[str, Any]
    vendors: dict[str, VendorForm]
    call_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.call_id is not None:
            out["call_id"] = self.call_id
        out["mcp"] = self.mcp
        out.update({p: form.to_json() for p, form in self.vendors.items()})
        return out


@dataclass
class BridgeReport:
    """Every tool and every result, MCP beside each vendor."""

    tools: list[Bridge]
    results: list[Bridge]

    @property
    def renames(self) -> list[tuple[str, str, str]]:
        """``(protocol, MCP name, vendor name)`` for every tool a vendor sees renamed."""
        return [
            (p, t.name, form.name)
            for t in self.tools
            for p, form in t.vendors.items()
            if form.renamed_from is not None
        ]

    @property
    def warnings(self) -> list[ConversionWarning]:
        return [
            w for b in (*self.tools, *self.results) for f in b.vendors.values() for w in f.warnings
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "tools": [t.to_json() for t in self.tools],
            "results": [r.to_json() for r in self.results],
            "renames": [list(r) for r in self.renames],
        }


def mcp_bridge_report(
    tools: Sequence[Tool],
    results: Sequence[ToolResult | McpCall] = (),
    targets: Sequence[str] = protocols.model_protocols(),
) -> BridgeReport:
    """How each MCP tool becomes each vendor's declaration and each result (text,
    ``structuredContent``, images, ``isError``, a JSON-RPC error) each vendor's tool result.

    A result is a canonical result, or an :class:`~flowdebug.mcp.call.McpCall` whose real
    JSON-RPC response is then shown as the MCP form. Its tool is found in ``tools`` by name.
    """
    by_name = {t.name: t for t in tools}
    bridged = []
    for item in results:
        if isinstance(item, ToolResult):
            result, wire = item, response_to_mcp(item)
        else:
            result, wire = item.result, item.response or response_to_mcp(item.result)
        tool = by_name.get(result.name or "")
        forms = {p: result_form(p, result, tool) for p in targets}
        bridged.append(Bridge(result.name or "", wire, forms, call_id=result.call_id))
    return BridgeReport(
        tools=[
            Bridge(t.name, tool_to_mcp(t), {p: declaration(p, t) for p in targets}) for t in tools
        ],
        results=bridged,
    )


def declaration(protocol: str, tool: Tool) -> VendorForm:
    """``tool`` as ``protocol`` declares it, from that codec's request encoding."""
    conv = Conversation(tools=[tool], messages=[_ask()])
    encoded = protocols.get(protocol).encode_request(conv)
    facts = protocols.facts(protocol)
    declared = _at(encoded.value, facts.tools_path)[0]
    return _form(protocol, tool.name, _at(declared, facts.declaration_path), encoded.warnings)


def _at(value: Any, path: Sequence[str | int]) -> Any:
    for key in path:
        value = value[key]
    return value


def result_form(protocol: str, result: ToolResult, tool: Tool | None = None) -> VendorForm:
    """``result`` as ``protocol`` hands it to the model: the history items the codec writes
    after the call (a tool_result block in a user turn, role ``tool`` messages,
    ``function_call_output`` items, a ``functionResponse`` part)."""
    name = result.name or (tool.name if tool else "tool")
    call = ToolCall(id=result.call_id, name=name)
    conv = Conversation(
        tools=[tool] if tool else [],
        messages=[
            _ask(),
            Message(role="assistant", parts=[call]),
            Message(role="tool", parts=[result.model_copy(update={"name": name})]),
        ],
    )
    encoded = protocols.get(protocol).encode_request(conv)
    history = encoded.value[protocols.facts(protocol).history_key][2:]
    lost = [w for w in encoded.warnings if w.path.startswith(_RESULT_PATH)]
    return _form(protocol, name, history, lost)


def tools_part(protocol: str, tools: Sequence[Tool]) -> Converted[Any]:
    """The tools part of a request in ``protocol`` (``canonical``: the canonical tools;
    ``mcp``: the ``tools/list`` result), with what the encoding could not carry."""
    if protocol == "canonical":
        return Converted([dump(t) for t in tools])
    if protocol == "mcp":
        encoded = protocols.get("mcp").encode_request(Conversation(tools=list(tools)))
        return Converted(encoded.value[1]["msg"]["result"], encoded.warnings)
    encoded = protocols.get(protocol).encode_request(
        Conversation(tools=list(tools), messages=[_ask()])
    )
    tools_path = protocols.facts(protocol).tools_path
    found = encoded.value if tools_path else []
    for key in tools_path:
        found = found.get(key, []) if isinstance(found, dict) else []
    return Converted(found, encoded.warnings)


def _ask() -> Message:
    return Message(role="user", parts=[Text(text=_ASK)])


def _form(protocol: str, name: str, value: Any, warnings: list[ConversionWarning]) -> VendorForm:
    seen = safe_name(protocol, name)
    renamed = name if seen != name else None
    return VendorForm(protocol, seen, value, list(warnings), renamed)


def _warning(w: ConversionWarning) -> dict[str, str]:
    return {"code": w.code, "path": w.path, "message": w.message}
