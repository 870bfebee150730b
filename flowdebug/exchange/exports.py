"""A session exported: a versioned trace, a protocol's request, graphs, SDK snippets.

``export(state, fmt, protocol)`` gives an :class:`Export` (file name, MIME type, content)
ready for a download button; the functions behind it are public too. Every format passes
through :mod:`flowdebug.redact`, so no credential leaves in an export.

The trace (``flowdebug.trace/1``) is the whole
:class:`~flowdebug.engine.session.session_state.SessionState`
at the top level (so ``flowdebug render`` reads its ``events``) plus ``format`` and
``metadata``; ``schemas/trace-v1.schema.json`` is its JSON Schema, generated from
:class:`Trace` by :func:`trace_schema`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from flowdebug import protocols
from flowdebug.engine.session.session_state import SessionState
from flowdebug.errors import UsageError
from flowdebug.exchange.snippets import sdks, snippet
from flowdebug.protocols.base import ConversionWarning
from flowdebug.protocols.models import choosing, model_for
from flowdebug.redact import redact_text
from flowdebug.store.rows import state_json

TRACE_FORMAT = "flowdebug.trace/1"
SCHEMA_ID = "https://flowdebug.dev/schemas/trace-v1.schema.json"
FORMATS = ("trace", "request", "mermaid", "svg", "dot", "snippet")


class TraceMetadata(BaseModel):
    """Where a trace comes from."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None
    parent: str | None = None
    exported_at: str | None = None  # ISO 8601, UTC
    flowdebug_version: str | None = None


class Trace(SessionState):
    """``flowdebug.trace/1``: a whole session (conversation, tools and handlers, policy,
    faults, breakpoints, tool state, trace events, executions, wire exchanges) plus
    metadata."""

    format: Literal["flowdebug.trace/1"]
    metadata: TraceMetadata = TraceMetadata()


@dataclass(frozen=True)
class Export:
    """One exported file."""

    filename: str
    mime: str
    data: str | bytes
    warnings: tuple[ConversionWarning, ...] = ()


def trace(state: SessionState, name: str | None = None, parent: str | None = None) -> dict:
    """The trace as JSON-ready data: a :class:`Trace`, valid against
    ``schemas/trace-v1.schema.json``. ``flowdebug run --json`` prints it."""
    metadata = TraceMetadata(
        name=name,
        parent=parent,
        exported_at=datetime.now(UTC).isoformat(timespec="seconds"),
        flowdebug_version=version("flowdebug"),
    )
    body = json.loads(state_json(state))
    return {"format": TRACE_FORMAT, "metadata": metadata.model_dump(), **body}


def trace_json(state: SessionState, name: str | None = None, parent: str | None = None) -> str:
    """The trace as the text of a ``.trace.json`` file."""
    return json.dumps(trace(state, name, parent), indent=2, ensure_ascii=False) + "\n"


def trace_schema() -> dict[str, Any]:
    """The JSON Schema of ``flowdebug.trace/1`` (what ``schemas/trace-v1.schema.json`` holds)."""
    schema = Trace.model_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **schema,
        "title": "flowdebug trace, version 1",
    }


def request_payload(state: SessionState, protocol: str) -> tuple[Any, list[ConversionWarning]]:
    """The request ``protocol`` sends for the session's conversation, and what it lost."""
    with choosing(state.models):  # the session's model for each vendor
        got = protocols.get(protocol).encode_request(state.conversation)
    return json.loads(redact_text(json.dumps(got.value, ensure_ascii=False))), got.warnings


def graph(
    state: SessionState, protocol: str, fmt: Literal["mermaid", "svg", "dot"], title: str = ""
) -> str:
    """The session's sequence graph as ``protocol`` shows it."""
    from flowdebug.engine.tracing.trace import lanes, rejection, sequence
    from flowdebug.render import to_dot, to_mermaid, to_svg

    refused = rejection(state.conversation, state.events, protocol)
    arrows = sequence(state.events, protocol, refused)
    heading = protocols.get(protocol).title + (f" — {title}" if title else "")
    match fmt:
        case "mermaid":
            text = to_mermaid(arrows, lanes(protocol), heading)
        case "dot":
            text = to_dot(arrows, lanes(protocol), heading)
        case "svg":
            text = to_svg(to_dot(arrows, lanes(protocol), heading))
        case _:
            raise UsageError(f"unknown graph format {fmt!r}; choose mermaid, svg or dot")
    return redact_text(text)


def sdk_snippet(state: SessionState, protocol: str, title: str = "") -> tuple[str, list]:
    """A runnable script replaying the conversation through ``protocol``'s SDK."""
    if protocol not in sdks():
        snippet(protocol, None)  # raises the clear error
    payload, warnings = request_payload(state, protocol)
    # Another vendor's model id stays out of the script too (its warning is in ``warnings``).
    model = model_for(protocol, state.conversation.model, state.models)
    return snippet(protocol, payload, title, model), warnings


def export_protocols(fmt: str) -> list[str]:
    """The protocols ``fmt`` can be exported in, in registry order: for a snippet, every
    vendor whose facts declare an SDK snippet; otherwise every vendor."""
    return list(sdks()) if fmt == "snippet" else list(protocols.PROTOCOLS)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:60] or "session"


def export(
    state: SessionState,
    fmt: str,
    protocol: str | None = None,
    name: str | None = None,
    parent: str | None = None,
) -> Export:
    """``state`` as one file: ``fmt`` is one of :data:`FORMATS`; ``protocol`` (the registry's
    first when None) is used by request, graph and snippet formats."""
    protocol = protocol or protocols.default_protocol()
    base = _slug(name or state.scenario or state.id)
    if fmt != "trace":
        protocols.get(protocol)  # an unknown name fails here, clearly
    match fmt:
        case "trace":
            return Export(f"{base}.trace.json", "application/json", trace_json(state, name, parent))
        case "request":
            payload, warnings = request_payload(state, protocol)
            text = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
            return Export(f"{base}.{protocol}.request.json", "application/json", text, (*warnings,))
        case "mermaid" | "dot" | "svg":
            mime = {"mermaid": "text/plain", "dot": "text/vnd.graphviz", "svg": "image/svg+xml"}
            ext = {"mermaid": "mmd", "dot": "dot", "svg": "svg"}[fmt]
            text = graph(state, protocol, fmt, name or state.scenario or "")
            return Export(f"{base}.{protocol}.{ext}", mime[fmt], text)
        case "snippet":
            code, warnings = sdk_snippet(state, protocol, name or state.scenario or "")
            module = protocol.replace("-", "_")
            return Export(f"{base}_{module}.py", "text/x-python", code, (*warnings,))
    raise UsageError(f"unknown export format {fmt!r}; choose one of: {', '.join(FORMATS)}")
