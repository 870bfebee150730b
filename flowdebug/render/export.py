"""SVG and PNG through Graphviz's ``dot`` binary."""

from __future__ import annotations

import shutil
import subprocess

from flowdebug.errors import FlowdebugError


class DotUnavailable(FlowdebugError):
    """Graphviz's ``dot`` is not installed."""


def _dot(source: str, fmt: str, timeout: float = 30.0) -> bytes:
    exe = shutil.which("dot")
    if exe is None:
        raise DotUnavailable(
            "Graphviz's `dot` is not installed (Debian: apt-get install "
            "graphviz); DOT and Mermaid export still work"
        )
    proc = subprocess.run(
        [exe, f"-T{fmt}"], input=source.encode(), capture_output=True, timeout=timeout, check=False
    )
    if proc.returncode != 0:
        raise FlowdebugError(f"dot failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def to_svg(source: str) -> str:
    """The DOT ``source`` drawn as SVG by Graphviz's ``dot`` (DotUnavailable without it)."""
    return _dot(source, "svg").decode()


def to_png(source: str, dpi: int = 144) -> bytes:
    """The DOT ``source`` drawn as PNG at ``dpi`` by Graphviz's ``dot``."""
    return _dot(
        source.replace("digraph sequence {", f"digraph sequence {{\n  graph [dpi={dpi}];", 1), "png"
    )
