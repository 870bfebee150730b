"""Helpers of the tests that enumerate closed sets by reading flowdebug's source (ast)."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Iterator
from pathlib import Path

FLOWDEBUG = Path(__file__).resolve().parents[1] / "flowdebug"


@functools.cache
def parsed(path: Path) -> ast.Module:
    """The tree of a source file, parsed once per test process (several tests read the same
    files; the trees are only read)."""
    return ast.parse(path.read_text("utf-8"))


@functools.cache
def walk(tree: ast.AST) -> tuple[ast.AST, ...]:
    """Every node of ``tree``, in ``ast.walk``'s order, listed once per test process: eight
    tests walk the whole source, and walking was most of their time (a list is read far faster
    than ``ast.walk`` yields). The trees are only read."""
    return tuple(ast.walk(tree))


def flowdebug_trees() -> dict[Path, ast.Module]:
    """Every module of flowdebug's source, path to tree, in path order (each parsed once per
    test process: :func:`parsed`)."""
    return {p: parsed(p) for p in sorted(FLOWDEBUG.rglob("*.py"))}


def leaves(node: ast.expr | None) -> Iterator[ast.expr]:
    """The values an expression can stand for, as far as the source spells them: both arms
    of a conditional, a tuple's, list's or set's items (also inside ``frozenset(...)``), else
    the expression itself."""
    match node:
        case ast.IfExp(body=body, orelse=orelse):
            yield from leaves(body)
            yield from leaves(orelse)
        case ast.Tuple(elts=elts) | ast.List(elts=elts) | ast.Set(elts=elts):
            for e in elts:
                yield from leaves(e)
        case ast.Call(func=ast.Name(id="frozenset" | "set"), args=[arg]):
            yield from leaves(arg)
        case None:
            return
        case _:
            yield node


def strings_in(path: Path, exprs: Iterable[ast.expr | None]) -> Iterator[tuple[str, str]]:
    """Each string constant the expressions can stand for (:func:`leaves`), with where it is
    spelled (``flowdebug/engine/errors.py:12``)."""
    for expr in exprs:
        for leaf in leaves(expr):
            if isinstance(leaf, ast.Constant) and isinstance(leaf.value, str):
                yield leaf.value, f"{path.relative_to(FLOWDEBUG.parent)}:{leaf.lineno}"
