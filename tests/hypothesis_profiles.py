"""The hypothesis profiles every property test follows, chosen by ``FLOWDEBUG_HYPOTHESIS``
(tests/conftest.py loads the one named before any test module is imported):

- ``ci``, the default: what `make test` and CI run, each test at the example count it states;
- ``fast``, set by `make test-fast`: a tenth of those examples (at least two), drawn from a
  fixed seed so a failure repeats, and no deadline (the loop runs more workers than cores);
- ``long``, by hand: fifteen times the examples, or the count a test names for it.

A test states its examples as ``max_examples=examples(n)``: ``n`` is what CI runs. A test
whose cost grows with a size it chooses (a history of 400 turns) states it as
``size(400, fast=160)``: CI and the long profile run the first, the fast loop the second.
"""

from __future__ import annotations

import os

from hypothesis import settings

ENV = "FLOWDEBUG_HYPOTHESIS"
SCALE = {"ci": 1.0, "fast": 0.1, "long": 15.0}

settings.register_profile("ci")
# A test that states no examples gets hypothesis's 100 scaled the same way.
settings.register_profile("fast", max_examples=10, derandomize=True, deadline=None, database=None)
settings.register_profile("long", max_examples=1500, deadline=None)


def profile() -> str:
    """The profile's name, from ``FLOWDEBUG_HYPOTHESIS`` (``ci`` when unset)."""
    name = os.environ.get(ENV, "ci")
    if name not in SCALE:
        raise ValueError(f"{ENV}={name!r}: use one of {', '.join(SCALE)}")
    return name


def examples(n: int, long: int | None = None) -> int:
    """The examples a test that CI runs with ``n`` gets under the profile loaded (``long``: its
    count under the long profile, when fifteen times ``n`` is not the right one)."""
    name = profile()
    if name == "long" and long is not None:
        return long
    if name == "fast":
        return max(2, round(n * SCALE[name]))
    return round(n * SCALE[name])


def size(n: int, fast: int) -> int:
    """A size a test runs at: ``n`` (what CI runs), or ``fast`` under the fast profile."""
    return fast if profile() == "fast" else n
