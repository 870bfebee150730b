"""Validate Bedrock payloads against botocore's own service model for bedrock-runtime.

Requests go through botocore's ``ParamValidator`` (what ``client.converse(**params)`` runs
before sending), after the JSON wire's base64 blobs become the bytes boto3 takes. botocore
has no validator for output, so responses and stream events are walked against the output
shapes by ``shape_problems``, which also rejects unknown keys, missing required members,
union members other than exactly one, enum values and pattern or length violations.
"""

from __future__ import annotations

import base64
import functools
import re
from typing import Any

import botocore
import botocore.session
from botocore.model import OperationModel, ServiceModel, Shape
from botocore.validate import ParamValidator

VERSION = botocore.__version__


@functools.cache
def service() -> ServiceModel:
    return botocore.session.get_session().get_service_model("bedrock-runtime")


def operation(name: str) -> OperationModel:
    return service().operation_model(name)


def as_params(value: Any, shape: Shape) -> Any:
    """The JSON wire value as boto3 parameters: base64 blob strings become bytes."""
    match shape.type_name:
        case "structure" if isinstance(value, dict):
            members = shape.members  # type: ignore[attr-defined]
            return {k: as_params(v, members[k]) if k in members else v for k, v in value.items()}
        case "list" if isinstance(value, list):
            return [as_params(v, shape.member) for v in value]  # type: ignore[attr-defined]
        case "blob" if isinstance(value, str):
            return base64.b64decode(value)
        case _:
            return value


def request_problems(body: dict[str, Any], model_id: str = "anthropic.claude-sonnet-4") -> str:
    """botocore's ParamValidator report for ``body`` as Converse and ConverseStream
    parameters (the model id, which travels in the URL, added); "" when valid."""
    reports = []
    for op in ("Converse", "ConverseStream"):
        shape = operation(op).input_shape
        params = as_params({"modelId": model_id, **body}, shape)
        report = ParamValidator().validate(params, shape)
        if report.has_errors():
            reports.append(f"{op}: {report.generate_report()}")
    return "\n".join(reports)


# Members the Converse API returns beside the modelled ones (botocore's parser ignores them):
# TokenUsage's cacheReadInputTokenCount and cacheWriteInputTokenCount next to
# cacheReadInputTokens and cacheWriteInputTokens, as recorded in real responses.
EXTENSIONS = {"TokenUsage": frozenset({"cacheReadInputTokenCount", "cacheWriteInputTokenCount"})}


def shape_problems(value: Any, shape: Shape, path: str = "$") -> list[str]:
    """Every way ``value`` (JSON wire form) departs from ``shape``."""
    kind = shape.type_name
    if shape.metadata.get("document"):
        return []  # a Document is any JSON value
    if kind == "structure":
        if not isinstance(value, dict):
            return [f"{path}: expected an object for {shape.name}"]
        members = shape.members  # type: ignore[attr-defined]
        known = members.keys() | EXTENSIONS.get(shape.name, frozenset())
        out = [f"{path}.{k}: not a member of {shape.name}" for k in value if k not in known]
        out += [
            f"{path}.{k}: required by {shape.name}"
            for k in shape.required_members  # type: ignore[attr-defined]
            if k not in value
        ]
        if getattr(shape, "is_tagged_union", False) and len(value) != 1:
            out.append(f"{path}: {shape.name} is a union: exactly one member, got {sorted(value)}")
        for k, v in value.items():
            if k in members:
                out += shape_problems(v, members[k], f"{path}.{k}")
        return out
    if kind == "list":
        if not isinstance(value, list):
            return [f"{path}: expected an array for {shape.name}"]
        return [
            p
            for i, v in enumerate(value)
            for p in shape_problems(v, shape.member, f"{path}[{i}]")  # type: ignore[attr-defined]
        ]
    if kind == "map":
        if not isinstance(value, dict):
            return [f"{path}: expected an object for {shape.name}"]
        return [
            p
            for k, v in value.items()
            for p in shape_problems(v, shape.value, f"{path}.{k}")  # type: ignore[attr-defined]
        ]
    if kind == "string":
        if not isinstance(value, str):
            return [f"{path}: expected a string for {shape.name}"]
        meta = shape.metadata
        out = []
        if shape.enum and value not in shape.enum:
            out.append(f"{path}: {value!r} is not one of {shape.enum}")
        if "pattern" in meta and not re.fullmatch(meta["pattern"], value):
            out.append(f"{path}: {value!r} does not match {meta['pattern']}")
        if len(value) < meta.get("min", 0) or len(value) > meta.get("max", len(value)):
            out.append(f"{path}: length {len(value)} outside {meta.get('min')}..{meta.get('max')}")
        return out
    if kind in ("integer", "long"):
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{path}: expected an integer for {shape.name}"]
    if kind in ("float", "double"):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return [] if ok else [f"{path}: expected a number for {shape.name}"]
    if kind == "boolean":
        return [] if isinstance(value, bool) else [f"{path}: expected a boolean"]
    if kind == "blob":
        try:
            base64.b64decode(value, validate=True)
        except (TypeError, ValueError):
            return [f"{path}: expected base64 for {shape.name}"]
        return []
    return []  # document: any JSON value; timestamps do not occur in Converse output


def response_problems(body: Any) -> list[str]:
    return shape_problems(body, operation("Converse").output_shape)


def stream_event_problems(event: Any) -> list[str]:
    """An event ``{"<event-type>": payload}`` against the ConverseStreamOutput members."""
    stream = operation("ConverseStream").output_shape.members["stream"]  # type: ignore[attr-defined]
    return shape_problems(event, stream, "$event")
