"""OTLP JSON as plain values: the export's spans, their attributes and the errors that name
the JSON path that is wrong. The reading of ``gen_ai.*`` is :mod:`.reader`'s."""

from __future__ import annotations

import json
from typing import Any

from flowdebug import jsontext
from flowdebug.errors import CodecError

SOURCE = "otel"
_VALUE_KINDS = ("stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue")


def is_otlp(payload: Any) -> bool:
    """``payload`` has the shape of an OTLP JSON trace export (or JSON Lines of them)."""
    if isinstance(payload, list) and payload:
        return all(isinstance(p, dict) and "resourceSpans" in p for p in payload)
    return isinstance(payload, dict) and "resourceSpans" in payload


def error(path: str, message: str) -> CodecError:
    return CodecError(SOURCE, path, message)


def list_of(value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise error(path, f"expected a list, found {type(value).__name__}")
    return value


def dict_of(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise error(path, f"expected an object, found {type(value).__name__}")
    return value


def any_value(value: Any, path: str) -> Any:
    """An OTLP ``AnyValue`` (``{"stringValue": ...}``...) as plain JSON."""
    value = dict_of(value, path)
    if not value:
        return None
    kind = next((k for k in _VALUE_KINDS if k in value), None)
    if kind is None:
        if "bytesValue" in value:
            return value["bytesValue"]
        raise error(path, f"not an OTLP value: expected one of {', '.join(_VALUE_KINDS)}")
    v = value[kind]
    if kind == "intValue":
        try:
            return int(v)
        except (TypeError, ValueError):
            raise error(f"{path}.intValue", f"not an integer: {v!r}") from None
    if kind == "arrayValue":
        items = list_of(dict_of(v, f"{path}.arrayValue").get("values"), f"{path}.arrayValue.values")
        return [any_value(x, f"{path}.arrayValue.values[{i}]") for i, x in enumerate(items)]
    if kind == "kvlistValue":
        return attributes(dict_of(v, f"{path}.kvlistValue").get("values"), f"{path}.kvlistValue")
    return v


def attributes(value: Any, path: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, kv in enumerate(list_of(value, f"{path}.values" if path.endswith("Value") else path)):
        where = f"{path}[{i}]"
        kv = dict_of(kv, where)
        key = kv.get("key")
        if not isinstance(key, str):
            raise error(f"{where}.key", "an attribute needs a string key")
        out[key] = any_value(kv.get("value", {}), f"{where}.value")
    return out


def json_or_text(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return jsontext.embedded(value)
        except ValueError:
            return value
    return value


def json_attr(attrs: dict[str, Any], key: str, path: str) -> Any:
    value = attrs.get(key)
    if not isinstance(value, str):
        return value
    try:
        return jsontext.embedded(value)
    except ValueError as e:
        raise error(f"{path}[{key}]", f"not JSON ({e})") from None


def content_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value)


def start(span: dict[str, Any]) -> int:
    try:
        return int(span.get("startTimeUnixNano") or 0)
    except (TypeError, ValueError):
        return 0


def spans(payload: Any) -> list[tuple[dict[str, Any], str, str]]:
    """Every span with its JSON path and its scope's name."""
    exports = payload if isinstance(payload, list) else [payload]
    out = []
    for e, export in enumerate(exports):
        root = f"$[{e}]" if isinstance(payload, list) else "$"
        rs_list = list_of(dict_of(export, root).get("resourceSpans"), f"{root}.resourceSpans")
        for r, rs in enumerate(rs_list):
            rpath = f"{root}.resourceSpans[{r}]"
            for s, ss in enumerate(
                list_of(dict_of(rs, rpath).get("scopeSpans"), f"{rpath}.scopeSpans")
            ):
                spath = f"{rpath}.scopeSpans[{s}]"
                scope = dict_of(ss, spath).get("scope")
                name = scope.get("name") if isinstance(scope, dict) else None
                for k, span in enumerate(list_of(ss.get("spans"), f"{spath}.spans")):
                    out.append(
                        (
                            dict_of(span, f"{spath}.spans[{k}]"),
                            f"{spath}.spans[{k}]",
                            name if isinstance(name, str) else "",
                        )
                    )
    return out
