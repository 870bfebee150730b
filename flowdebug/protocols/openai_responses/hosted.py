"""OpenAI Responses items for tools the API runs itself (web search, file search, code
interpreter, image generation, remote MCP servers, computer and local shell actions).

Such an item is the call and, once completed, its result in one object. It decodes to a
:class:`HostedCall` (plus a :class:`HostedResult` when the item carries an outcome) in the
assistant turn; the exact item rides in the call's ``provider_details["openai-responses"]
["item"]`` so it re-encodes byte-identical. From another vendor, only the hosted tools that
Responses really has are rebuilt: ``web_search`` (a ``web_search_call``) and a remote MCP
call (``mcp_call``, ``server`` = ``server_label``); the others are dropped with a warning.
"""

from __future__ import annotations

import json
from typing import Any

from flowdebug.model import HostedCall, HostedResult, Image, Part, Text
from flowdebug.protocols.base import Warnings, require
from flowdebug.protocols.openai_responses.parts import PROTOCOL, own
from flowdebug.protocols.wire_helpers import arguments_from_text

# Item type -> the canonical hosted tool name. An mcp_call uses the remote tool's own name
# and sets ``server``: only an executed connector call does (other vendors map exactly those),
# so a tool listing and an approval request leave ``server`` unset.
HOSTED_NAMES = {
    "web_search_call": "web_search",
    "file_search_call": "file_search",
    "code_interpreter_call": "code_interpreter",
    "image_generation_call": "image_generation",
    "computer_call": "computer",
    "local_shell_call": "local_shell",
    "shell_call": "shell",
    "apply_patch_call": "apply_patch",
    "mcp_list_tools": "mcp_list_tools",
    "mcp_approval_request": "mcp_approval_request",
    "mcp_call": "",
}
# Items the caller sends back for a hosted call: outputs of client-run computer and shell
# actions and the person's answer to an MCP approval request.
HOSTED_REPLIES = {
    "computer_call_output",
    "local_shell_call_output",
    "shell_call_output",
    "apply_patch_call_output",
    "mcp_approval_response",
}
_CALL_ID_ITEMS = {"computer_call", "local_shell_call", "shell_call", "apply_patch_call"}


def decode_hosted(item: dict[str, Any], path: str) -> list[Part]:
    """The hosted call (and its result, when the item holds one) for one item."""
    kind = item["type"]
    if kind in HOSTED_REPLIES:
        return [_reply(item, path)]
    call_id = item.get("call_id") if kind in _CALL_ID_ITEMS else None
    call_id = call_id if isinstance(call_id, str) else require(PROTOCOL, item, "id", path, str)
    name = HOSTED_NAMES[kind] or require(PROTOCOL, item, "name", path, str)
    server = item.get("server_label") if kind == "mcp_call" else None
    status = item.get("status")
    call = HostedCall(
        id=call_id,
        name=name,
        arguments=_arguments(item),
        server=server if isinstance(server, str) else None,
        status=status if isinstance(status, str) else None,
        source=PROTOCOL,
        provider_details={PROTOCOL: {"item": item}},
    )
    result = _result(item, call_id, name)
    return [call] if result is None else [call, result]


def _arguments(item: dict[str, Any]) -> dict[str, Any]:
    kind = item["type"]
    if kind in ("mcp_call", "mcp_approval_request"):
        arguments, raw = arguments_from_text(str(item.get("arguments") or ""))
        arguments = arguments if raw is None else {"input": raw}
        if kind == "mcp_approval_request":
            return {"server_label": item.get("server_label"), "name": item.get("name")} | {
                "arguments": arguments
            }
        return arguments
    if kind == "mcp_list_tools":
        return {"server_label": item.get("server_label")}
    if kind == "web_search_call":
        action = item.get("action")
        if isinstance(action, dict):
            # Anthropic's web_search server tool takes {"query": ...}: the same spelling.
            if action.get("type") == "search" and isinstance(action.get("query"), str):
                return {"query": action["query"]}
            return {k: v for k, v in action.items() if k != "sources"}
        return {}
    if kind == "file_search_call":
        return {"queries": item.get("queries") or []}
    if kind == "code_interpreter_call":
        return {"code": item.get("code") or ""}
    if kind == "image_generation_call":
        prompt = item.get("revised_prompt")
        return {"prompt": prompt} if isinstance(prompt, str) else {}
    action = item.get("action")
    return action if isinstance(action, dict) else {}


