"""Tool sets by name from the entry-point group flowdebug.toolsets
(flowdebug/engine/execution/toolsets.py):
the sample tools register there, a user's own package joins the same way, and on a shared
server the registry is what decides which python handlers a person may name."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import sample_tools
from flowdebug import hosting
from flowdebug.engine.execution import toolsets
from flowdebug.engine.execution.handlers import ToolEntry, Toolset
from flowdebug.engine.session import scenarios
from flowdebug.errors import UsageError
from flowdebug.hosting import Refused

USER_PACKAGE = '''
"""A user's own tool set, installed beside flowdebug."""
from flowdebug.engine.execution.handlers import Toolset
from flowdebug.engine.execution.python_tools import python_tool


def count_items(args):
    """Count the items on a shelf."""
    return {"shelf": args["shelf"], "count": 3}


def _restock(args):
    return "restocked"


TOOLSET = Toolset(entries=[python_tool(count_items)])
'''


@pytest.fixture
def user_package(tmp_path, monkeypatch):
    """An installed package ``inventory_tools`` offering the tool set ``inventory``."""
    (tmp_path / "inventory_tools").mkdir()
    (tmp_path / "inventory_tools" / "__init__.py").write_text(USER_PACKAGE)
    info = tmp_path / "inventory_tools-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: inventory-tools\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[flowdebug.toolsets]\ninventory = inventory_tools:TOOLSET\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    toolsets.refresh()
    yield
    monkeypatch.undo()
    sys.modules.pop("inventory_tools", None)
    toolsets.refresh()


@pytest.fixture
def shared(monkeypatch):
    monkeypatch.setenv(hosting.SHARED_ENV, "1")


def python_entry(function: str) -> dict:
    return {
        "tool": {"name": "t", "parameters": {"type": "object"}},
        "handler": {"kind": "python", "function": function},
    }


def test_the_sample_tool_sets_are_registered_under_their_names():
    assert set(sample_tools.TOOLSETS) <= set(toolsets.names())
    for name, toolset in sample_tools.TOOLSETS.items():
        assert toolsets.load(name) is toolset
    assert Toolset.registered("weather", "tasks").names == [
        *sample_tools.TOOLSETS["weather"].names,
        *sample_tools.TOOLSETS["tasks"].names,
    ]


def test_an_unknown_tool_set_names_the_registered_ones():
    with pytest.raises(UsageError, match=r"unknown tool set 'nope'; choose from: .*weather"):
        Toolset.registered("nope")


def test_a_users_own_package_joins_the_registry_and_its_scenarios_load(user_package, tmp_path):
    assert "inventory" in toolsets.names()
    assert Toolset.registered("inventory").names == ["count_items"]
    path = tmp_path / "shelf.json"
    path.write_text(
        json.dumps(
            {
                "name": "shelf",
                "title": "Shelf",
                "user": "how many?",
                "toolsets": ["inventory", "weather"],
                "turns": [{"text": "three"}],
            }
        )
    )
    assert scenarios.load(str(path)).toolset().names == ["count_items", "get_weather"]


def test_on_a_shared_server_only_handlers_of_registered_tool_sets_may_be_named(
    user_package, shared
):
    trusted = toolsets.trusted_functions()
    assert {"inventory_tools:count_items", "sample_tools.weather:get_weather"} <= trusted
    assert ToolEntry.model_validate(python_entry("inventory_tools:count_items"))
    for ref in ("inventory_tools:_restock", "inventory_tools:Toolset", "os:system"):
        assert ref not in trusted
        with pytest.raises(Refused, match="not a handler of an installed tool set"):
            ToolEntry.model_validate(python_entry(ref))


def test_a_tool_set_that_fails_to_load_is_trusted_with_nothing_and_says_why(user_package, tmp_path):
    (tmp_path / "inventory_tools" / "__init__.py").write_text("raise RuntimeError('broken')\n")
    toolsets.refresh()
    assert not any(f.startswith("inventory_tools:") for f in toolsets.trusted_functions())
    with pytest.raises(UsageError, match=r"'inventory' \(inventory_tools:TOOLSET\).*broken"):
        Toolset.registered("inventory")


def test_a_tool_set_module_imports_on_a_shared_server_before_the_registry_is_read():
    """The circle is cut: building a tool set from functions asks nothing of the registry."""
    code = textwrap.dedent(
        """
        import sample_tools.weather as weather
        from flowdebug.engine.execution.handlers import ToolEntry
        entry = {"tool": {"name": "w"}, "handler": {"kind": "python", "function": WEATHER}}
        print(weather.TOOLSET.names, ToolEntry.model_validate(entry).handler.function)
        """
    ).replace("WEATHER", repr("sample_tools.weather:get_weather"))
    env = {hosting.SHARED_ENV: "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout
    assert out == "['get_weather'] sample_tools.weather:get_weather\n"
