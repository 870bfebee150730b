"""The teaching picture as a slide: SVG and PNG drawn on the server from the same row table
the page's component draws (:meth:`flowdebug.views.teaching.Picture.data`, plain JSON).

One layout makes both: every text is placed as a box whose width is known before it is drawn
(a monospaced face, 0.6 em a character, measured a little wider), wrapped to the width of its
column, and each row is as tall as its tallest cell, so no two texts overlap whatever the
labels hold. Text is written as text (escaped, invisible characters shown), never as markup.
"""

from __future__ import annotations

import html
import io
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flowdebug.render.safe import visible

SIZE = 18  # px: read from the back of a room
LINE = 24
EM = 0.6  # a monospaced character's advance, in em
SLACK = 1.04  # measured a little wide: fonts differ by a few per cent
WIDTH = 1600
LANES_W = 440
PAD = 8
ARROW = 22
FONT = "DejaVu Sans Mono, Menlo, Consolas, monospace"
MONO_FILES = (  # for the PNG; Pillow's own face when none is installed
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationMono-Regular.ttf",
    "/usr/share/fonts/truetype/liberation2/LiberationMono-Regular.ttf",
)
COLORS = {"": "#1a1a1a", "term": "#0b3d91", "value": "#1a1a1a", "error": "#b00020",
          "note": "#4a4a4a", "band": "#20304a", "line": "#2b3a55", "life": "#9aa3b0",
          "rule": "#c8c8c8", "lit": "#fff1a8", "bandbg": "#eef1f6", "redbg": "#fbeaec"}  # fmt: skip


@dataclass(frozen=True)
class Text:
    x: float  # the left edge
    y: float  # the baseline
    text: str
    color: str
    bold: bool = False

    @property
    def width(self) -> float:
        return text_width(self.text)


@dataclass(frozen=True)
class Shape:
    kind: str  # line | rect | poly
    points: tuple[float, ...]
    color: str
    width: float = 0


@dataclass
class Slide:
    width: float
    height: float = 0
    shapes: list[Shape] = field(default_factory=list)
    texts: list[Text] = field(default_factory=list)


def text_width(text: str) -> float:
    return len(text) * EM * SIZE * SLACK


