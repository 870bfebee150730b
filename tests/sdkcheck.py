"""Validate emitted payloads against the vendor SDKs' own types.

pydantic silently drops unknown keys when validating a TypedDict, so ``assert_params`` also
diffs the validated value against the input: a misspelled key fails the test. ``Iterable[...]``
fields (e.g. ``messages``) validate lazily into an iterator whose items are checked only when
consumed, so ``_plain`` consumes them (while the adapter is still alive).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, TypeAdapter


def _diff(expected: Any, got: Any, path: str = "$") -> list[str]:
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return [f"{path}: became {type(got).__name__}"]
        out = [f"{path}.{k}: dropped by the SDK type" for k in expected if k not in got]
        for k in expected:
            if k in got:
                out += _diff(expected[k], got[k], f"{path}.{k}")
        return out
    if isinstance(expected, list):
        if not isinstance(got, list | tuple) or len(got) != len(expected):
            return [f"{path}: list changed"]
        return [
            d
            for i, (e, g) in enumerate(zip(expected, got, strict=True))
            for d in _diff(e, g, f"{path}[{i}]")
        ]
    return []


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | Iterator):
        return [_plain(v) for v in value]
    return value


def assert_params(typed_dict: Any, payload: Any) -> None:
    """``payload`` validates as the SDK's request TypedDict and keeps every key."""
    # Keep the adapter alive while _plain walks the result: Iterable fields validate lazily
    # (ValidatorIterator) and iterating them after the adapter is freed panics in pydantic-core.
    adapter = TypeAdapter(typed_dict)
    got = _plain(adapter.validate_python(payload))
    problems = _diff(payload, got)
    assert not problems, "\n".join(problems)


def _extras(model: Any, path: str = "$") -> list[str]:
    out = []
    if isinstance(model, BaseModel):
        for k in model.__pydantic_extra__ or {}:
            out.append(f"{path}.{k}: not a field of {type(model).__name__}")
        for name in type(model).model_fields:
            out += _extras(getattr(model, name), f"{path}.{name}")
    elif isinstance(model, list | tuple):
        for i, v in enumerate(model):
            out += _extras(v, f"{path}[{i}]")
    elif isinstance(model, dict):
        for k, v in model.items():
            out += _extras(v, f"{path}.{k}")
    return out


def assert_model(model_cls: Any, payload: Any) -> Any:
    """``payload`` validates as the SDK's response model with no unknown fields anywhere."""
    if isinstance(model_cls, type) and issubclass(model_cls, BaseModel):
        model = model_cls.model_validate(payload)
    else:
        model = TypeAdapter(model_cls).validate_python(payload)
    problems = _extras(model)
    assert not problems, "\n".join(problems)
    return model