def _result(item: dict[str, Any], call_id: str, name: str) -> HostedResult | None:
    """What the vendor's tool answered, when the item says it."""
    kind = item["type"]
    content: str | list[Text | Image] | None = None
    is_error = False
    if kind == "mcp_call":
        if item.get("error") is not None:
            content, is_error = _error_text(item["error"]), True
        elif isinstance(item.get("output"), str):
            content = item["output"]
    elif kind == "mcp_list_tools":
        content = "\n".join(_texts(item.get("tools"), "name"))
        is_error = item.get("error") is not None
    elif kind == "web_search_call":
        if item.get("status") == "completed":
            action = item.get("action")
            content = "\n".join(
                _texts(action.get("sources") if isinstance(action, dict) else None, "url")
            )
    elif kind == "file_search_call":
        if item.get("results") is not None:
            content = json.dumps(item["results"], ensure_ascii=False)
    elif kind == "code_interpreter_call":
        outputs = item.get("outputs")
        if isinstance(outputs, list):
            content = [_output(o) for o in outputs if isinstance(o, dict)]
    elif kind == "image_generation_call" and isinstance(item.get("result"), str):
        content = [Image(data=item["result"], media_type=_media(item))]
    if content is None:
        return None
    failed = item.get("status") == "failed"
    return HostedResult(
        call_id=call_id, name=name, content=content, is_error=is_error or failed, source=PROTOCOL
    )


def _texts(entries: Any, key: str) -> list[str]:
    """The text under ``key`` of each object in ``entries`` (a list, or anything else the
    item holds instead, which gives none)."""
    if not isinstance(entries, list):
        return []
    return [e[key] for e in entries if isinstance(e, dict) and isinstance(e.get(key), str)]


def _error_text(error: Any) -> str:
    """An mcp_call error as text: a tool's own error content, else the error's message."""
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        content = error.get("content")
        if isinstance(content, list) and all(
            isinstance(c, dict) and c.get("type") == "text" for c in content
        ):
            return "\n".join(str(c.get("text", "")) for c in content)
        if isinstance(error.get("message"), str):
            return error["message"]
    return json.dumps(error, ensure_ascii=False)


def _output(output: dict[str, Any]) -> Text | Image:
    if output.get("type") == "image" and isinstance(output.get("url"), str):
        return Image(url=output["url"])
    return Text(text=str(output.get("logs", "")))


def _media(item: dict[str, Any]) -> str:
    return f"image/{item.get('output_format') or 'png'}"


def _reply(item: dict[str, Any], path: str) -> HostedResult:
    """A caller-sent reply to a hosted call: kept verbatim, paired by its call id."""
    if item["type"] == "mcp_approval_response":
        call_id = require(PROTOCOL, item, "approval_request_id", path, str)
        approve = item.get("approve")
        content = "approved" if approve else f"rejected: {item.get('reason') or ''}".rstrip(": ")
        return HostedResult(
            call_id=call_id,
            name="mcp_approval_response",
            content=content,
            is_error=not approve,
            source=PROTOCOL,
            provider_details={PROTOCOL: {"item": item}},
        )
    # A local_shell_call_output names its call by ``id`` (the SDK: "the unique ID of the
    # local shell tool call"); the other outputs by ``call_id``.
    key = "id" if item["type"] == "local_shell_call_output" else "call_id"
    call_id = require(PROTOCOL, item, key, path, str)
    output = item.get("output")
    return HostedResult(
        call_id=call_id,
        name=item["type"].removesuffix("_output"),
        content=output if isinstance(output, str) else json.dumps(output, ensure_ascii=False),
        source=PROTOCOL,
        provider_details={PROTOCOL: {"item": item}},
    )


