"""Error types are a closed set for flowdebug's own code: every error type the source gives a
result, an outcome or a trace event is declared in ``flowdebug.model.ErrorType`` (with its
meaning in ``ERROR_TYPES``), and every declared one is given somewhere."""

from __future__ import annotations

import ast
import functools
import typing
from collections.abc import Iterator

from flowdebug.engine.execution.handler_io import (
    DEFAULT_ERROR_TYPE,
    Outcome,
    ToolError,
    exception_outcome,
)
from flowdebug.model import ERROR_TYPES, ErrorType, ToolResult
from tests.source_scan import flowdebug_trees, strings_in, walk

DECLARED = set(typing.get_args(ErrorType))
# Calls that take an error type: callee name -> (positional index, keyword).
TAKERS = {
    "failure": (1, "error_type"),  # Outcome.failure(text, error_type)
    "fail": (1, "error_type"),  # the runtime's plan.fail(text, error_type)
    "ToolError": (1, "error_type"),
    "McpError": (0, "kind"),  # its kind becomes the failed call's error_type
}


def _named_error_type(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "error_type") or (
        isinstance(node, ast.Name) and node.id == "error_type"
    )


def _error_type_expressions(tree: ast.Module) -> Iterator[ast.expr]:
    for node in walk(tree):
        match node:
            case ast.Call(func=func, args=args, keywords=keywords):
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                for k in keywords:
                    if k.arg == "error_type":
                        yield k.value
                if name in TAKERS:
                    index, keyword = TAKERS[name]
                    if name == "fail" and isinstance(func, ast.Name):
                        index = 0  # mcp/call.py's local fail(kind, text)
                    if len(args) > index:
                        yield args[index]
                    yield from (k.value for k in keywords if k.arg == keyword)
                # getattr(failure, "kind", default)
                kind = len(args) == 3 and isinstance(args[1], ast.Constant) and args[1].value
                if name == "getattr" and kind == "kind":
                    yield args[2]
            case ast.Dict(keys=keys, values=values):  # model_copy(update={"error_type": ...})
                for k, v in zip(keys, values, strict=True):
                    if isinstance(k, ast.Constant) and k.value == "error_type":
                        yield v
            case ast.Assign(targets=[ast.Name(id=target)], value=value) if (
                target.endswith(("ERROR_TYPE", "ERROR_TYPES")) or target == "REFUSED"
            ):
                yield value
            case ast.AnnAssign(annotation=annotation, value=value) if any(
                isinstance(n, ast.Name) and n.id == "ErrorType" for n in ast.walk(annotation)
            ):
                yield value  # type: ignore[misc]  # REFUSED: frozenset[ErrorType] = ...
            case ast.Compare(left=left, comparators=comparators) if _named_error_type(left):
                yield from comparators
            case ast.Match(subject=subject, cases=cases) if _named_error_type(subject):
                for case in cases:
                    for sub in ast.walk(case.pattern):
                        if isinstance(sub, ast.MatchValue):
                            yield sub.value


@functools.cache
def source_error_types() -> dict[str, list[str]]:
    """Every error type the source gives, with where: read when a test first asks (not when
    the module is imported, which every test worker does), once per process."""
    found: dict[str, list[str]] = {}
    for path, tree in flowdebug_trees().items():
        for value, where in strings_in(path, _error_type_expressions(tree)):
            found.setdefault(value, []).append(where)
    return found


def test_error_type_and_meanings_declare_the_same_types():
    assert set(ERROR_TYPES) == DECLARED
    assert all(m.strip() and "\n" not in m for m in ERROR_TYPES.values())


def test_every_error_type_the_source_gives_is_declared():
    assert {t: w for t, w in source_error_types().items() if t not in DECLARED} == {}


def test_every_declared_error_type_is_given_somewhere_in_the_source():
    assert sorted(DECLARED - source_error_types().keys()) == []


def test_source_scan_sees_the_indirect_spellings():
    found = source_error_types()
    assert "disabled" in found  # REFUSED_ERROR_TYPE, a constant
    assert "flowdebug/engine/execution/runtime.py:" in found["invalid_schema"][0]  # REFUSED
    assert "mcp_connect" in found  # an McpError kind and getattr's default
    assert "tool_error" in found  # model_copy(update={"error_type": ...})


def test_handler_failures_get_declared_types_at_runtime():
    assert DEFAULT_ERROR_TYPE in DECLARED
    for exc, expected in (
        (PermissionError("no"), "permission"),
        (TimeoutError("slow"), "timeout"),
        (ValueError("bad"), "exception"),
        (ToolError("boom"), "exception"),
    ):
        got = exception_outcome(exc)
        assert got.error_type == expected and expected in DECLARED


def test_a_users_own_error_type_survives_as_given():
    # the field stays open: a user's ToolError type and a pasted payload's type are kept
    assert exception_outcome(ToolError("quota", error_type="quota_exceeded")).error_type == (
        "quota_exceeded"
    )
    assert ToolResult(call_id="c", is_error=True, error_type="vendor_x").error_type == "vendor_x"
    assert isinstance(Outcome.failure("x").error_type, str)
