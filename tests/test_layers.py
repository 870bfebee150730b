"""The package's floors (ARCHITECTURE.md): no module imports a higher floor, and no import
cycle anywhere, counting imports made inside functions too."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "flowdebug"
FLOORS = [
    {"model", "errors", "redact", "hosting", "jsontext"},
    {"protocols"},
    {"lint", "players"},
    {"mcp"},
    {"engine"},
    {"store", "render", "emulator"},
    {"exchange", "views", "cli"},
]


def modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        for target in targets:
            if target.startswith("flowdebug."):
                short = target.removeprefix("flowdebug.")
                if short in known and short != name:
                    out.add(short)
    # a package's __init__ re-exporting its own modules is no edge of the design
    return {t for t in out if not t.startswith(name + ".")}


def floor(module: str) -> int:
    top = module.split(".")[0]
    return next(i for i, names in enumerate(FLOORS) if top in names)


def graph() -> dict[str, set[str]]:
    found = modules()
    return {m: imports(m, p, set(found)) for m, p in found.items()}


def test_every_module_sits_on_a_floor():
    unplaced = [m for m in modules() if not any(m.split(".")[0] in f for f in FLOORS)]
    assert unplaced == []


def test_no_module_imports_a_higher_floor():
    upward = [
        f"{a} (floor {floor(a)}) imports {b} (floor {floor(b)})"
        for a, targets in graph().items()
        for b in targets
        if floor(b) > floor(a)
    ]
    assert upward == []


def test_there_is_no_import_cycle():
    edges = graph()
    state: dict[str, int] = {}  # 1: on the path, 2: done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(edges):
        if start not in state:
            visit(start, [start])
    assert cycles == []


def test_a_vendor_is_one_folder_with_its_codec_and_facts():
    from flowdebug import protocols

    for name, codec in protocols.PROTOCOLS.items():
        folder = ROOT / "protocols" / name.replace("-", "_")
        assert (folder / "codec.py").is_file() and (folder / "facts.py").is_file(), name
        assert codec.facts.name == name