class HostedEncoder:
    """Hosted parts of one canonical message -> items."""

    def __init__(self, w: Warnings):
        self.w = w

    def items(
        self, part: HostedCall | HostedResult, path: str, parts: list[Any]
    ) -> list[dict[str, Any]]:
        """The items for ``part``; ``parts`` are its message's parts (a Responses hosted item
        holds both the call and its result)."""
        item = own(part).get("item")
        if isinstance(item, dict):
            return [item]
        if isinstance(part, HostedResult):
            if part.call_id not in carried(parts):
                self.w.add(
                    "hosted_result_dropped",
                    path,
                    f"Responses has no item for a {part.name or 'hosted'} result from "
                    f"{part.source or 'another protocol'}; left out",
                )
            elif part.source != PROTOCOL:
                self.w.add(
                    "hosted_result_mapped",
                    path,
                    f"{part.source or 'a'} {part.name or 'hosted'} result is carried inside "
                    "its Responses call item; the source's own form is not kept",
                )
            return []  # a carried result rides in its call's item
        result = next(
            (p for p in parts if isinstance(p, HostedResult) and p.call_id == part.id), None
        )
        if part.server is not None or part.name == "web_search":
            self.w.add(
                "hosted_call_mapped",
                path,
                f"{part.source or 'a'} {part.name} hosted call sent as its Responses equivalent "
                f"({'mcp_call' if part.server is not None else 'web_search_call'})",
            )
        if part.server is not None:
            return [self._mcp_call(part, result, path)]
        if part.name == "web_search":
            return [self._web_search(part, result, path)]
        self.w.add(
            "hosted_call_dropped",
            path,
            f"Responses has no hosted {part.name} tool like {part.source or 'the source'}'s; "
            "left out",
        )
        return []

    def _web_search(
        self, call: HostedCall, result: HostedResult | None, path: str
    ) -> dict[str, Any]:
        query = call.arguments.get("query")
        action: dict[str, Any] = {"type": "search"}
        if isinstance(query, str):
            action["query"] = query
        if set(call.arguments) - {"query"}:
            self.w.add(
                "hosted_call_dropped",
                f"{path}.arguments",
                "a web_search_call action carries only the query; other arguments left out",
            )
        return {
            "id": call.id,
            "type": "web_search_call",
            "status": "completed",
            "action": action,
        }

    def _mcp_call(self, call: HostedCall, result: HostedResult | None, path: str) -> dict[str, Any]:
        item: dict[str, Any] = {
            "id": call.id,
            "type": "mcp_call",
            "name": call.name,
            "server_label": call.server,
            "arguments": json.dumps(call.arguments, separators=(",", ":"), ensure_ascii=False),
        }
        if result is not None:
            text = result.text
            if not isinstance(result.content, str) and any(
                isinstance(c, Image) for c in result.content
            ):
                self.w.add(
                    "hosted_result_dropped",
                    path,
                    "an mcp_call output is text; the result's images were left out",
                )
            if result.is_error:
                # An MCP tool's own error, as the connector reports it (a CallToolResult
                # with isError: true).
                item["error"] = {
                    "type": "mcp_tool_execution_error",
                    "content": [{"type": "text", "text": text}],
                }
            else:
                item["output"] = text
        item["status"] = "failed" if result is not None and result.is_error else "completed"
        return item


def carried(parts: list[Any]) -> set[str]:
    """Ids of the hosted calls among ``parts`` that become a Responses item (whose result
    then rides in that item)."""
    return {
        p.id
        for p in parts
        if isinstance(p, HostedCall)
        and (isinstance(own(p).get("item"), dict) or p.server is not None or p.name == "web_search")
    }
