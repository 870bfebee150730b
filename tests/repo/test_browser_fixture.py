"""The browser tests' Playwright must not outlive its module: while it runs, its event loop is
the thread's running loop, and a later test on the same worker that runs a loop of its own
(asyncio.run, anyio.run) fails. Which tests share a worker changes from run to run, so the
rule is checked here rather than left to the schedule."""

from __future__ import annotations

import ast

from tests.paths import FIXTURES

ROOT = FIXTURES.parents[1]


def _scope(tree: ast.Module, name: str) -> str:
    fixture = next(f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == name)
    for deco in fixture.decorator_list:
        if isinstance(deco, ast.Call):
            for kw in deco.keywords:
                if kw.arg == "scope" and isinstance(kw.value, ast.Constant):
                    return str(kw.value.value)
    return "function"


def test_the_browser_fixture_ends_with_its_module():
    tree = ast.parse((ROOT / "tests" / "e2e" / "conftest.py").read_text(encoding="utf-8"))
    assert _scope(tree, "browser") in ("function", "class", "module")


def test_browser_modules_are_dealt_into_even_lanes_the_same_on_every_worker():
    from tests.e2e.conftest import LANES, SECONDS, lanes

    modules = sorted(p.stem for p in (ROOT / "tests" / "e2e").glob("test_*.py"))
    assert set(SECONDS) - {"e2e-postgres"} <= set(modules), "a weight for a module that is gone"
    units = [*modules, "e2e-postgres"]
    dealt = lanes(units)
    assert set(dealt) == set(units) and set(dealt.values()) == set(range(LANES))
    assert lanes(list(reversed(units))) == dealt  # the order of collection does not matter
    load = [sum(SECONDS.get(u, 0) for u in units if dealt[u] == lane) for lane in range(LANES)]
    assert max(load) - min(load) <= max(SECONDS.values()), load
    # A module without a weight counts as the median one, not as nothing.
    assert lanes(["test_new"], 3) == {"test_new": 0}
    assert lanes(["test_play", "test_new", "e2e-postgres"], 2)["test_new"] == 1
