"""The app's session-state keys are declared once (ui/keys.py): every key the pages, their
helpers and app.py read or write through ``st.session_state`` is declared, and every declared
key is still used."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.source_scan import parsed, walk
from ui.keys import STATE

REPO = Path(__file__).resolve().parents[2]
SOURCES = [REPO / "app.py", *sorted((REPO / "pages").glob("*.py"))]
SOURCES += sorted((REPO / "ui").glob("*.py")) if (REPO / "ui").is_dir() else []
METHODS = {"get", "pop", "setdefault"}


def _is_state(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "session_state"


def keys_used(tree: ast.AST) -> set[str]:
    """Literal keys used with st.session_state, and the module's key constants (``"fd_…"``)."""
    used: set[str] = set()
    for n in walk(tree):
        if isinstance(n, ast.Attribute) and _is_state(n.value) and n.attr not in METHODS:
            used.add(n.attr)
        elif isinstance(n, ast.Subscript) and _is_state(n.value):
            if isinstance(n.slice, ast.Constant):
                used.add(n.slice.value)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            if _is_state(n.func.value) and n.args and isinstance(n.args[0], ast.Constant):
                used.add(n.args[0].value)
        elif (
            isinstance(n, ast.Compare)
            and any(_is_state(c) for c in n.comparators)
            and isinstance(n.left, ast.Constant)
        ):
            used.add(n.left.value)
    for n in getattr(tree, "body", []):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant):
            value = n.value.value
            if isinstance(value, str) and value.startswith("fd_"):
                used.add(value)
    return used


def used_in_the_app() -> set[str]:
    return set().union(*(keys_used(parsed(p)) for p in SOURCES))


def test_every_session_state_key_the_app_uses_is_declared():
    assert sorted(used_in_the_app() - set(STATE)) == []


def test_every_declared_key_is_still_used():
    assert sorted(set(STATE) - used_in_the_app()) == []


def test_the_scan_sees_every_way_a_key_is_used():
    code = (
        'A = "fd_const"\n'
        "st.session_state.attr = 1\n"
        'st.session_state["sub"]\n'
        'st.session_state.get("got")\n'
        'st.session_state.pop("popped", None)\n'
        'st.session_state.setdefault("defaulted", 1)\n'
        '"tested" in st.session_state\n'
    )
    assert keys_used(ast.parse(code)) == {
        "fd_const",
        "attr",
        "sub",
        "got",
        "popped",
        "defaulted",
        "tested",
    }
