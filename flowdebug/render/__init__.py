"""Sequence graphs: DOT for graphviz, Mermaid for slides, SVG/PNG through the dot binary."""

from flowdebug.render.dot import Style, to_dot
from flowdebug.render.export import DotUnavailable, to_png, to_svg
from flowdebug.render.mermaid import to_mermaid

__all__ = ["DotUnavailable", "Style", "to_dot", "to_mermaid", "to_png", "to_svg"]
