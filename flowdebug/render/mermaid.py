"""A protocol's sequence as a Mermaid ``sequenceDiagram`` (pastes into slides and docs)."""

from __future__ import annotations

from flowdebug.engine.tracing.trace import LANES, Arrow, Lane
from flowdebug.render import safe

_text = safe.mermaid


def to_mermaid(arrows: list[Arrow], lanes: list[Lane], title: str = "") -> str:
    """The Mermaid text: solid arrows for sends, dashed for replies, errors in red rects."""
    lines = ["sequenceDiagram"]
    if title:
        lines.append(f"    title {_text(title)}")
    for lane in lanes:
        lines.append(f"    participant {lane} as {LANES[lane]}")
    open_batch: tuple[int | None, str] | None = None
    for a in arrows:
        group = (
            "calls"
            if a.kind == "tool_call"
            else "execution"
            if a.kind in ("dispatch", "result")
            else None
        )
        key = (a.batch, group) if a.batch_size > 1 and group else None
        if open_batch and key != open_batch:
            lines.append("    end")
            open_batch = None
        if key and key != open_batch:
            caption = "one response" if group == "calls" else "parallel"
            lines.append(f"    par {caption} ×{a.batch_size}")
            open_batch = key
        reply = a.kind in ("result", "tool_call", "final_answer", "text")
        arrow = "--)" if a.error else ("-->>" if reply else "->>")
        line = f"    {a.source}{arrow}{a.target}: {_text(a.label)}"
        if a.source == a.target:  # the lane acting alone, e.g. the runtime refusing a call
            line = f"    Note over {a.source}: {_text(a.label)}"
        if a.error:
            lines += ["    rect rgb(255, 220, 220)", "    " + line]
            if a.detail:  # a shortened label (a vendor's refusal): its whole text beside it
                lines.append(f"        Note over {a.target},{a.source}: {_text(a.detail)}")
            lines.append("    end")
        else:
            lines.append(line)
    if open_batch:
        lines.append("    end")
    return "\n".join(lines) + "\n"
