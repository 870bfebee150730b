"""Re-run the same turn (issue 30 item 3): send a request of the history again with the current
tools and settings, as a fork, and say what differs between the two requests and the two model
turns, JSON path by JSON path.

- **A request** is the history up to a message that is not the model's (a user message or a
  tool results message), with the system prompt, the tools and the tool choice. The request
  *as it was sent* is taken from the undo history when it is still kept there (the tools as
  declared then); else from the session's exchanges, the bodies that went on the wire (a
  recording's, from ``flowdebug record``, or a live player's), decoded by their vendor's codec;
  otherwise it is the current conversation's head. :attr:`Rerun.sent` says which, so a
  recorded agent's turn can be sent again with tools edited since (issue 32 item 4).
- **The fork** keeps the history up to that message and has the model play the turn again
  (the session's player), and nothing more.
- **The diff** (:func:`json_diff`) ignores order: object keys, and list items (an item equal to
  one on the other side matches it wherever it is; the others pair by their ``name``, ``id`` or
  ``call_id``, else by position).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from flowdebug import protocols
from flowdebug.engine.session.debugger import Session
from flowdebug.errors import FlowdebugError, UsageError
from flowdebug.model import Conversation, Message

KEYS = ("name", "id", "call_id")  # what pairs list items that are not equal
MAX_STEPS = 4  # declaration, perhaps a continuation, then the request


@dataclass(frozen=True)
class Difference:
    """One JSON path whose value differs: ``before`` / ``after`` are None when absent there
    (``absent`` names the side that lacks it)."""

    path: str
    before: Any
    after: Any
    absent: str | None = None


@dataclass(frozen=True)
class Sent:
    """The request ending at a message as it was sent, and where it was found (``source``);
    from an exchange, ``wire`` is its body as the vendor ``protocol`` spells it."""

    request: dict[str, Any]
    source: Literal["undo", "exchange", "history"]
    wire: dict[str, Any] | None = None
    protocol: str | None = None


@dataclass
class Rerun:
    """A request sent again: both requests and both model turns as JSON, and their
    differences. ``fork`` is the new session; ``at`` the message that ends the request."""

    at: int
    fork: Session
    before_request: dict[str, Any]
    after_request: dict[str, Any]
    before_turn: dict[str, Any] | None
    after_turn: dict[str, Any] | None
    sent: Sent  # where ``before_request`` was found
    request_diff: list[Difference] = field(default_factory=list)
    turn_diff: list[Difference] = field(default_factory=list)


def requests(conv: Conversation) -> list[int]:
    """The messages that end a request: every one that is not the model's."""
    return [i for i, m in enumerate(conv.messages) if m.role != "assistant"]


def request_json(conv: Conversation, at: int) -> dict[str, Any]:
    """The request that ends at message ``at``, as JSON (what the player is given)."""
    head = conv.model_copy(update={"messages": conv.messages[: at + 1]})
    return head.model_dump(mode="json", exclude_none=True)


def _turn_json(messages: list[Message], at: int) -> dict[str, Any] | None:
    nxt = messages[at + 1] if at + 1 < len(messages) else None
    if nxt is None or nxt.role != "assistant":
        return None
    return nxt.model_dump(mode="json", exclude_none=True)


def _has_request(exchange: dict[str, Any]) -> bool:
    """Not an MCP message nor an exchange that kept no request."""
    return isinstance(exchange.get("protocol"), str) and isinstance(exchange.get("request"), dict)


def _decoded(exchange: dict[str, Any]) -> tuple[str, dict[str, Any], Conversation] | None:
    protocol, request = exchange.get("protocol"), exchange.get("request")
    if not isinstance(protocol, str) or not isinstance(request, dict):
        return None  # an MCP message, an exchange that kept no request
    try:
        return protocol, request, protocols.get(protocol).decode_request(request).value
    except (FlowdebugError, RecursionError, TypeError, KeyError, ValueError):
        return None


def exchanged_request(session: Session, at: int) -> Sent | None:
    """The request ending at ``at`` as an exchange of the session holds it from the wire,
    decoded: the newest whose history is the session's up to ``at``. A recording's histories
    only grow, so the exchanges whose history is longer are passed over by halving (each
    decode reads a whole history: a scan from the newest decoded a thousand of them on a long
    recording), and the search stops at the first one shorter than that."""
    head = session.conversation.messages[: at + 1]
    kept = [e for e in session.state.exchanges if _has_request(e)]
    decoded: dict[int, tuple[str, dict[str, Any], Conversation] | None] = {}

    def at_index(i: int) -> tuple[str, dict[str, Any], Conversation] | None:
        if i not in decoded:
            decoded[i] = _decoded(kept[i])
        return decoded[i]

    # The last exchange whose history is not longer than the head (one that cannot be read
    # counts as not longer, so the scan below looks at it as the full scan did).
    low, high = 0, len(kept)
    while low < high:
        mid = (low + high) // 2
        found = at_index(mid)
        if found is not None and len(found[2].messages) > len(head):
            high = mid
        else:
            low = mid + 1
    for i in range(low - 1, -1, -1):
        found = at_index(i)
        if found is None:
            continue
        protocol, wire, conv = found
        if conv.messages == head:
            return Sent(request_json(conv, at), "exchange", wire, protocol)
        if len(conv.messages) < len(head):
            break
    return None


