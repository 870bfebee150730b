"""One ``tools/call`` on a real MCP server, as data: what went out, what came back, what it means.

:class:`McpCall` is what :meth:`flowdebug.mcp.client.McpClient.call_tool` returns: the canonical
result (``error_type`` ``tool_error`` / ``protocol`` / ``timeout`` / ``mcp_crash`` /
``mcp_connect`` for the failures), the JSON-RPC messages of this call, and findings about the
result (``structuredContent`` that breaks the tool's ``outputSchema``).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from jsonschema import SchemaError
from jsonschema.validators import validator_for
from mcp.shared.exceptions import MCPError

from flowdebug.errors import CodecError, FlowdebugError
from flowdebug.lint.base.findings import Finding
from flowdebug.model import ToolResult
from flowdebug.protocols.mcp.response import error_from_mcp, result_from_mcp

CLIENT, SERVER = "client->server", "server->client"


def _now_ms() -> float:
    return round(time.time() * 1000, 3)


@dataclass
class McpCall:
    """The record of one ``tools/call``.

    ``kind`` is ``result`` or one of the error types; ``response`` the JSON-RPC response when
    one arrived; ``messages`` this call's transcript entries (request, response,
    ``notifications/cancelled``); ``log`` the server's stderr tail after a crash.
    """

    server: str
    tool: str
    arguments: dict[str, Any]
    kind: str
    result: ToolResult
    request_id: int | str | None = None
    response: dict[str, Any] | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    started_ms: float = 0.0
    ended_ms: float = 0.0
    log: str = ""

    @property
    def error(self) -> dict[str, Any] | None:
        """The JSON-RPC error object of a protocol error that came over the wire."""
        error = (self.response or {}).get("error") if self.kind == "protocol" else None
        return error if isinstance(error, dict) else None

    def output(self) -> dict[str, Any]:
        """What ``flowdebug mcp call`` prints: the ``CallToolResult``, the JSON-RPC ``error``
        object, or ``{"error": {"type": kind, "message": ...}}`` when nothing answered."""
        if self.kind in ("result", "tool_error") and self.response is not None:
            return self.response["result"]
        if self.error is not None:
            return {"error": self.error}
        return {"error": {"type": self.kind, "message": self.result.text}}

    def trace_data(self) -> dict[str, Any]:
        """``{"mcp": {...}}`` for the call's trace events: the server, the JSON-RPC id, the
        outcome, the JSON-RPC error, the messages and the findings (all JSON)."""
        data: dict[str, Any] = {
            "server": self.server,
            "tool": self.tool,
            "request_id": self.request_id,
            "outcome": self.kind,
            "messages": self.messages,
            "findings": [dataclasses.asdict(f) for f in self.findings],
        }
        if self.error is not None:
            data["error"] = self.error
        return {"mcp": data}


@dataclass
class Pending:
    """A call on its way (filled in by the client on the loop), then :meth:`finish`\\ ed."""

    name: str
    arguments: dict[str, Any]
    timeout: float
    call_id: str | None = None
    request_id: int | str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    response: dict[str, Any] | None = None
    raw: dict[str, Any] | None = None  # the CallToolResult, validated by the SDK
    error: MCPError | None = None
    invalid: str | None = None  # the result broke the MCP schema
    failure: FlowdebugError | None = None  # connecting failed (has a ``kind``)
    started_ms: float = field(default_factory=_now_ms)

    @property
    def crashed(self) -> bool:
        # The SDK resolves the requests of a connection that ended with its CONNECTION_CLOSED
        # code, -32000 (stdio: the process exited; HTTP: the response stream ended, the server
        # is gone); the HTTP transport delivers it as an error response it made itself.
        return self.error is not None and self.error.code == types.CONNECTION_CLOSED

    def finish(self, server: str, output_schema: dict[str, Any] | None, stderr: str) -> McpCall:
        call_id = self.call_id or ("" if self.request_id is None else str(self.request_id))
        kind, result = self._outcome(call_id, stderr)
        findings = []
        if kind == "result" and output_schema is not None:
            findings = output_findings(self.name, output_schema, self.raw or {})
        return McpCall(
            server=server,
            tool=self.name,
            arguments=self.arguments,
            kind=kind,
            result=result,
            request_id=self.request_id,
            response=self.response,
            messages=self.messages,
            findings=findings,
            started_ms=self.started_ms,
            ended_ms=_now_ms(),
            log=stderr,
        )

    def _outcome(self, call_id: str, stderr: str) -> tuple[str, ToolResult]:
        def fail(kind: str, text: str) -> tuple[str, ToolResult]:
            result = ToolResult(
                call_id=call_id, name=self.name, content=text, is_error=True, error_type=kind
            )
            return kind, result

        where = f"tools/call {self.name}"
        if self.request_id is not None:
            where += f" (id {self.request_id})"
        if self.failure is not None:
            return fail(getattr(self.failure, "kind", "mcp_connect"), str(self.failure))
        if self.crashed:
            last = stderr.strip().splitlines()[-1:] if stderr.strip() else []
            tail = f"; its last stderr line: {last[0]}" if last else ""
            return fail("mcp_crash", f"the MCP server closed the connection during {where}{tail}")
        if self.error is not None and self.error.code == types.REQUEST_TIMEOUT:
            cancelled = any(
                m["msg"].get("method") == "notifications/cancelled" for m in self.messages
            )
            note = "; the client sent notifications/cancelled" if cancelled else ""
            text = f"timeout after {self.timeout:g}s: the MCP server did not answer {where}{note}"
            return fail("timeout", text)
        if self.error is not None:
            wire = (self.response or {}).get("error")
            if not isinstance(wire, dict):
                wire = self.error.error.model_dump(mode="json", exclude_none=True)
            return "protocol", error_from_mcp(call_id, self.name, wire, "$.error")
        if self.invalid is not None or self.raw is None:
            reason = self.invalid or "no result"
            return fail(
                "protocol", f"the server's answer to {where} is not a CallToolResult: {reason}"
            )
        raw = {k: v for k, v in self.raw.items() if not (k == "resultType" and v == "complete")}
        try:
            result = result_from_mcp(call_id, self.name, raw, "$.result")
        except CodecError as exc:
            return fail("protocol", f"the server's answer to {where}: {exc}")
        if result.is_error:
            return "tool_error", result.model_copy(update={"error_type": "tool_error"})
        return "result", result


def output_findings(tool: str, schema: dict[str, Any], result: dict[str, Any]) -> list[Finding]:
    """What is wrong with a successful ``CallToolResult`` against the tool's ``outputSchema``:
    no ``structuredContent``, content that breaks the schema, or a schema that is invalid."""
    if result.get("isError"):
        return []
    if "structuredContent" not in result:
        return [
            Finding(
                "warning",
                "structured_content_missing",
                "structuredContent",
                f"{tool} declares an outputSchema but its result has no structuredContent",
                "mcp",
            )
        ]
    cls = validator_for(schema)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        text = f"the outputSchema of {tool} is not a valid JSON Schema: {exc.message}"
        return [Finding("warning", "output_schema_invalid", "outputSchema", text, "mcp")]
    errors = sorted(
        cls(schema).iter_errors(result["structuredContent"]),
        key=lambda e: [str(p) for p in e.absolute_path],
    )
    return [
        Finding(
            "warning",
            "structured_content_invalid",
            "structuredContent"
            + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path),
            f"the structuredContent of {tool} breaks its outputSchema: {e.message}",
            "mcp",
        )
        for e in errors
    ]
