"""Warning codes are a closed set: declared once (``WarningCode`` and ``WARNING_CODES``), every
code the source passes is declared, every declared code is used, and every code the
conversions emit at runtime is declared."""

from __future__ import annotations

import ast
import functools
import itertools
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest

from flowdebug import protocols
from flowdebug.protocols.base import ConversionWarning
from flowdebug.protocols.convert import convert
from flowdebug.protocols.warning_codes import WARNING_CODES, WarningCode
from tests.cases import CONVERSATIONS, RESPONSES
from tests.source_scan import FLOWDEBUG, flowdebug_trees, leaves, walk

DECLARED = set(typing.get_args(WarningCode))


def _is_code_type(annotation: ast.expr | None) -> bool:
    return isinstance(annotation, ast.Name) and annotation.id == "WarningCode"


Slots = dict[tuple[Path | None, str], tuple[int, str]]


def _code_slots(trees: dict[Path, ast.Module]) -> Slots:
    """Callables taking a warning code: (module, name) -> (positional index, keyword) of the
    code; the module is None for a public name, which other modules import.

    Functions with a ``WarningCode`` parameter and dataclasses with a ``WarningCode`` field
    (their constructor), ``ConversionWarning`` and ``Warnings.add`` among them.
    """
    slots: Slots = {}
    for path, tree in trees.items():
        for node in walk(tree):
            if isinstance(node, ast.FunctionDef):
                params = [a for a in node.args.args if a.arg not in ("self", "cls")]
                for i, a in enumerate(params):
                    if _is_code_type(a.annotation):
                        slots[_key(path, node.name)] = (i, a.arg)
            elif isinstance(node, ast.ClassDef):
                fields = [s for s in node.body if isinstance(s, ast.AnnAssign)]
                for i, s in enumerate(fields):
                    if _is_code_type(s.annotation) and isinstance(s.target, ast.Name):
                        slots[_key(path, node.name)] = (i, s.target.id)
    return slots


def _key(path: Path, name: str) -> tuple[Path | None, str]:
    return (path if name.startswith("_") else None, name)


def _code_expressions(trees: dict[Path, ast.Module]) -> Iterator[tuple[str, ast.expr]]:
    """(where, expression) for every expression the source passes or compares as a code."""
    slots = _code_slots(trees)
    assert {(None, "add"), (None, "ConversionWarning"), (None, "SchemaRewrite")} <= slots.keys()
    for path, tree in trees.items():
        for node in walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                slot = slots.get((path, name)) or slots.get((None, str(name)))
                if slot is None or (name == "add" and len(node.args) != 3):
                    continue  # set.add takes one argument, the replay's add five
                index, keyword = slot
                if len(node.args) > index:
                    yield _where(path, node), node.args[index]
                for k in node.keywords:
                    if k.arg == keyword:
                        yield _where(path, node), k.value
            elif isinstance(node, ast.AnnAssign) and _is_code_type(node.annotation):
                yield _where(path, node), node.value  # type: ignore[misc]
            elif isinstance(node, ast.Compare):
                # x.code == "...", x.code in (...), code in (...) where code is a code
                left = node.left
                named = (isinstance(left, ast.Attribute) and left.attr == "code") or (
                    isinstance(left, ast.Name) and left.id == "code"
                )
                if named:
                    for right in node.comparators:
                        if isinstance(right, ast.Constant | ast.Tuple | ast.List | ast.Set):
                            yield _where(path, node), right


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(FLOWDEBUG.parent)}:{getattr(node, 'lineno', 0)}"


def _source_codes(extra: dict[Path, ast.Module] | None = None) -> dict[str, list[str]]:
    trees = flowdebug_trees() | (extra or {})
    found: dict[str, list[str]] = {}
    for where, expr in _code_expressions(trees):
        for leaf in leaves(expr):
            if isinstance(leaf, ast.Constant) and isinstance(leaf.value, str):
                found.setdefault(leaf.value, []).append(where)
            elif isinstance(leaf, ast.JoinedStr):
                found.setdefault(f"<f-string {ast.unparse(leaf)}>", []).append(where)
    return found


@functools.cache
def source_codes() -> dict[str, list[str]]:
    """Every code the source passes, with where: read when a test first asks (not when the
    module is imported, which every test worker does), once per process."""
    return _source_codes()


def test_warning_code_type_and_meanings_declare_the_same_codes():
    assert set(WARNING_CODES) == DECLARED
    assert len(DECLARED) == len(typing.get_args(WarningCode))  # no code declared twice
    assert all(m.strip() and "\n" not in m for m in WARNING_CODES.values())


def test_every_code_the_source_passes_is_declared():
    undeclared = {c: w for c, w in source_codes().items() if c not in DECLARED}
    assert undeclared == {}


def test_every_declared_code_is_passed_somewhere_in_the_source():
    assert sorted(DECLARED - source_codes().keys()) == []


def test_source_scan_sees_codes_passed_through_helpers_and_conditionals():
    # bedrock encode_image(..., code) and the hosted conditionals are the indirect paths
    found = source_codes()
    assert "image_in_result_dropped" in found
    assert any("bedrock/parts/encode.py" in w for w in found["hosted_result_dropped"])
    assert any("schema_rewrites.py" in w for w in found["schema_keyword_added"])


def test_source_scan_reports_an_undeclared_code_and_one_built_at_runtime():
    snippet = ast.parse(
        "def _drop(w: Warnings, code: WarningCode) -> None:\n"
        "    w.add(code, '$', 'gone')\n"
        "_drop(w, 'made_up_dropped')\n"
        "w.add(f'made_{what}', '$', 'gone')\n"
    )
    found = _source_codes({FLOWDEBUG / "snippet.py": snippet})
    assert found["made_up_dropped"] == ["flowdebug/snippet.py:3"]
    assert found["<f-string f'made_{what}'>"] == ["flowdebug/snippet.py:4"]


def _emitted() -> Iterator[tuple[str, ConversionWarning]]:
    names = list(protocols.PROTOCOLS)
    for target in names:
        codec = protocols.get(target)
        for case, conv in CONVERSATIONS.items():
            there = codec.encode_request(conv)
            back = codec.decode_request(there.value)
            for w in [*there.warnings, *back.warnings]:
                yield f"{case} -> {target}", w
        for case, resp in RESPONSES.items():
            for encode, decode in (
                (codec.encode_response, codec.decode_response),
                (codec.encode_stream, codec.decode_stream),
            ):
                there = encode(resp)
                back = decode(there.value)
                for w in [*there.warnings, *back.warnings]:
                    yield f"{case} -> {target}", w
    for source, target in itertools.permutations(names, 2):
        for case, conv in CONVERSATIONS.items():
            payload = protocols.get(source).encode_request(conv).value
            _, warnings = convert(payload, target, source)
            for w in warnings:
                yield f"{case}: {source} -> {target}", w


@pytest.fixture(scope="module")
def emitted() -> list[tuple[str, ConversionWarning]]:
    return list(_emitted())


def test_every_code_the_conversions_emit_over_the_cases_is_declared(emitted):
    undeclared = sorted({(w.code, where) for where, w in emitted if w.code not in DECLARED})
    assert undeclared == []


def test_conversions_over_the_cases_emit_many_kinds_of_warning(emitted):
    codes = {w.code for _, w in emitted}
    # the cases carry signed reasoning and requests without a model, among others
    assert {"thinking_signature_dropped", "model_filled_in"} <= codes
    assert len(codes) >= 15
