"""The sentences of a model's calls and of what the runtime and a person do with them: a turn's
calls (grouped: "the model asks for get_weather twice, in one reply"), what is wrong with one
before it runs, its run, a person's decision, and tools the vendor runs itself."""

from __future__ import annotations

import difflib

from jsonschema.exceptions import SchemaError

from flowdebug.engine.execution.faults import CATALOG
from flowdebug.engine.execution.validation import argument_errors
from flowdebug.engine.tracing.trace import TraceEvent, shorten
from flowdebug.views.story_scene import Scene
from flowdebug.views.story_words import joined, ordinal, quoted, subject, times


def call_problems(e: TraceEvent, scene: Scene, first: bool = False) -> str:
    """What is wrong with a call as the model sent it, before anything runs; ``first``: told
    in the sentence of its whole turn, so it is named."""
    it, its = ("The first call", "The first call's") if first else ("It", "Its")
    call = scene.call(e) or {}
    name = shorten(str(call.get("name") or e.tool or ""), 64)
    declared = scene.declared()
    if declared is not None and name not in declared:
        near = difflib.get_close_matches(name, declared, n=1)
        hint = f" (did it mean {near[0]}?)" if near else ""
        return f" No tool is called {name}: the model got the name wrong{hint}."
    if call.get("raw_arguments") is not None:
        return f" {its} arguments are not valid JSON: the text is cut off or broken."
    if not e.call_id:
        return (
            f" {it} comes without a call id, so its result can only be matched by name and order."
        )
    earlier = [x for x in scene.batch(e) if x.seq < e.seq and x.call_id == e.call_id]
    if earlier:
        return f" {it} reuses the id {e.call_id} of an earlier call in the same reply."
    schema = scene.schema(name)
    if schema is not None and isinstance(call.get("arguments"), dict):
        try:
            errors = argument_errors(schema, call["arguments"])
        except SchemaError:
            errors = []
        if errors:
            return f" {its} arguments break the tool's schema: {errors[0]}."
    return ""


def tool_call_sentence(e: TraceEvent, scene: Scene, grouped: bool) -> str:
    """One call of a model turn; the turn's first call tells the whole turn when ``grouped``."""
    calls = scene.batch(e)
    me = subject(scene.call(e), e.tool)
    if len(calls) == 1:
        return f"The model asks to run {me}." + call_problems(e, scene)
    if e.index or not grouped:
        nth = ordinal(e.index or 0)
        return f"In the same reply, its {nth} call: {me}." + call_problems(e, scene)
    tools = [x.tool or "?" for x in calls]
    abouts = [subject(scene.call(x), None) for x in calls]
    if len(set(tools)) == 1:
        fors = [a.removeprefix(f"{tools[0]} ") for a in abouts]
        what = f"{tools[0]} {times(len(calls))}, in one reply"
        detail = joined(fors) if all(f.startswith("for ") for f in fors) else ""
    else:
        what = f"{len(calls)} tools in one reply"
        detail = joined(abouts)
    problems = call_problems(e, scene, first=True)
    return f"The model asks for {what}{': ' + detail if detail else ''}." + problems


def approval_sentence(e: TraceEvent, scene: Scene) -> str:
    """A person's decision on a call that waited for one."""
    me = subject(scene.call(e), e.tool)
    match e.label.split(" ", 1)[0]:
        case "approve":
            return f"You approve {me}: it may run."
        case "edit":
            return f"You change the arguments of {me} before it runs."
        case "reject":
            return f"You reject {me}: it will not run, and the model gets an error result instead."
    return f"You decide on {me}: {e.label}."


def dispatch_sentence(e: TraceEvent, scene: Scene, grouped: bool) -> str:
    """The runtime running one call; the batch's first run tells them all when ``grouped``."""
    runs = scene.batch(e)
    me = subject(scene.call(e), e.tool)
    where = " on the MCP server (tools/call)" if "mcp" in e.data or scene.uses_mcp() else ""
    if scene.approval(e.call_id) == "edit":
        me += ", with the arguments you edited"
    fault = e.data.get("fault")
    note = ""
    if isinstance(fault, str):
        kind = fault.split("@", 1)[0].split(":", 1)[0]
        info = CATALOG.get(kind)
        if info is not None and info.kind != "slow":
            note = f" An injected fault takes the tool's place: {info.description.lower()}"
        elif info is not None:
            note = " An injected fault slows the tool down."
    if len(runs) == 1:
        return f"The runtime runs {me}{where}." + note
    if runs[0].seq != e.seq or not grouped:
        return f"At the same time, the runtime runs {me}{where}." + note
    everyone = joined([subject(scene.call(x), x.tool) for x in runs])
    return f"The runtime runs the {len(runs)} calls at the same time{where}: {everyone}." + note


def hosted_sentence(e: TraceEvent) -> str:
    """A tool the vendor runs inside the model's turn, or what it answered."""
    hosted = e.data.get("hosted")
    name = str(hosted.get("name")) if isinstance(hosted, dict) else (e.tool or "a tool")
    if e.kind == "hosted_call":
        return (
            f"The model runs {name} itself, on the vendor's side ({e.label}): the runtime "
            "never sees it run."
        )
    if e.error:
        return f"The vendor's {name} fails inside the same reply: {quoted(e.label)}."
    return f"The vendor's {name} answers inside the same reply: {quoted(e.label)}."
