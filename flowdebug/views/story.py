"""The cycle told in plain words: one sentence per trace event, and each phase as the story of
what happened in this session, with every vendor's JSON fields kept one click away.

:func:`caption` tells one event for a novice (no JSON field names: "the model asks for
get_weather twice, in one reply"); :func:`vendor_note` says how one vendor carries it, in that
vendor's own terms from its facts; :func:`phase_story` tells a phase; :func:`rejection_sentence`
says why a vendor refuses the next request. Pages render these as text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from flowdebug import protocols
from flowdebug.engine.session.session_state import SessionState
from flowdebug.engine.tracing.trace import (
    PHASES,
    Rejection,
    TraceEvent,
    rejections,
    sequence,
    shorten,
)
from flowdebug.render import safe
from flowdebug.views.story_calls import (
    approval_sentence,
    call_problems,
    dispatch_sentence,
    hosted_sentence,
    tool_call_sentence,
)
from flowdebug.views.story_results import result_sentence
from flowdebug.views.story_scene import Scene
from flowdebug.views.story_words import count, joined, quoted

# What each phase is for, said once; the story then tells how it went this time.
MEANING = {
    "declaration": "The runtime sends the conversation and every tool's name, description "
    "and JSON Schema to the model.",
    "request": "The model answers: zero or more tool calls (a name, an id and arguments), or "
    "a final answer that ends the cycle.",
    "execution": "The runtime checks each call's arguments, runs the tools (a turn's calls at "
    "the same time), applies timeouts and faults, and makes one result per call: errors are "
    "results too.",
    "continuation": "The results, each paired to its call by id, go into the history and the "
    "model is called again.",
    "answer": "The model answers without a tool call: its final answer ends the cycle.",
}

# A vendor's refusal in plain words, by the linter's finding code.
RULES = {
    "missing_result": "a call has no result right after it, and every call needs one",
    "results_not_adjacent": "the results must come right after the calls, with nothing between",
    "text_before_results": "the message after the calls must begin with their results, not text",
    "result_without_call": "a result answers no call: its id matches none",
    "duplicate_result": "a call has more than one result",
    "duplicate_call_id": "two calls share one id, so a result cannot say which call it answers",
    "unknown_tool": "the tool called is not one the server offers",
}


def _int(value: object, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _short(name: str) -> str:
    return protocols.facts(name).short


# -- one event -------------------------------------------------------------------------------


def caption(
    event: TraceEvent,
    events: Sequence[TraceEvent],
    state: SessionState | None = None,
    rejected: Mapping[str, Rejection] | None = None,
) -> str:
    """One sentence (or two) in plain words for ``event``, told from what happened.

    ``events`` is the trace it belongs to; ``state`` (the session) adds what the trace alone
    does not say: what the runtime really did with a call (a result edited or dropped since),
    the tools' schemas. ``rejected``: the vendors' refusals (see
    :func:`flowdebug.engine.tracing.trace.rejections`), named on the request they refuse.
    """
    return _caption(event, Scene(events, state, dict(rejected or {})))


def _caption(e: TraceEvent, scene: Scene, grouped: bool = True) -> str:
    text = safe.visible(_told(e, scene, grouped))
    # A quote that ends its own sentence takes no second full stop.
    for mark in ".?!…":
        text = text.replace(f"{mark}”.", f"{mark}”")
    return text


def _told(e: TraceEvent, scene: Scene, grouped: bool) -> str:
    match e.kind:
        case "user_message":
            return f"The user asks: {quoted(e.label)}."
        case "discover":
            n = count(_int(e.data.get("n_tools")), "tool")
            if scene.uses_mcp():
                return f"The runtime asks the MCP server which tools it offers (tools/list): {n}."
            return f"The runtime lists the tools it will offer: {n}."
        case "declare":
            return _declare(e, scene)
        case "text":
            return f"Along with its calls, the model writes: {quoted(e.label)}."
        case "tool_call":
            return tool_call_sentence(e, scene, grouped)
        case "final_answer":
            return f"The model answers in words, without asking for a tool: {quoted(e.label)}."
        case "answer":
            return "The runtime hands the answer to the user: the cycle is over."
        case "approval":
            return approval_sentence(e, scene)
        case "dispatch":
            return dispatch_sentence(e, scene, grouped)
        case "result":
            return result_sentence(e, scene)
        case "continuation":
            return _continuation(e, scene)
        case "halt":
            if e.error_type == "round_cap":
                return (
                    f"The runtime stops the loop: {e.label}. The model kept asking for tools, "
                    "so the cycle ends without an answer."
                )
            if e.error_type == "provider_error":
                status = e.data.get("status")
                said = shorten(str(e.data.get("message") or ""), 160)
                head = f"answers HTTP {status}" if status else "does not answer"
                return (
                    f"The vendor's API {head} instead of a turn: “{said}”. The cycle halts "
                    "here; Undo and step again to retry."
                )
            return f"The runtime stops the loop: {e.label}."
        case "hosted_call" | "hosted_result":
            return hosted_sentence(e)
    return e.label


def _tools_list(names: Sequence[str], n: int = 4) -> str:
    if len(names) <= n:
        return joined(list(names))
    return f"{', '.join(names[:n])} and {len(names) - n} more"


def _declare(e: TraceEvent, scene: Scene) -> str:
    tools = e.data.get("tools")
    names = [shorten(str(t), 64) for t in tools] if isinstance(tools, list) else []
    n = _int(e.data.get("n_tools"), len(names))
    if not n:
        offer = "no tools to call"
    elif len(names) > 4:
        offer = f"the {n} tools it may call: {_tools_list(names)}"
    else:
        offer = f"the {'tool' if n == 1 else 'tools'} it may call: {_tools_list(names)}"
    return f"The runtime sends the question to the model, with {offer}." + _refusals(e, scene)


def _continuation(e: TraceEvent, scene: Scene) -> str:
    n = _int(e.data.get("n_results"))
    calls, back, text_first = scene.sent_back(e)
    made = len(calls) or n
    what = "the result" if n == 1 else f"the {n} results"
    if n != made:
        what = count(n, "result")
    said = f"The runtime sends {what} back to the model, with the whole conversation so far, "
    said += "and calls it again."
    if scene.state is not None and made > n:
        said += f" {count(made - n, 'result')} of {made} went missing."
    if text_first:
        said += " A user message now comes before the results."
    present = [c for c in calls if c in back]
    if present and [c for c in back if c in present] != present:
        said += " The results go back in a different order than the calls."
    return said + _refusals(e, scene)


def _refusals(e: TraceEvent, scene: Scene) -> str:
    """The vendors refusing the request ``e`` sends, and the others going on."""
    refusing = scene.refusing(e)
    if not refusing:
        return ""
    who = joined([_short(n) for n in refusing])
    verb = "refuses" if len(refusing) == 1 else "refuse"
    stops = "its cycle stops" if len(refusing) == 1 else "their cycles stop"
    return f" {who} {verb} this request (HTTP 400): {stops} here."


# -- how one vendor carries it ----------------------------------------------------------------


def vendor_note(event: TraceEvent, protocol: str) -> str | None:
    """How ``protocol`` carries ``event``, in its own terms (``tool_use toolu_1 get_weather``,
    ``tool_calls[0]``, ``functionCall``…); None when it has nothing of its own to say: the
    event is the runtime's alone, or not that protocol's part."""
    facts = protocols.facts(protocol)
    if facts.kind == "tool" and "model" in (event.source, event.target):
        return None  # MCP runs between the runtime and a tool server: the model is not its part
    arrows = sequence([event], protocol)
    if not arrows or arrows[0].label == event.label:
        return None
    return f"{facts.short}: {arrows[0].label}"


# -- a vendor refusing ------------------------------------------------------------------------


def rejection_sentence(protocol: str, rejection: Rejection, going_on: Sequence[str] = ()) -> str:
    """Why ``protocol`` refuses the next request, with its own message, and who goes on."""
    rule = RULES.get(rejection.code, "the history breaks one of its rules")
    text = (
        f"{_short(protocol)} refuses the next request: {rule}. It answers HTTP "
        f"{rejection.status}: {quoted(rejection.message, 240)} Its cycle stops here"
    )
    if going_on:
        others = joined([_short(n) for n in going_on])
        verb = "goes" if len(going_on) == 1 else "go"
        return f"{text}; {others} {verb} on."
    return text + "."


# -- one phase ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Story:
    """One phase as it happened in this session.

    ``sentences`` tell its events in order (empty when the phase has not run yet);
    ``meaning`` says what the phase is for; ``rejections`` the vendors that refuse its request
    (or stopped before it); ``fields`` per vendor the JSON fields that carry the phase
    (Markdown from the vendor's facts) and ``notes`` each of this phase's events in that
    vendor's own terms: what a person opens "one click away".
    """

    phase: str
    meaning: str
    sentences: tuple[str, ...] = ()
    rejections: tuple[str, ...] = ()
    fields: dict[str, str] = field(default_factory=dict)
    notes: dict[str, tuple[str, ...]] = field(default_factory=dict)


def phase_events(events: Sequence[TraceEvent], phase: str) -> list[TraceEvent]:
    """The events of the last step that ran ``phase``."""
    last = next((e for e in reversed(events) if e.phase == phase), None)
    if last is None:
        return []
    return [e for e in events if e.step == last.step and e.phase == phase]


def phase_story(
    state: SessionState,
    phase: str,
    names: Sequence[str],
    rejected: Mapping[str, Rejection] | None = None,
) -> Story:
    """The story of ``phase`` as it last ran in ``state``, for the vendors ``names``.

    ``rejected`` (the vendors' refusals) is computed from the history when not given; pages
    that already have it (the graphs do) pass it to lint once.
    """
    if phase not in PHASES:
        raise ValueError(f"no phase {phase!r}; phases: {', '.join(PHASES)}")
    if rejected is None:
        rejected = rejections(state.conversation, state.events, names)
    scene = Scene(state.events, state, dict(rejected))
    mine = phase_events(state.events, phase)
    final = phase == "request" and any(e.kind == "final_answer" for e in mine)
    key = "answer" if final else phase
    sentences = [_caption(e, scene) for e in mine if _tells(e, scene)]
    fields = {n: str(getattr(protocols.facts(n).fields, key)) for n in names}
    # A vendor's notes stop at the request it refuses: its cycle went no further.
    notes = {
        n: tuple(
            note
            for e in mine
            if (n not in rejected or e.seq <= rejected[n].seq)
            and (note := vendor_note(e, n)) is not None
        )
        for n in names
    }
    return Story(
        phase,
        MEANING[key],
        tuple(sentences),
        tuple(_phase_rejections(state.events, mine, names, rejected)),
        fields,
        notes,
    )


def _tells(e: TraceEvent, scene: Scene) -> bool:
    """Whether a story tells ``e`` in its own sentence: the first call or run of a parallel
    batch speaks for the rest, unless one of the rest has a problem of its own."""
    if e.kind == "tool_call" and e.index:
        return bool(call_problems(e, scene))
    if e.kind == "dispatch":
        runs = scene.batch(e)
        return runs[0].seq == e.seq or (scene.approval(e.call_id) == "edit")
    return True


def phase_refused(
    events: Sequence[TraceEvent], phase: str, rejected: Mapping[str, Rejection]
) -> bool:
    """Whether the story of ``phase`` tells a refusal (a vendor refused a request sent by the
    phase's last step or before it), without telling the story."""
    if not rejected:  # nothing refused: no need to find the phase's events in a long trace
        return False
    mine = phase_events(events, phase)
    return bool(mine) and any(r.seq <= mine[-1].seq for r in rejected.values())


def _phase_rejections(
    events: Sequence[TraceEvent],
    mine: Sequence[TraceEvent],
    names: Sequence[str],
    rejected: Mapping[str, Rejection],
) -> list[str]:
    if not mine:
        return []
    first, last = mine[0].seq, mine[-1].seq
    out = []
    here = [n for n in names if n in rejected and first <= rejected[n].seq <= last]
    going = [n for n in names if n not in rejected or rejected[n].seq > last]
    for n in here:
        out.append(rejection_sentence(n, rejected[n], going))
    earlier: dict[int, list[str]] = {}
    for n in names:
        r = rejected.get(n)
        if r is not None and r.seq < first:
            earlier.setdefault(r.seq, []).append(n)
    steps = {e.seq: e.step for e in events}
    for seq, who in sorted(earlier.items()):
        they = "it" if len(who) == 1 else "each"
        rule = RULES.get(rejected[who[0]].code, "its rules")
        out.append(
            f"{joined([_short(n) for n in who])} stopped earlier, at step {steps.get(seq, '?')}: "
            f"{they} refused the request ({rule})."
        )
    return out


__all__ = [
    "MEANING",
    "Story",
    "caption",
    "phase_events",
    "phase_story",
    "rejection_sentence",
    "vendor_note",
]
