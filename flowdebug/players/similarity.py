"""How well a request's words match a tool: the one text-similarity score of the offline model.

The offline model (:mod:`flowdebug.players.reading`) and the emulator's keyword rule
(:mod:`flowdebug.players.keyword`, the offline A/B) both decide with :func:`score_tools`, so a
description edit moves both the same way. The score is deterministic and small enough to read:

1. **Words.** Text is cut into words at anything that is not a letter or digit and at
   ``snake_case`` / ``camelCase`` joins (``search_flights`` → ``search``, ``flights``), lower-cased,
   with :data:`STOP_WORDS` left out.
2. **Light stemming** (:func:`stem`): ``-ies`` → ``-y``, then one of ``-ing``, ``-ed``, ``-es``
   (after s, x, z, ch, sh), ``-s`` (not ``-ss``) is cut when a stem of three letters or more
   is left: ``flights``/``flight``, ``searches``/``searching``/``search`` meet.
3. **Fields.** A tool's words come from its name (weight :data:`NAME_WEIGHT`), its description
   (:data:`DESCRIPTION_WEIGHT`) and its parameters' names and descriptions
   (:data:`PARAMETER_WEIGHT`); a word found in several fields counts with its heaviest.
4. **Rarity over the tool set** (IDF-like): a word found in ``df`` of the ``N`` tools weighs
   ``ln(1 + N / df)``, so a word every tool has still counts (ln 2 ≈ 0.69) and a word only
   one tool has counts most.
5. **Score** = the sum, over the request's distinct words found in the tool, of field weight *
   rarity. Each request word counts once; words found in no tool add nothing, so city names
   and dates do not dilute it.

A tool is called when its score reaches :data:`THRESHOLD` (1.0): with one tool, one request
word in its description (2 * 0.69) or name (3 * 0.69) is enough, a word only in a
parameter's description (1 * 0.69) is not.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from flowdebug.model import Tool

NAME_WEIGHT = 3.0
DESCRIPTION_WEIGHT = 2.0
PARAMETER_WEIGHT = 1.0
THRESHOLD = 1.0

_STOP = """a an the and or but of to in on at by for from with about into over as is are was were
be been am do does did can could would should will shall may might must i me my we our you your
he she it its they them their this that these those there here what which who whom when where
why how please want need some any all get give show tell let find look up out just also then
than so if not no yes one"""
STOP_WORDS = frozenset(_STOP.split())

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def stem(word: str) -> str:
    """``word`` with one common English ending cut (see the module's step 2)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    for ending in ("ing", "ed"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    if word.endswith("es") and len(word) > 4 and word[:-2].endswith(("s", "x", "z", "ch", "sh")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def words(text: str) -> list[str]:
    """The stemmed content words of ``text``, in order (repeats kept)."""
    out = []
    for raw in _WORD.findall(_CAMEL.sub(" ", text or "")):
        low = raw.lower()
        if low not in STOP_WORDS and not low.isdigit():
            out.append(stem(low))
    return out


def _parameter_texts(parameters: dict[str, Any]) -> Iterable[str]:
    props = parameters.get("properties")
    if not isinstance(props, dict):
        return
    for name, spec in props.items():
        yield str(name)
        if isinstance(spec, dict) and isinstance(spec.get("description"), str):
            yield spec["description"]


def tool_fields(tool: Tool, description: bool = True) -> dict[str, float]:
    """Each stemmed word of ``tool`` with its heaviest field weight. ``description=False``
    reads only the description (the keyword rule's A/B judges that one field)."""
    found: dict[str, float] = {}
    fields: list[tuple[float, Iterable[str]]] = [(DESCRIPTION_WEIGHT, [tool.description or ""])]
    if description:
        fields += [
            (NAME_WEIGHT, [tool.name]),
            (PARAMETER_WEIGHT, _parameter_texts(dict(tool.parameters))),
        ]
    for weight, texts in fields:
        for text in texts:
            for w in words(text):
                found[w] = max(found.get(w, 0.0), weight)
    return found


@dataclass(frozen=True)
class ToolScore:
    """One tool's score against a request, and the words that made it."""

    tool: str
    score: float
    matched: tuple[str, ...] = field(default=())  # the request's words found in the tool

    @property
    def enough(self) -> bool:
        return self.score >= THRESHOLD


def score_tools(text: str, tools: Sequence[Tool], whole_tool: bool = True) -> list[ToolScore]:
    """Every tool's score against ``text``, best first (ties keep the declared order).
    ``whole_tool=False`` scores the descriptions alone."""
    per_tool = [tool_fields(t, whole_tool) for t in tools]
    n = len(tools)
    asked = list(dict.fromkeys(words(text)))
    out = []
    for tool, found in zip(tools, per_tool, strict=True):
        total, matched = 0.0, []
        for w in asked:
            if w in found:
                df = sum(w in other for other in per_tool)
                total += found[w] * math.log(1 + n / df)
                matched.append(w)
        out.append(ToolScore(tool.name, round(total, 3), tuple(matched)))
    return sorted(out, key=lambda s: -s.score)


def best_tool(text: str, tools: Sequence[Tool]) -> ToolScore | None:
    """The best-scoring tool when its score reaches :data:`THRESHOLD`, else None."""
    scores = score_tools(text, tools)
    return scores[0] if scores and scores[0].enough else None
