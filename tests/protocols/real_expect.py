"""What each real payload in ``tests/fixtures/real`` must decode to.

``tests/protocols/test_real_fixtures.py`` holds the first fixtures' expectations; each
``tests/protocols/<vendor>/real_expect.py`` module adds its own ``EXPECTED`` dict for the
fixtures it brought (so several people can add payloads without editing one table).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Call:
    """An expected call; ``id=None`` when the wire carries none (Gemini before v3)."""

    id: str | None
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Result:
    """An expected result; ``call`` is the call id, or the index of the expected call whose
    (decoder-made) id it must pair with. ``content`` is the text, or the JSON it must parse to."""

    call: str | int
    name: str | None
    content: str | dict[str, Any]
    is_error: bool = False


@dataclass(frozen=True)
class Expect:
    tools: tuple[str, ...] = ()
    calls: tuple[Call, ...] = ()
    results: tuple[Result, ...] = ()
    text: str | None = None  # assistant text of a response
    system: str | None = None
    stop_reason: str | None = None
    tool_choice: str | None = None
    required: dict[str, list[str]] = field(default_factory=dict)  # tool -> required params
    thinking: tuple[str, str] | None = None  # (text prefix, signature prefix)
    signatures: dict[int, str] = field(default_factory=dict)  # call index -> Gemini signature
    item_ids: dict[int, str] = field(default_factory=dict)  # call index -> Responses item id
    structured: Any = None
    hosted: tuple[str, ...] = ()  # names of the vendor-run (hosted) calls, in order


def more_expectations() -> dict[str, Expect]:
    """The ``EXPECTED`` dicts of every vendor's ``tests/protocols/<vendor>/real_expect.py``,
    merged."""
    merged: dict[str, Expect] = {}
    for path in sorted(Path(__file__).parent.glob("*/real_expect.py")):
        module = importlib.import_module(f"tests.protocols.{path.parent.name}.real_expect")
        clash = set(merged) & set(module.EXPECTED)
        assert not clash, f"{path.name} repeats expectations for {sorted(clash)}"
        merged.update(module.EXPECTED)
    return merged
