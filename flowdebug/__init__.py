"""flowdebug: a visual debugger for the tool-calling cycle of language models.

The library's public face. Everything a user needs is importable from here::

    from flowdebug import Conversation, Message, Text, ToolCall, convert, Session

- the canonical model: :class:`Conversation`, :class:`Message`, :class:`Tool`,
  :class:`ToolChoice`, the parts (:class:`Text`, :class:`Thinking`, :class:`Image`,
  :class:`ToolCall`, :class:`ToolResult`, :class:`HostedCall`, :class:`HostedResult`) and
  :class:`ModelResponse`;
- the protocols: :func:`convert`, :func:`decode`, :func:`encode`, the registry
  :data:`PROTOCOLS` with :func:`get` and :func:`detect`;
- the linter: :func:`lint_payload`, :func:`lint_conversation`, :func:`lint_tools`;
- the step debugger: :class:`Session` (and its :class:`SessionState`), decisions
  :class:`Approve` and :class:`Reject`, the sample :mod:`scenarios`;
- who plays the model: :class:`ScriptedPlayer`, :class:`ManualPlayer`, :func:`live_player`;
- graphs: :func:`sequence` and :func:`lanes` of a trace, drawn by :func:`to_dot`,
  :func:`to_mermaid` and :func:`to_svg`;
- the trace document (``flowdebug.trace/1``): :func:`trace`, :func:`trace_schema`,
  :func:`export`;
- the errors, all under :class:`FlowdebugError`.

This module only re-exports; each name is documented where it is defined. The names load on
first use, so ``import flowdebug`` (and the ``flowdebug`` command) does not pay for the
engine and the MCP SDK until they are needed.
"""

from __future__ import annotations

import importlib
from importlib.metadata import version as _version
from typing import TYPE_CHECKING, Any

__version__: str = _version("flowdebug")  # pyproject.toml's [project] version, the one place

if TYPE_CHECKING:  # what type checkers and editors see; _EXPORTS below is what runs
    from flowdebug.engine.execution.approval import Approve, Reject
    from flowdebug.engine.session import scenarios
    from flowdebug.engine.session.debugger import Session
    from flowdebug.engine.session.session_state import SessionState
    from flowdebug.engine.tracing.trace import TraceEvent, lanes, sequence
    from flowdebug.errors import CodecError, FlowdebugError, ProviderError, UsageError
    from flowdebug.exchange.exports import Export, Trace, export, trace, trace_schema
    from flowdebug.lint.base.findings import Finding
    from flowdebug.lint.linter import lint_conversation, lint_payload, lint_tools
    from flowdebug.model import (
        Conversation,
        HostedCall,
        HostedResult,
        Image,
        Message,
        ModelResponse,
        Text,
        Thinking,
        Tool,
        ToolCall,
        ToolChoice,
        ToolResult,
    )
    from flowdebug.players import ManualPlayer, Player, ScriptedPlayer, live_player
    from flowdebug.protocols import PROTOCOLS, Codec, ConversionWarning, detect, get
    from flowdebug.protocols.convert import Decoded, convert, decode, encode
    from flowdebug.render import to_dot, to_mermaid, to_svg

# Each public name and the module that defines it (tests/repo/test_public_api.py checks this table
# against the imports above).
_EXPORTS: dict[str, str] = {
    # the canonical model
    "Conversation": "flowdebug.model",
    "Message": "flowdebug.model",
    "Tool": "flowdebug.model",
    "ToolChoice": "flowdebug.model",
    "Text": "flowdebug.model",
    "Thinking": "flowdebug.model",
    "Image": "flowdebug.model",
    "ToolCall": "flowdebug.model",
    "ToolResult": "flowdebug.model",
    "HostedCall": "flowdebug.model",
    "HostedResult": "flowdebug.model",
    "ModelResponse": "flowdebug.model",
    # protocols
    "convert": "flowdebug.protocols.convert",
    "decode": "flowdebug.protocols.convert",
    "encode": "flowdebug.protocols.convert",
    "Decoded": "flowdebug.protocols.convert",
    "PROTOCOLS": "flowdebug.protocols",
    "get": "flowdebug.protocols",
    "detect": "flowdebug.protocols",
    "Codec": "flowdebug.protocols",
    "ConversionWarning": "flowdebug.protocols",
    # lint
    "lint_payload": "flowdebug.lint.linter",
    "lint_conversation": "flowdebug.lint.linter",
    "lint_tools": "flowdebug.lint.linter",
    "Finding": "flowdebug.lint.base.findings",
    # the step debugger
    "Session": "flowdebug.engine.session.debugger",
    "SessionState": "flowdebug.engine.session.session_state",
    "Approve": "flowdebug.engine.execution.approval",
    "Reject": "flowdebug.engine.execution.approval",
    "scenarios": "flowdebug.engine.session",
    # players
    "Player": "flowdebug.players",
    "ScriptedPlayer": "flowdebug.players",
    "ManualPlayer": "flowdebug.players",
    "live_player": "flowdebug.players",
    # graphs
    "TraceEvent": "flowdebug.engine.tracing.trace",
    "sequence": "flowdebug.engine.tracing.trace",
    "lanes": "flowdebug.engine.tracing.trace",
    "to_dot": "flowdebug.render",
    "to_mermaid": "flowdebug.render",
    "to_svg": "flowdebug.render",
    # the trace document
    "Trace": "flowdebug.exchange.exports",
    "trace": "flowdebug.exchange.exports",
    "trace_schema": "flowdebug.exchange.exports",
    "export": "flowdebug.exchange.exports",
    "Export": "flowdebug.exchange.exports",
    # errors
    "FlowdebugError": "flowdebug.errors",
    "UsageError": "flowdebug.errors",
    "CodecError": "flowdebug.errors",
    "ProviderError": "flowdebug.errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    # PEP 562: a public name is imported from its module the first time it is asked for.
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'flowdebug' has no attribute {name!r}") from None
    owner = importlib.import_module(module)
    if hasattr(owner, name):
        value = getattr(owner, name)
    else:  # ``scenarios`` is a module: importing its package does not make it an attribute
        value = importlib.import_module(f"{module}.{name}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    # The public names, loaded or not, for completion in a REPL.
    return sorted({*globals(), *_EXPORTS})
