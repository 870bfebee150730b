"""Graph labels made safe for every format we draw: SVG, DOT and Mermaid.

Whatever a person, a model, a tool or an import supplies can end up in a label. One function
(:func:`visible`) makes any text printable (control characters, NUL, ESC, noncharacters and
lone surrogates become visible escapes; empty text says so); one per format then encodes what
that format reads as markup: :func:`svg`, :func:`dot` (labels and tooltips), :func:`mermaid`.
Every label of every drawing goes through one of these three.
"""

from __future__ import annotations

import html
import re

# C0 and C1 controls, DEL, the noncharacters U+FFFE/U+FFFF, lone surrogates, and the bidi
# overrides and isolates that would make a label display in another order than it reads.
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\ufffe\uffff\ud800-\udfff\u202a-\u202e\u2066-\u2069]")

# What is left to escape in ASCII text once tabs and line breaks are spaces: a check of the
# bytes, five times faster than the pattern on a long label (every vendor's column makes its
# labels visible, and a tool name can be a megabyte).
_ASCII_INVISIBLE = bytes([*range(0x20), 0x7F])

EMPTY = "(empty)"


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object) -> str:
    """``text`` with every invisible or unencodable character written as an escape
    (``\\x1b``, ``\\x00``, ``\\ud800``); "(empty)" when there is nothing to show."""
    s = str(text)
    if not s:
        return EMPTY
    # A label is one line: line breaks and tabs are spaces, not escapes.
    s = s.replace("\t", " ").replace("\n", " ").replace("\r", " ")
    if s.isascii():
        ascii_ = s.encode("ascii")
        if len(ascii_.translate(None, _ASCII_INVISIBLE)) == len(ascii_):
            return s
    return _INVISIBLE.sub(_escape, s)


def svg(text: object) -> str:
    """Text for an SVG element's content or a quoted attribute."""
    return html.escape(visible(text), quote=True)


# Graphviz decodes entities first and reads escapes after (``\G`` the graph's name, ``\N``,
# ``\E``, ``\L`` the label, ``\n`` a line break), in HTML-like labels too, so an entity
# alone does not keep a backslash: a doubled one does. A tooltip is unescaped twice. As
# entities, no backslash can meet the closing quote of a DOT string. Brackets, braces and the
# pipe are entities too: graphviz 2.43 fails on an HTML-like label whose text is only "]"
# ("syntax error ... ]</B>"), and braces and pipes are fields in a record label.
_BACKSLASH = "&#92;"
_DOT = str.maketrans({"[": "&#91;", "]": "&#93;", "{": "&#123;", "}": "&#125;", "|": "&#124;"})

# Characters of a tooltip (a refusal's whole message, which quotes a call id of any length).
TOOLTIP_MAX = 2_000


def dot(text: object, tooltip: bool = False) -> str:
    """Text for a DOT HTML-like label or a quoted ``label``: entities for markup, quotes,
    brackets, braces and pipes, and every backslash doubled, so graphviz shows it rather than
    reading an escape. ``tooltip``: for a quoted ``tooltip`` or ``labeltooltip``, at most
    :data:`TOOLTIP_MAX` characters and every backslash written four times (graphviz reads the
    escapes of a tooltip twice)."""
    s = str(text)
    if tooltip and len(s) > TOOLTIP_MAX:
        s = s[: TOOLTIP_MAX - 1] + "…"
    return svg(s).translate(_DOT).replace("\\", _BACKSLASH * (4 if tooltip else 2))


# Mermaid reads its own entity codes (``#lt;``, ``#35;``): HTML entities would be shown as
# typed, and a raw '<' or '>' opens markup, ';' ends a statement and '#' starts an entity;
# brackets, braces and the pipe shape a flowchart's node text.
_MERMAID = {
    "#": "#35;",
    ";": "#59;",
    "<": "#lt;",
    ">": "#gt;",
    '"': "#quot;",
    "&": "#amp;",
    "%": "#37;",
    "{": "#123;",
    "}": "#125;",
    "[": "#91;",
    "]": "#93;",
    "|": "#124;",
}
_MERMAID_RE = re.compile('[#;<>"&%{}\\[\\]|]')


# Characters of one Mermaid message. Mermaid neither wraps nor cuts a message, and refuses to
# draw a diagram whose text passes 50,000 characters (its maxTextSize): one megabyte tool name
# would leave a whole export blank.
MERMAID_MAX = 300


def mermaid(text: object) -> str:
    """Text for a Mermaid message, note or title: one line of at most :data:`MERMAID_MAX`
    characters (an ellipsis says when it was cut), every special character as Mermaid's
    entity code."""
    s = str(text)
    head, rest = s[: MERMAID_MAX * 2], s[MERMAID_MAX * 2 :]
    one_line = " ".join(visible(head).split()) or EMPTY
    if len(one_line) > MERMAID_MAX or (rest and not rest.isspace()):
        one_line = one_line[: MERMAID_MAX - 1].rstrip() + "…"
    return _MERMAID_RE.sub(lambda m: _MERMAID[m.group()], one_line)
