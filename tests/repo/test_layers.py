"""The repository's floors (ARCHITECTURE.md): the library's floors in ``flowdebug/``, the tool
sets that plug in from above it (``sample_tools/``, found through the ``flowdebug.toolsets``
entry points), and the app on top (``app.py``, ``pages/``). No module imports a higher floor,
and there is no import cycle anywhere, counting imports made inside functions too."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from tests.source_scan import parsed, walk

REPO = Path(__file__).resolve().parents[2]
ROOT = REPO / "flowdebug"
# Each floor names its folders: ``flowdebug.<folder>`` inside the library, else a top package.
FLOORS = [
    {"flowdebug.model", "flowdebug.errors", "flowdebug.redact", "flowdebug.hosting"}
    | {"flowdebug.jsontext"},
    # the linter's floor below the vendor folders: findings and their codes, pairing, schema walk
    {"flowdebug.lint.base"},
    {"flowdebug.protocols"},
    {"flowdebug.lint", "flowdebug.players"},
    {"flowdebug.mcp"},
    # the engine by concern: the sandbox, execution, the trace, the debugger's session
    {"flowdebug.engine.sandboxing"},
    {"flowdebug.engine.execution"},
    {"flowdebug.engine.tracing"},
    {"flowdebug.engine.session", "flowdebug.engine"},
    {"flowdebug.store", "flowdebug.render", "flowdebug.emulator"},
    {"flowdebug.record"},  # the recording proxy: serves like the emulator, saves to the store
    # the library's face (flowdebug/__init__.py) exports from every floor below it
    {"flowdebug.exchange", "flowdebug.views", "flowdebug.cli", "flowdebug"},
    {"sample_tools"},
    {"ui"},  # what the pages share (Streamlit)
    {"pages", "app", "serve"},
]
APP = [REPO / "app.py", REPO / "serve.py"]
SOURCES = [ROOT, REPO / "sample_tools", REPO / "ui", REPO / "pages", *APP]


def modules() -> dict[str, Path]:
    """Every module of the repository's code by its dotted name (a package by its own)."""
    found = {}
    for source in SOURCES:
        for path in [source] if source.is_file() else sorted(source.rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _known(name: str, known: set[str]) -> str | None:
    """The longest prefix of ``name`` that is one of our modules (``import a.b.c`` -> a.b)."""
    parts = name.split(".")
    return next(
        (".".join(parts[:n]) for n in range(len(parts), 0, -1) if ".".join(parts[:n]) in known),
        None,
    )


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = set()
    for node in walk(parsed(path)):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level + 1], *filter(None, [base])])
            # ``from a import b``: the module a.b when b is one, else a
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            ]
        for target in targets:
            short = _known(target, known)
            if short is not None and short != name:
                out.add(short)
    # a package's __init__ re-exporting its own modules is no edge of the design
    return {t for t in out if not t.startswith(name + ".")}


def floor(module: str) -> int:
    """The floor of the longest folder named in FLOORS that holds ``module`` (a sub-floor such
    as ``flowdebug.engine.session`` or ``flowdebug.lint.base`` before its parent)."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        folder = ".".join(parts[:n])
        for i, names in enumerate(FLOORS):
            if folder in names:
                return i
    raise StopIteration(module)


@functools.cache
def graph() -> dict[str, set[str]]:
    """Each module's imports of our modules, parsed once for the tests that read it."""
    found = modules()
    return {m: imports(m, p, set(found)) for m, p in found.items()}


def test_the_layer_check_sees_the_whole_repository():
    found = modules()
    tops = {"flowdebug", "sample_tools", "ui", "pages", "app", "serve"}
    assert {m.split(".")[0] for m in found} == tops
    assert {"sample_tools.weather", "ui.common", "pages.tools", "app"} <= set(found)
    assert "flowdebug.engine.execution.handlers" in found


def test_every_module_sits_on_a_floor():
    unplaced = []
    for m in modules():
        try:
            floor(m)
        except StopIteration:
            unplaced.append(m)
    assert unplaced == []


def test_no_module_imports_a_higher_floor():
    upward = [
        f"{a} (floor {floor(a)}) imports {b} (floor {floor(b)})"
        for a, targets in graph().items()
        for b in targets
        if floor(b) > floor(a)
    ]
    assert upward == []


def test_the_library_never_imports_the_tool_sets_or_the_app():
    """sample_tools plugs in from above (the flowdebug.toolsets entry points), pages on top."""
    found = [
        f"{a} imports {b}"
        for a, targets in graph().items()
        if a.split(".")[0] == "flowdebug"
        for b in targets
        if b.split(".")[0] != "flowdebug"
    ]
    assert found == []


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
