"""Graph labels made safe for every format we draw: SVG, DOT and Mermaid.

Whatever a person, a model, a tool or an import supplies can end up in a label. One function
(:func:`visible`) makes any text printable (control characters, NUL, ESC, noncharacters and
lone surrogates become visible escapes; empty text says so); one per format then encodes what
that format reads as markup.
"""

from __future__ import annotations

import html
import re

# C0 and C1 controls, DEL, the noncharacters U+FFFE/U+FFFF, lone surrogates, and the bidi
# overrides and isolates that would make a label display in another order than it reads.
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\ufffe\uffff\ud800-\udfff\u202a-\u202e\u2066-\u2069]")

EMPTY = "(empty)"
_SPACES = str.maketrans("\t\n\r", "   ")


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
    s = s.translate(_SPACES)
    return _INVISIBLE.sub(_escape, s)


def svg(text: object) -> str:
    """Text for an SVG element's content or a quoted attribute."""
    return html.escape(visible(text), quote=True)


def dot(text: object) -> str:
    """Text for a DOT HTML-like label or a quoted attribute: entities for markup and quotes,
    and for the backslash, which DOT reads as an escape."""
    return svg(text).replace("\\", "&#92;")


# Mermaid reads its own entity codes (``#lt;``, ``#35;``): HTML entities would be shown as
# typed, and a raw '<' or '>' opens markup, ';' ends a statement and '#' starts an entity.
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
}
_MERMAID_RE = re.compile('[#;<>"&%{}]')


def mermaid(text: object) -> str:
    """Text for a Mermaid message, note or title: one line, every special character as
    Mermaid's entity code."""
    one_line = " ".join(visible(text).split()) or EMPTY
    return _MERMAID_RE.sub(lambda m: _MERMAID[m.group()], one_line)
