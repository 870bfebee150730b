"""The sentence of a tool result: what the tool (or the runtime, refusing the call) answered,
and what became of the result afterwards (edited, dropped, sent back under a wrong id)."""

from __future__ import annotations

import difflib

from flowdebug.engine.tracing.trace import TraceEvent, shorten
from flowdebug.model import ToolResult
from flowdebug.views.story_scene import Scene
from flowdebug.views.story_words import first_line, plain, quoted, seconds, subject, timeout_after

# Longer than this, a result is "long" rather than read out.
LONG = 2000


def _result_of(e: TraceEvent) -> ToolResult | None:
    data = e.data.get("result")
    if not isinstance(data, dict):
        return None
    try:
        return ToolResult.model_validate(data)
    except ValueError:
        return None


def result_sentence(e: TraceEvent, scene: Scene) -> str:
    """What happened to one call, told from the runtime's record when there is one (so a result
    edited since is told as the tool gave it, then as the history now holds it)."""
    run = scene.execution(e)
    got = run.result if run is not None else _result_of(e)
    me = subject(scene.call(e), e.tool)
    if got is None:
        return f"{me} answers: {quoted(e.label)}."
    said = _outcome(e, got, me, scene, run.decision if run is not None else None)
    duration = run.duration_ms if run is not None else e.duration_ms
    if not got.is_error and duration is not None and got.text and len(got.text) <= LONG:
        said = said.replace(" answers:", f" answers in {seconds(duration)}:", 1)
    if run is not None and run.fault:
        kind = run.fault.split("@", 1)[0].split(":", 1)[0].replace("_", " ")
        said += f" (An injected fault: {kind}.)"
    return said + _afterwards(e, got, scene)


def _outcome(e: TraceEvent, got: ToolResult, me: str, scene: Scene, decision: str | None) -> str:
    text = got.text
    tool = shorten(got.name or e.tool or "the tool", 64)
    if not got.is_error:
        if not text.strip():
            return f"{me} succeeds but returns nothing: an empty result."
        if len(text) > LONG:
            return (
                f"{me} returns a long result: {len(text):,} characters, starting "
                f"{quoted(text, 40)}."
            )
        return f"{me} answers: {plain(text)}."
    error = f" The model gets an error result saying {quoted(first_line(text), 100)}."
    match got.error_type:
        case "timeout":
            after = timeout_after(text, e.duration_ms)
            wait = f"after {after} " if after else ""
            return f"{me} never answers: {wait}the runtime sends an error result instead."
        case "exception":
            return (
                f"{me} crashes ({first_line(text)}): the runtime turns the crash into an "
                "error result for the model."
            )
        case "permission" if decision == "reject":
            return f"{me} does not run: you rejected it. The model gets an error result instead."
        case "permission":
            return f"{me} is refused: {first_line(text)}. The model gets that as an error result."
        case "rate_limited":
            return f"{me} is turned away: {first_line(text)}. The model gets an error result."
        case "unknown_tool":
            declared = scene.declared() or []
            near = difflib.get_close_matches(tool, declared, n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            return (
                f"There is no tool called {tool}{hint}, so the runtime runs nothing and sends "
                "the model an error result instead."
            )
        case "validation":
            return (
                f"The runtime refuses to run {me}: its arguments break the tool's schema "
                f"({first_line(text)}). The model gets an error result saying so."
            )
        case "malformed_arguments":
            return (
                f"The runtime cannot read {tool}'s arguments (they are not valid JSON), so it "
                "runs nothing and sends the model an error result."
            )
        case "duplicate_call_id":
            return (
                f"The runtime does not run {me}: its id {e.call_id} is taken by another call "
                "of the same reply, so its result could not be matched. It sends an error "
                "result instead."
            )
        case "invalid_schema":
            return (
                f"{tool}'s own schema is broken, so the runtime cannot check the arguments; it "
                "runs nothing and sends an error result."
            )
        case "tool_error":
            return f"{me} reports an error: {quoted(first_line(text), 100)}. The model gets it."
        case "protocol":
            return f"The MCP server answers {me} with a protocol error." + error
        case "mcp_crash":
            return f"The MCP server dies during {me}." + error
        case "mcp_connect":
            return f"The runtime cannot reach the MCP server for {me}." + error
    kind = f" ({got.error_type})" if got.error_type else ""
    return f"{me} fails{kind}." + error


def _afterwards(e: TraceEvent, got: ToolResult, scene: Scene) -> str:
    """What the history holds for this call now, when it is not what the runtime made."""
    if scene.state is None or scene.execution(e) is None:
        return ""
    now = scene.in_history(e)
    if now is None:
        stray = scene.stray_with(got.text)
        if stray is not None:
            return (
                f" But it goes back under the id {stray.call_id}, which matches no call: the "
                "call is left without its result."
            )
        return (
            " But this result is dropped: it never goes into the history, so the model never "
            "sees it."
        )
    if now.text != got.text or now.is_error != got.is_error:
        what = "an error" if now.is_error else "a success"
        return f" You then edited it into {what}: the model sees {plain(now.text)} instead."
    return ""
