"""Text a page shows as it was typed. A helper of the pages, not a page."""

from __future__ import annotations

import re

# Every ASCII punctuation character: CommonMark lets a backslash make any of them literal, and
# between them they start everything Markdown and Streamlit give a meaning to (links, images,
# HTML, emphasis, code, headings, lists, tables, :color[...] directives, $math$).
_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")


def literal(text: object) -> str:
    """``text`` as Markdown that shows exactly as typed, for anything a person, a model, a
    tool or an import supplied: no link, image, HTML, emphasis or heading can come of it.
    Line breaks stay line breaks."""
    escaped = _PUNCTUATION.sub(lambda m: "\\" + m.group(0), str(text))
    return "  \n".join(line.strip() for line in escaped.splitlines())
