"""What the pages say about the vendors as a whole (how many, which), read from the registry,
so a vendor added there is counted and named everywhere without a page knowing it."""

from __future__ import annotations

from flowdebug import protocols
from flowdebug.protocols.tools import bare_tools

_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def count_words(n: int) -> str:
    """``n`` as the pages write a small count: "six"; digits from 11 on."""
    return _WORDS[n] if 0 <= n < len(_WORDS) else str(n)


def none_chosen_note() -> str:
    """The sidebar's note when no protocol is chosen: every registered one is shown."""
    n = count_words(len(protocols.PROTOCOLS))
    return f"No protocol chosen: all {n} are shown until you pick one."


def model_vendors(conjunction: str = "or") -> str:
    """The model vendors' short names as a sentence lists them: "A, B or C"."""
    names = [protocols.facts(n).short for n in protocols.model_protocols()]
    head = ", ".join(names[:-1])
    return f"{head} {conjunction} {names[-1]}" if head else "".join(names)


def local_compatible() -> str:
    """The API local model servers imitate, as the base-URL field names it ("OpenAI Chat")."""
    return protocols.facts(protocols.default_protocol(local=True)).short


def bare_tool_titles() -> str:
    """Every bare tool spelling the paste reads, as a sentence lists them: "an Anthropic tool,
    ... or a Bedrock toolSpec" (a list of each is read too)."""
    titles = [bare.title for _, bare in bare_tools()]
    head = ", ".join(titles[:-1])
    return f"{head} or {titles[-1]}" if head else "".join(titles)
