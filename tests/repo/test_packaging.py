"""Packaging: every import declared, the version in one place, lower bounds and the lock."""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

import flowdebug
from scripts.lowest_constraints import constraints
from tests.source_scan import parsed, walk

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
OURS = {"flowdebug", "sample_tools", "ui", "pages", "tests", "scripts", "app"}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared(*groups: str) -> set[str]:
    """The distributions declared in [project] dependencies and the given extras."""
    reqs = list(PROJECT["dependencies"])
    for group in groups:
        reqs += PROJECT["optional-dependencies"][group]
    return {canonical(Requirement(r).name) for r in reqs}


@functools.cache
def imported(*paths: str) -> dict[str, set[str]]:
    """Top-level third-party modules imported under ``paths``, with the files importing them
    (read once per run: the tests only read what it returns)."""
    found: dict[str, set[str]] = {}
    files = [
        p
        for path in paths
        for p in ((ROOT / path).rglob("*.py") if (ROOT / path).is_dir() else [ROOT / path])
    ]
    for file in files:
        for node in walk(parsed(file)):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in OURS:
                    found.setdefault(top, set()).add(str(file.relative_to(ROOT)))
    return found


@functools.cache
def installed() -> dict[str, list[str]]:
    """Top-level module → the distributions that provide it (a scan of every installed
    distribution: once per run)."""
    return importlib.metadata.packages_distributions()


def distributions(module: str) -> set[str]:
    """The installed distributions providing ``module``; for one not installed (an optional
    extra's, such as tiktoken) the distribution of the same name."""
    return {canonical(d) for d in installed().get(module, [])} or {canonical(module)}


SHIPPED = ("flowdebug", "ui", "pages", "app.py", "serve.py", "sample_tools")


def test_every_package_the_app_and_library_import_is_declared():
    runtime = declared("postgres", "tokens")
    missing = {
        module: sorted(files)
        for module, files in imported(*SHIPPED).items()
        if not distributions(module) & runtime
    }
    assert missing == {}, "declare these in pyproject.toml [project] dependencies"


def test_every_declared_dependency_is_imported():
    # A dependency nothing imports (graphviz, once) is weight a user installs for nothing.
    used = {d for module in imported(*SHIPPED) for d in distributions(module)}
    assert sorted(declared() - used) == []


def test_the_tests_import_only_declared_packages():
    everything = declared("dev", "postgres")
    missing = {
        module: sorted(files)[:3]
        for module, files in imported("tests", "scripts").items()
        if not distributions(module) & everything and module != "packaging"
    }
    assert missing == {}, "declare these in the dev extra"


def test_the_version_lives_in_pyproject_only():
    assert flowdebug.__version__ == PROJECT["version"]
    literal = re.compile(rf"['\"]{re.escape(PROJECT['version'])}['\"]")
    copies = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "flowdebug").rglob("*.py")
        if literal.search(p.read_text("utf-8"))
    ]
    assert copies == []


def test_flowdebug_version_prints_it():
    proc = subprocess.run(
        [sys.executable, "-m", "flowdebug.cli.main", "--version"], capture_output=True, text=True
    )
    assert proc.returncode == 0
    assert proc.stdout == f"flowdebug {PROJECT['version']}\n"


def test_every_requirement_has_a_lower_bound_that_test_lowest_pins():
    pins = constraints(["dev"])
    names = {canonical(p.split("==")[0]) for p in pins}
    assert names == declared("dev")
    for pin in pins:
        assert re.fullmatch(r"[A-Za-z0-9._-]+==[0-9][0-9A-Za-z.]*", pin), pin


def test_the_lock_pins_every_declared_package_within_its_bounds():
    lock = {}
    for line in (ROOT / "requirements.lock").read_text("utf-8").splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            lock[canonical(name)] = Version(version)
    for requirement in [*PROJECT["dependencies"], *PROJECT["optional-dependencies"]["dev"]]:
        req = Requirement(requirement)
        assert canonical(req.name) in lock, f"{req.name} is not in requirements.lock: make lock"
        assert lock[canonical(req.name)] in req.specifier, (
            f"{req.name}: lock outside {req.specifier}"
        )


def test_make_test_type_checks_and_test_lowest_exists():
    makefile = (ROOT / "Makefile").read_text("utf-8")
    test_recipe = makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "mypy" in test_recipe
    assert "\ntest-lowest:" in makefile and "lowest_constraints.py" in makefile
