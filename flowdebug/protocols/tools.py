"""Bare tool declarations recognised in any vendor's spelling and wrapped in the smallest
request of that vendor, so its codec reads them (pasted tools, ``flowdebug lint`` on a list).

Each vendor declares its spellings in its facts (:class:`~flowdebug.protocols.facts.BareTool`);
this module only asks them, in registry order."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from flowdebug.protocols.base import PROTOCOLS
from flowdebug.protocols.facts import BareTool


@dataclass(frozen=True)
class Envelope:
    """Bare tool declarations wrapped in the smallest request ``protocol`` decodes.

    ``inner`` is where the declarations sit in ``request`` and ``outer`` where they sat in
    what was pasted, so a decoder's JSON path can be told in the person's terms.
    """

    protocol: str
    request: dict[str, Any]
    shape: BareTool
    inner: str
    outer: str = "$"

    def path(self, codec_path: str) -> str:
        """``codec_path`` (into ``request``) as a path into the pasted payload."""
        rest = codec_path[len(self.inner) :]
        if codec_path.startswith(self.inner) and (not rest or rest[0] in ".["):
            return self.outer + rest
        return codec_path


def bare_tools() -> Iterator[tuple[str, BareTool]]:
    """Every vendor's bare tool spellings, with the vendor's name, in registry order."""
    for name, codec in PROTOCOLS.items():
        for bare in codec.facts.bare_tools:
            yield name, bare


def tool_shape(tool: Any) -> tuple[str, BareTool] | None:
    """Which vendor spells this one declaration so, and which of its spellings it is; None
    when no vendor's recogniser takes it."""
    if not isinstance(tool, dict):
        return None
    return next(((n, b) for n, b in bare_tools() if b.recognise(tool)), None)


def tool_envelope(payload: Any, outer: str = "$") -> Envelope | None:
    """Bare tool declarations (one, or a list) in some vendor's spelling, wrapped in the
    smallest request of that vendor, so that its codec reads them; None for anything else."""
    many = isinstance(payload, list)
    tools = payload if many else [payload]
    if not tools or not all(isinstance(t, dict) for t in tools):
        return None
    shapes = {tool_shape(t) for t in tools}
    if len(shapes) != 1 or None in shapes:
        return None
    found = shapes.pop()
    assert found is not None
    protocol, bare = found
    at = bare.inner + ("" if many else "[0]")
    return Envelope(protocol, bare.request(tools), bare, at, outer)
