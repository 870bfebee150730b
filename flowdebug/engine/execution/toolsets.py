"""Tool sets by name, from the entry-point group ``flowdebug.toolsets``.

A package offers a tool set by declaring it in its ``pyproject.toml``::

    [project.entry-points."flowdebug.toolsets"]
    inventory = "my_tools.inventory:TOOLSET"

(the name that scenarios list in ``toolsets``, and a
:class:`~flowdebug.engine.execution.handlers.Toolset`). The sample tools join the same way, so the
library never imports them: tool sets plug in from above. On a shared server the python
handlers of the registered tool sets are the only ones a person may name
(:func:`flowdebug.engine.execution.handlers.handler_refusal`): installing a package is the host's
decision, typing ``module:function`` is not.

This module sits below :mod:`flowdebug.engine.execution.handlers` (which asks it what is trusted),
so it
reads a loaded tool set by its fields (``entries``, each ``handler``) rather than its type;
``Toolset.registered`` checks the type.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from flowdebug.errors import UsageError

GROUP = "flowdebug.toolsets"


@cache
def _entries() -> dict[str, EntryPoint]:
    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group=GROUP):
        if ep.name in found and found[ep.name].value != ep.value:
            raise UsageError(
                f"two packages offer the tool set {ep.name!r} ({found[ep.name].value} and "
                f"{ep.value}); uninstall one of them"
            )
        found[ep.name] = ep
    return found


@cache
def _load(name: str) -> Any:
    ep = _entries()[name]
    try:
        return ep.load()
    except Exception as exc:
        raise UsageError(f"the tool set {name!r} ({ep.value}) could not be loaded: {exc}") from exc


def names() -> list[str]:
    """The names of the registered tool sets, without loading them."""
    return list(_entries())


def load(name: str) -> Any:
    """What the entry point ``name`` names (a ``Toolset``), imported on first use."""
    if name not in _entries():
        raise UsageError(f"unknown tool set {name!r}; choose from: {', '.join(names())}")
    return _load(name)


def trusted_functions() -> frozenset[str]:
    """The ``module:function`` of every python handler of a registered tool set that loads
    (one that does not is trusted with nothing; asking for it by name says why)."""
    out: set[str] = set()
    for name in names():
        try:
            toolset = load(name)
        except UsageError:
            continue
        for entry in getattr(toolset, "entries", ()):
            handler = getattr(entry, "handler", None)
            if getattr(handler, "kind", None) == "python":
                out.add(handler.function)  # type: ignore[union-attr]
    return frozenset(out)


def refresh() -> None:
    """Read the entry points again (after a tool-set package was installed in this process)."""
    _entries.cache_clear()
    _load.cache_clear()