def wrap(text: str, width: float) -> list[str]:
    """``text`` in lines no wider than ``width``: broken at spaces; a word too long for the
    line after ``_ . / , :`` and between camelCase words, and only then anywhere."""
    most = max(1, int(width // (EM * SIZE * SLACK)))
    # Invisible characters as their escapes, before measuring: the escape is what is drawn.
    text = " ".join(visible(text).split()) if text.strip() else ""
    pieces: list[tuple[str, bool]] = []  # (piece, whether a space comes before it)
    for word in text.split(" "):
        parts = [word] if len(word) <= most else _SOFT.split(word)
        cut = [p[i : i + most] for p in parts for i in range(0, len(p), most)] or [""]
        pieces += [(piece, j == 0) for j, piece in enumerate(cut)]
    lines: list[str] = []
    line = ""
    for piece, spaced in pieces:
        sep = " " if spaced and line else ""
        if line and len(line) + len(sep) + len(piece) > most:
            lines.append(line)
            line = piece
        else:
            line += sep + piece
    lines.append(line)
    return lines


_SOFT = re.compile(r"(?<=[_./,:·])|(?<=[a-z])(?=[A-Z])")


def _cell_lines(cell: dict[str, Any], width: float) -> list[tuple[str, str]]:
    """A cell's lines wrapped to ``width``, each with its colour: red for an error mark."""
    out = []
    for spans in cell["lines"]:
        text = "".join(str(t) for t, _ in spans)
        roles = [r for _, r in spans]
        color = COLORS["error"] if "error" in roles else COLORS[roles[0] if roles else ""]
        out += [(line, color) for line in wrap(text, width)]
    return out


def layout(data: dict[str, Any]) -> Slide:
    """Where every text and shape of the picture goes (the table of ``Picture.data``)."""
    vendors = data["vendors"]
    lanes = data["lanes"]
    n = max(1, len(vendors))
    col = (WIDTH - LANES_W) / n
    lane_x = [LANES_W * (i + 0.5) / len(lanes) for i in range(len(lanes))]
    lane_w = LANES_W / len(lanes)
    slide = Slide(WIDTH)
    y = PAD

    def centred(text: str, middle: float, top: float, width: float, color: str, bold=False):
        lines = wrap(text, width - 4)
        for i, line in enumerate(lines):
            x = middle - text_width(line) / 2
            slide.texts.append(Text(x, top + SIZE + i * LINE, line, color, bold))
        return len(lines)

    # The header: the lanes' and the vendors' names.
    tall = max(
        [centred(name, lane_x[i], y, lane_w, COLORS[""], True) for i, (_, name) in enumerate(lanes)]
        + [
            centred(short, LANES_W + col * (j + 0.5), y, col, COLORS[""], True)
            for j, (_, short) in enumerate(vendors)
        ]
    )
    y += tall * LINE + PAD
    slide.shapes.append(Shape("line", (0, y, WIDTH, y), COLORS["rule"], 2))
    top = y
    band = None
    lit = set(data["lit"])
    labels: list[Shape] = []
    arrows: list[Shape] = []
    for row in data["rows"]:
        if row["band"] != band:
            band = row["band"]
            slide.shapes.append(Shape("rect", (0, y, WIDTH, LINE + 4), COLORS["bandbg"]))
            name = band.upper()
            labels.append(Shape("rect", (PAD - 2, y + 2, text_width(name) + 4, LINE),
                                COLORS["bandbg"]))  # fmt: skip
            slide.texts.append(Text(PAD, y + SIZE + 1, name, COLORS["band"], True))
            y += LINE + 4
        label = wrap(row["label"], LANES_W - 2 * PAD)
        cells = [_cell_lines(c, col - 2 * PAD) if c else [] for c in row["cells"]]
        height = max([len(label) * LINE + ARROW] + [len(c) * LINE for c in cells]) + PAD
        if row["seq"] in lit:
            slide.shapes.append(Shape("rect", (0, y, WIDTH, height), COLORS["lit"]))
        for j, c in enumerate(row["cells"]):
            if c and c.get("error"):
                slide.shapes.append(Shape("rect", (LANES_W + col * j, y, col, height),
                                          COLORS["redbg"]))  # fmt: skip
        red = COLORS["error"] if row["error"] else COLORS[""]
        backing = COLORS["lit"] if row["seq"] in lit else "#ffffff"
        for i, line in enumerate(label):
            x = LANES_W / 2 - text_width(line) / 2
            # A backing, so that the lifelines do not cross the label's words.
            labels.append(Shape("rect", (x - 2, y + i * LINE + 2, text_width(line) + 4, LINE),
                                backing))  # fmt: skip
            slide.texts.append(Text(x, y + SIZE + i * LINE, line, red, row["seq"] in lit))
        _arrow(arrows, row, lanes, lane_x, y + len(label) * LINE + ARROW / 2)
        for j, lines in enumerate(cells):
            for i, (line, color) in enumerate(lines):
                slide.texts.append(Text(LANES_W + col * j + PAD, y + SIZE + i * LINE, line, color))
        y += height
        slide.shapes.append(Shape("line", (0, y, WIDTH, y), COLORS["rule"], 1))
    # The lifelines over the rows' backgrounds, the labels' backings over the lifelines.
    slide.shapes += [Shape("line", (x, top, x, y), COLORS["life"], 2) for x in lane_x]
    slide.shapes += labels + arrows
    for j in range(n):
        x = LANES_W + col * j
        slide.shapes.append(Shape("line", (x, 0, x, y), COLORS["rule"], 1))
    slide.height = y + PAD
    return slide


def _arrow(out: list[Shape], row: dict[str, Any], lanes: Sequence[Sequence[str]],
           lane_x: list[float], y: float) -> None:  # fmt: skip
    keys = [k for k, _ in lanes]

    def at(lane: str) -> int:
        lane = "tool" if lane == "mcp" else lane
        return keys.index(lane) if lane in keys else 0

    a, b = at(row["from"]), at(row["to"])
    color = COLORS["error"] if row["error"] else COLORS["line"]
    if a == b:
        x = lane_x[a]
        out.append(Shape("rect", (x - 6, y - 6, 12, 12), color))
        return
    x1, x2 = lane_x[a], lane_x[b]
    out.append(Shape("line", (x1, y, x2, y), color, 3))
    back = -12 if x2 > x1 else 12
    out.append(Shape("poly", (x2, y, x2 + back, y - 7, x2 + back, y + 7), color))


def to_svg(data: dict[str, Any]) -> str:
    """The picture as an SVG document."""
    s = layout(data)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{s.width:.0f}" height="{s.height:.0f}" '
        f'viewBox="0 0 {s.width:.0f} {s.height:.0f}" font-family="{FONT}" font-size="{SIZE}">',
        f'<rect x="0" y="0" width="{s.width:.0f}" height="{s.height:.0f}" fill="#ffffff"/>',
    ]
    for sh in s.shapes:
        p = sh.points
        if sh.kind == "line":
            out.append(f'<line x1="{p[0]:.1f}" y1="{p[1]:.1f}" x2="{p[2]:.1f}" y2="{p[3]:.1f}" '
                       f'stroke="{sh.color}" stroke-width="{sh.width}"/>')  # fmt: skip
        elif sh.kind == "rect":
            out.append(f'<rect x="{p[0]:.1f}" y="{p[1]:.1f}" width="{p[2]:.1f}" '
                       f'height="{p[3]:.1f}" fill="{sh.color}"/>')  # fmt: skip
        else:
            pts = " ".join(f"{p[i]:.1f},{p[i + 1]:.1f}" for i in range(0, len(p), 2))
            out.append(f'<polygon points="{pts}" fill="{sh.color}"/>')
    for t in s.texts:
        weight = ' font-weight="bold"' if t.bold else ""
        out.append(f'<text x="{t.x:.1f}" y="{t.y:.1f}" fill="{t.color}"{weight} '
                   f'xml:space="preserve">{html.escape(t.text)}</text>')  # fmt: skip
    out.append("</svg>")
    return "\n".join(out)


def to_png(data: dict[str, Any], scale: float = 1.0) -> bytes:
    """The picture as a PNG, drawn by Pillow from the same layout as :func:`to_svg`."""
    from PIL import Image, ImageDraw, ImageFont

    s = layout(data)
    img = Image.new("RGB", (math.ceil(s.width * scale), math.ceil(s.height * scale)), "white")
    draw = ImageDraw.Draw(img)
    face = next((f for f in MONO_FILES if Path(f).exists()), None)
    size = round(SIZE * scale)
    font = ImageFont.truetype(face, size) if face else ImageFont.load_default(size=size)
    for sh in s.shapes:
        p = [v * scale for v in sh.points]
        if sh.kind == "line":
            draw.line(p, fill=sh.color, width=max(1, round(sh.width * scale)))
        elif sh.kind == "rect":
            draw.rectangle((p[0], p[1], p[0] + p[2], p[1] + p[3]), fill=sh.color)
        else:
            draw.polygon(p, fill=sh.color)
    for t in s.texts:
        width = 1 if t.bold else 0  # a stroke of the text's own colour makes it bold
        draw.text((t.x * scale, t.y * scale), t.text, fill=t.color, font=font, anchor="ls",
                  stroke_width=width, stroke_fill=t.color)  # fmt: skip
    buf = io.BytesIO()
    img.save(buf, "PNG", optimize=True)
    return buf.getvalue()
