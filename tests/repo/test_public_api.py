"""The library's face: what ``from flowdebug import ...`` offers, documented, typed and light."""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import flowdebug
from tests.source_scan import parsed, walk

ROOT = Path(__file__).resolve().parents[2]
INIT = ROOT / "flowdebug" / "__init__.py"
DATA = {"__version__", "PROTOCOLS"}  # values, documented by the module that defines them


def type_checking_imports() -> dict[str, str]:
    """The names flowdebug/__init__.py imports under ``if TYPE_CHECKING:``, with their module."""
    tree = ast.parse(INIT.read_text("utf-8"))
    block = next(
        n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)
    )
    return {a.name: n.module for n in block.body if isinstance(n, ast.ImportFrom) for a in n.names}


def test_all_lists_the_version_and_every_lazy_export():
    assert flowdebug.__all__ == ["__version__", *flowdebug._EXPORTS]
    assert len(set(flowdebug.__all__)) == len(flowdebug.__all__)


def test_type_checkers_see_the_same_names_from_the_same_modules():
    assert type_checking_imports() == flowdebug._EXPORTS


@pytest.mark.parametrize("name", flowdebug.__all__)
def test_every_public_name_resolves_and_is_documented(name):
    value = getattr(flowdebug, name)
    if name in DATA:
        return
    doc = inspect.getdoc(value) or ""
    assert doc.strip(), f"flowdebug.{name} has no docstring"
    if inspect.isclass(value):  # not the docstring inherited from BaseModel or Exception
        assert value.__doc__, f"flowdebug.{name} has no docstring of its own"


def test_the_names_from_the_face_are_the_library_objects_themselves():
    from flowdebug.engine.session.debugger import Session
    from flowdebug.model import ToolCall
    from flowdebug.protocols.convert import convert

    assert flowdebug.Session is Session
    assert flowdebug.ToolCall is ToolCall
    assert flowdebug.convert is convert
    assert flowdebug.scenarios.load("weather").name == "weather"


def test_an_unknown_name_is_an_attribute_error_and_submodules_still_import():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        flowdebug.nope  # noqa: B018
    from flowdebug import protocols  # a subpackage, not a face name

    assert "anthropic" in protocols.PROTOCOLS


def test_the_package_ships_its_type_information():
    assert (ROOT / "flowdebug" / "py.typed").is_file()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["flowdebug"]


def test_importing_flowdebug_and_the_command_stays_light():
    # Nothing heavy comes with the package or the command; and a scenario without an MCP
    # server runs without the MCP SDK (0.7 s of CPU to import): the first MCP listing loads
    # it, not every process that loads a scenario (the app, `flowdebug run`, a Session).
    code = (
        "import sys, flowdebug, flowdebug.cli.main; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('mcp', 'streamlit', 'anthropic', 'openai', 'pandas') or m == 'flowdebug.engine')); "
        "flowdebug.Session.from_scenario('weather').run(); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'mcp', 'mcp_types'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["[]", "[]"]


def test_no_module_imports_the_face_of_its_own_package():
    # The face imports every layer: a module importing it would import upward, in a circle.
    offenders = []
    for path in sorted((ROOT / "flowdebug").rglob("*.py")):
        if path == INIT:
            continue
        for node in walk(parsed(path)):
            if isinstance(node, ast.Import) and any(a.name == "flowdebug" for a in node.names):
                offenders.append(f"{path.relative_to(ROOT)}: import flowdebug")
            if isinstance(node, ast.ImportFrom) and node.module == "flowdebug":
                for alias in node.names:
                    if (
                        not (ROOT / "flowdebug" / alias.name).is_dir()
                        and not (ROOT / "flowdebug" / f"{alias.name}.py").is_file()
                    ):
                        offenders.append(
                            f"{path.relative_to(ROOT)}: from flowdebug import {alias.name}"
                        )
    assert offenders == []


def readme_example() -> str:
    text = (ROOT / "README.md").read_text("utf-8")
    section = text.split("## Use it as a library", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the library section holds one runnable example"
    return blocks[0]


def test_the_readme_library_example_runs():
    proc = subprocess.run(
        [sys.executable, "-c", readme_example()],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith("warning tools[0].parameters ") for line in lines)
    assert "'name': 'get_weather', 'args': {'city': 'Paris'}}" in proc.stdout
    assert "the model answered: the cycle is done" in lines
    assert "sequenceDiagram" in lines
