"""What an MCP transcript does to the shape of a history, named before it happens.

MCP carries only tool calls and results, so decoding a transcript rebuilds the history from
them: a run of calls becomes one assistant message and the results after it one tool message
(:class:`flowdebug.protocols.mcp.transcript.Transcript`). Messages with nothing MCP carries
disappear, and everything after them moves. The encoder replays that grouping on the parts
it emits and warns ``messages_regrouped`` for every message whose place, role or parts will
not come back as they were.
"""

from __future__ import annotations

from flowdebug.model import Conversation, ModelResponse, ToolCall
from flowdebug.protocols.base import Warnings

Slot = tuple[int, int]  # (message index, part index) in the conversation being encoded


def regroup(carried: list[tuple[str, Slot]]) -> list[tuple[str, list[Slot]]]:
    """The messages (role, parts) decoding gives for ``carried`` ("call"/"result", slot)."""
    out: list[tuple[str, list[Slot]]] = []
    calls: list[Slot] = []
    results: list[Slot] = []
    for what, slot in carried:
        if what == "call":
            if results:
                out += _flush(calls, results)
                calls, results = [], []
            calls.append(slot)
        else:
            results.append(slot)
    return out + _flush(calls, results)


def _flush(calls: list[Slot], results: list[Slot]) -> list[tuple[str, list[Slot]]]:
    return [("assistant", calls)] * bool(calls) + [("tool", results)] * bool(results)


def warn_regrouped(conv: Conversation, carried: list[tuple[str, Slot]], w: Warnings) -> None:
    """``messages_regrouped`` for what decoding will not give back in place: the whole
    ``messages`` list when the number of messages changes (everything after the first change
    moves), else each message whose role or parts change."""
    back = regroup(carried)
    n = len(conv.messages)
    broken = [i for i, m in enumerate(conv.messages) if not _intact(i, len(m.parts), m.role, back)]
    if not broken and len(back) == n:
        return
    if len(back) != n:
        kept = {i for _, (i, _) in carried}
        empty = [i for i in broken if i not in kept]
        named = ", ".join(f"messages[{i}] ({conv.messages[i].role})" for i in empty[:4])
        more = f" and {len(empty) - 4} more" if len(empty) > 4 else ""
        w.add(
            "messages_regrouped",
            "messages",
            f"MCP rebuilds the history from tool calls and results: {n} messages read back as "
            f"{len(back)}" + (f"; nothing of {named}{more} is carried" if empty else ""),
        )
        return
    for i in broken:
        roles = " and ".join(sorted({back[k][0] for k in _targets(i, back)})) or "nothing"
        w.add(
            "messages_regrouped",
            f"messages[{i}]",
            f"MCP rebuilds the history from tool calls and results: this "
            f"{conv.messages[i].role} message reads back as {roles}",
        )


def _intact(i: int, n_parts: int, role: str, back: list[tuple[str, list[Slot]]]) -> bool:
    # Slots come in emission order, so first, last and count pin the whole list.
    if i >= len(back) or not n_parts:
        return False
    got_role, slots = back[i]
    return (
        got_role == role
        and len(slots) == n_parts
        and slots[0] == (i, 0)
        and slots[-1] == (i, n_parts - 1)
    )


def _targets(i: int, back: list[tuple[str, list[Slot]]]) -> list[int]:
    return [k for k, (_, slots) in enumerate(back) if any(m == i for m, _ in slots)]


def warn_response_shape(resp: ModelResponse, w: Warnings) -> None:
    """Warnings for what ``decode_response`` of MCP's ``tools/call`` requests cannot give
    back: the turn's other parts' places, its role, stop reason and envelope."""
    parts = resp.message.parts
    calls = [j for j, p in enumerate(parts) if isinstance(p, ToolCall)]
    if parts and not calls:
        w.add("messages_regrouped", "message.parts", "MCP carries none of this turn's parts")
    elif calls != list(range(len(calls))):
        w.add(
            "messages_regrouped",
            "message.parts",
            f"MCP carries only the turn's tool calls: they move to parts[0..{len(calls) - 1}]",
        )
    if resp.message.role != "assistant":
        w.add("messages_regrouped", "message.role", "an MCP model turn reads back as assistant")
    stop = "tool_use" if calls else None
    if resp.stop_reason != stop:
        w.add(
            "stop_reason_dropped",
            "stop_reason",
            f"MCP has no stop reason; {resp.stop_reason} reads back as "
            + ("tool_use (the turn has calls)" if stop else "none"),
        )
    if resp.id is not None:
        w.add("response_id_dropped", "id", f"MCP has no response id ({resp.id} is not sent)")
    if resp.model is not None:
        w.add("model_settings_dropped", "model", f"MCP does not talk to a model ({resp.model})")
    if resp.usage:
        w.add("usage_dropped", "usage", f"MCP carries no token usage ({', '.join(resp.usage)})")
    if resp.provider_details:
        w.add(
            "provider_details_dropped",
            "provider_details",
            f"{', '.join(sorted(resp.provider_details))} details of the turn cannot be "
            "carried by MCP",
        )
    if resp.message.provider_details:
        w.add(
            "provider_details_dropped",
            "message.provider_details",
            f"{', '.join(sorted(resp.message.provider_details))} details of the message "
            "cannot be carried by MCP",
        )
