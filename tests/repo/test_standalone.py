"""The repository stands alone: a fresh clone with nothing beside it has all it reads."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A path that leaves the checkout: the sibling folder the developers share, a parent's
# parent, or a host-specific absolute path.
SIBLING = "shared"  # the developers' folder beside the checkout (spelled apart: this file
# would otherwise match its own pattern in tools that grep for it)
OUTSIDE = re.compile(
    rf"\.\./{SIBLING}|/{SIBLING}/reference|parents\[[2-9]\]\s*/\s*[\"']{SIBLING}|[\"']/work/"
)


def _tracked() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [
        ROOT / f
        for f in out
        if f.endswith((".py", ".sh", ".toml", ".cfg")) or f in ("Makefile", ".ci/run")
    ]


def test_no_source_file_reads_outside_the_repository():
    offenders = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in _tracked()
        if p.exists() and p.name != "test_standalone.py"
        for n, line in enumerate(p.read_text("utf-8", "replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert offenders == []


def test_the_wire_reference_is_a_fixture_of_the_repository():
    from flowdebug.protocols import PROTOCOLS
    from tests.paths import WIRE

    names = {p.name for p in WIRE.glob("*.json")}
    for protocol in PROTOCOLS:  # one spelling: the protocol's id starts every fixture's name
        assert any(n.startswith(protocol + ".") for n in names), protocol
    assert (WIRE / "README.md").is_file()