def sent_request(session: Session, at: int) -> Sent:
    """The request ending at ``at`` as it was sent: from the undo history, else from the
    session's exchanges, else as the current conversation holds it (module doc)."""
    head = session.conversation.messages[: at + 1]
    for old in reversed(session.undo_stack):
        conv = old.conversation
        if old.next_phase == "request" and conv.messages == head and old.status == "ready":
            return Sent(request_json(conv, at), "undo")
    return exchanged_request(session, at) or Sent(request_json(session.conversation, at), "history")


def rerun(session: Session, at: int) -> Rerun:
    """Fork ``session`` after message ``at`` (a request's last message) with its current tools
    and settings, and have the model play the turn again."""
    messages = session.conversation.messages
    if at not in requests(session.conversation):
        raise UsageError(
            f"message {at} is not the end of a request: pick a user or tool message "
            f"({', '.join(map(str, requests(session.conversation))) or 'none'})"
        )
    sent = sent_request(session, at)
    before_request = sent.request
    fork = session.fork(at)
    fork.state.status, fork.state.status_text = "ready", "re-running the turn"
    after_request: dict[str, Any] | None = None
    for _ in range(MAX_STEPS):
        if fork.state.next_phase == "request":
            after_request = request_json(fork.conversation, at)
        fork.step()
        if len(fork.conversation.messages) > at + 1 or fork.state.status != "ready":
            break
    if after_request is None:
        raise UsageError(f"the fork did not send a request ({fork.state.status_text})")
    before_turn = _turn_json(list(messages), at)
    after_turn = _turn_json(list(fork.conversation.messages), at)
    return Rerun(
        at=at,
        fork=fork,
        before_request=before_request,
        after_request=after_request,
        before_turn=before_turn,
        after_turn=after_turn,
        sent=sent,
        request_diff=json_diff(before_request, after_request),
        turn_diff=json_diff(before_turn, after_turn),
    )


# -- the diff ------------------------------------------------------------------------------------


def json_diff(before: Any, after: Any, path: str = "$") -> list[Difference]:
    """Every JSON path where ``before`` and ``after`` differ, order ignored (module doc)."""
    if before == after:
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[Difference] = []
        for key in sorted(before.keys() | after.keys()):
            where = f"{path}.{key}"
            if key not in after:
                out.append(Difference(where, before[key], None, "after"))
            elif key not in before:
                out.append(Difference(where, None, after[key], "before"))
            else:
                out += json_diff(before[key], after[key], where)
        return out
    if isinstance(before, list) and isinstance(after, list):
        return _list_diff(before, after, path)
    return [Difference(path, before, after)]


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _key(value: Any) -> Any:
    if isinstance(value, dict):
        return next(((k, value[k]) for k in KEYS if isinstance(value.get(k), str)), None)
    return None


def _list_diff(before: list[Any], after: list[Any], path: str) -> list[Difference]:
    left = list(range(len(before)))
    right = list(range(len(after)))
    for i in list(left):  # equal items match wherever they are
        twin = next((j for j in right if _canon(after[j]) == _canon(before[i])), None)
        if twin is not None:
            left.remove(i)
            right.remove(twin)
    pairs: list[tuple[int, int]] = []
    for i in list(left):  # then by name / id
        k = _key(before[i])
        twin = next((j for j in right if k is not None and _key(after[j]) == k), None)
        if twin is not None:
            pairs.append((i, twin))
            left.remove(i)
            right.remove(twin)
    n = min(len(left), len(right))
    pairs += list(zip(left[:n], right[:n], strict=True))  # then by position
    out: list[Difference] = []
    for i, j in pairs:
        out += json_diff(before[i], after[j], f"{path}[{j}]")
    out += [Difference(f"{path}[{i}]", before[i], None, "after") for i in left[n:]]
    out += [Difference(f"{path}[{j}]", None, after[j], "before") for j in right[n:]]
    return out


def diff_rows(diffs: list[Difference]) -> list[dict[str, str]]:
    """The differences as table rows of text (values as compact JSON)."""

    def shown(value: Any, missing: bool) -> str:
        return "(absent)" if missing else _canon(value)[:300]

    return [
        {
            "path": d.path,
            "before": shown(d.before, d.absent == "before"),
            "after": shown(d.after, d.absent == "after"),
        }
        for d in diffs
    ]
