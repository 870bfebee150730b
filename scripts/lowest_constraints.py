"""Print pip constraints pinning every declared dependency to its lower bound.

pyproject.toml's ``>=`` bounds are a promise; ``make test-lowest`` keeps it by installing
exactly these versions (``pip install -c``) and running a fast part of the suite.

python3 scripts/lowest_constraints.py [EXTRA ...]   (default extra: dev)
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# name[extras]>=version, then perhaps more specifiers or a marker (which the pin keeps)
LOWER = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*>=\s*([^,;\s]+)([^;]*)(;.*)?$")


def constraints(extras: list[str]) -> list[str]:
    """``name==lowest`` for the dependencies and ``extras``, one per package, in order."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in extras:
        requirements += project["optional-dependencies"][extra]
    pins: dict[str, str] = {}
    for requirement in requirements:
        m = LOWER.match(requirement)
        if m is None:
            raise SystemExit(f"{requirement!r} has no lower bound (>=): declare one")
        name, _, version, _, marker = m.groups()
        pins.setdefault(name.lower(), f"{name}=={version}{marker or ''}")
    return list(pins.values())


if __name__ == "__main__":
    print("# The declared lower bounds (scripts/lowest_constraints.py); make test-lowest")
    print("\n".join(constraints(sys.argv[1:] or ["dev"])))
