"""Other ways of asking the same thing: deterministic phrasings of a request for the offline
A/B test (issue 30 item 9), so that a tool description is judged by how many ways of asking it
answers, not by one sentence.

:func:`phrasings` makes them from the request alone, the same list every time:

1. the request as written;
2. each word of the request that :data:`SYNONYMS` knows, replaced by each of its synonyms in
   turn (``flights`` → ``plane tickets``, ``airfare``...), one replacement per phrasing: the
   first synonym of every word, then the second of every word, and so on;
3. each of those inside one of the :data:`FRAMES` (``Could you …?``, ``I'd like to …``), in
   turn, and the request itself framed (a request that does not start with one of
   :data:`VERBS` gets the :data:`PLAIN_FRAMES`, ``Hi! …``); then the list repeats.

A precise description that names the words people use for the thing (``flights, plane tickets,
airfare``) matches more of these phrasings than a vague one ("Searches stuff"), which is what the
A/B tallies then show.
"""

from __future__ import annotations

import re

# A small, documented thesaurus of words people use for the things tools do; each key's stem
# forms (a plural) are matched too. Values replace the word as written.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "find": ("look for", "search for", "locate"),
    "search": ("look for", "find", "browse"),
    "show": ("list", "display"),
    "get": ("fetch", "retrieve"),
    "flights": ("plane tickets", "airfare", "flying options"),
    "flight": ("plane ticket", "airfare", "trip by air"),
    "hotel": ("place to stay", "accommodation", "room"),
    "hotels": ("places to stay", "accommodation", "rooms"),
    "weather": ("forecast", "temperature", "conditions"),
    "book": ("reserve", "arrange"),
    "buy": ("purchase", "order"),
    "price": ("cost", "fare"),
    "prices": ("costs", "fares"),
    "send": ("deliver", "forward"),
    "email": ("mail", "message"),
    "meeting": ("appointment", "call"),
    "schedule": ("plan", "set up"),
    "delete": ("remove", "erase"),
    "create": ("make", "add"),
    "restaurant": ("place to eat", "diner"),
    "movie": ("film", "picture"),
    "car": ("vehicle", "ride"),
    "news": ("headlines", "latest stories"),
    "translate": ("convert", "render"),
    "stock": ("share", "ticker"),
}
FRAMES = ("Could you {}?", "I'd like to {}.", "Quick question: {}", "Help me {}.")
# A request that does not start with one of VERBS is framed without being lower-cased.
PLAIN_FRAMES = ("Hi! {}", "Quick question: {}", "{} Thanks.", "Please help: {}")
VERBS = frozenset(
    {
        "find",
        "search",
        "show",
        "get",
        "book",
        "buy",
        "send",
        "schedule",
        "delete",
        "create",
        "translate",
        "look",
        "list",
        "fetch",
    }
)
_WORD = re.compile(r"[A-Za-z]+")


def _lower_first(text: str) -> str:
    """``text`` with its first letter lower-cased, unless the first word is a name (two
    capitals, or a capital after the first letter: ``NASA``, ``McDonald``)."""
    first = text.split(" ", 1)[0]
    if len(first) > 1 and any(c.isupper() for c in first[1:]):
        return text
    return text[:1].lower() + text[1:]


def _framed(n: int, text: str) -> str:
    """``text`` inside the ``n``-th frame (in turn) that suits how it starts."""
    first = _WORD.match(text)
    if first is not None and first.group().lower() in VERBS:
        return FRAMES[n % len(FRAMES)].format(_lower_first(text.strip().rstrip(".?!")))
    return PLAIN_FRAMES[n % len(PLAIN_FRAMES)].format(text)


def _replacements(text: str) -> list[str]:
    """Each known word replaced by each of its synonyms, one at a time: the first synonym of
    every word, then the second of every word, and so on."""
    per_word = []
    for match in _WORD.finditer(text):
        word = match.group()
        options = []
        for synonym in SYNONYMS.get(word.lower(), ()):
            if word[0].isupper():
                synonym = synonym[0].upper() + synonym[1:]
            options.append(text[: match.start()] + synonym + text[match.end() :])
        per_word.append(options)
    longest = max((len(o) for o in per_word), default=0)
    return [o[n] for n in range(longest) for o in per_word if n < len(o)]


def phrasings(text: str, count: int) -> list[str]:
    """``count`` phrasings of the request ``text`` (see the module's doc); when the rules give
    fewer, they repeat in order."""
    text = " ".join(text.split())
    if count < 1 or not text:
        return []
    replaced = _replacements(text)
    found = [text, *replaced]
    for i, base in enumerate([*replaced, text]):
        found.append(_framed(i, base))
    unique = list(dict.fromkeys(found))
    return [unique[i % len(unique)] for i in range(count)]
