"""Handlers that answer from data, without running anything: ``fixed`` (always the same
reply), ``template`` (a ``str.format`` template filled from the arguments) and ``rules`` (the
first rule whose ``when`` / ``match`` fits the arguments gives the reply).

Each stays within bounds on a shared server: a template's widths and total size are capped,
and a rule's regex runs under a time limit.
"""

from __future__ import annotations

import json
import string
from typing import Annotated, Any, Literal

import regex
from pydantic import Field, JsonValue, field_validator

from flowdebug import hosting
from flowdebug.engine.execution.handler_io import (
    DEFAULT_ERROR_TYPE,
    Outcome,
    ToolContext,
    ToolError,
    exception_outcome,
)
from flowdebug.model import _Model

REGEX_TIMEOUT = 0.25  # seconds one rule's pattern may take on one argument
MAX_FIELD_WIDTH = 10_000  # the largest width or precision a result template may ask for


class _ErrorFlag(_Model):
    is_error: bool = False
    error_type: str | None = None  # when is_error: "exception" unless given

    def _outcome(self, text: str) -> Outcome:
        if self.is_error:
            return Outcome.failure(text, self.error_type or DEFAULT_ERROR_TYPE)
        return Outcome(content=text)


class Reply(_ErrorFlag):
    """A canned reply: ``result`` (text or a JSON value), optionally an error, optionally
    after ``delay`` seconds (a delay past the tool's timeout makes the call time out)."""

    result: JsonValue = ""
    delay: Annotated[float, Field(ge=0)] = 0.0

    def respond(self, ctx: ToolContext) -> Outcome:
        if self.delay and not ctx.sleep(self.delay):
            return Outcome.failure("cancelled", "timeout")
        outcome = Outcome.success(self.result)
        return self._outcome(outcome.content) if self.is_error else outcome


class FixedHandler(Reply):
    """Always the same reply."""

    kind: Literal["fixed"] = "fixed"

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> Outcome:
        return self.respond(ctx)


class TemplateHandler(_ErrorFlag):
    """``template.format(**arguments)``, e.g. ``"It is sunny in {location}"``."""

    kind: Literal["template"] = "template"
    template: str

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> Outcome:
        try:
            formatter = _BoundedFormatter(hosting.limits().result_chars)
            return self._outcome(formatter.vformat(self.template, (), arguments))
        except KeyError as exc:
            sent = ", ".join(arguments) or "none"
            return Outcome.failure(
                f"the result template needs the argument {exc.args[0]!r}, which the call "
                f"did not send (arguments sent: {sent})"
            )
        except (ValueError, IndexError, AttributeError, TypeError) as exc:
            return Outcome.failure(f"cannot fill the result template {self.template!r}: {exc}")


class _BoundedFormatter(string.Formatter):
    """``str.format`` for result templates, within bounds: a width or precision above
    :data:`MAX_FIELD_WIDTH` (``{q:>1500000000}`` would allocate 1.5 GB) and private
    attributes (``{q.__class__}``) are refused before anything is built, and filling stops
    once the fields add up to more than ``budget`` characters (a long argument repeated)."""

    _NUMBERS = regex.compile(r"\d+")

    def __init__(self, budget: int):
        self.left = budget

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        if "._" in field_name or field_name.startswith("_"):
            raise ValueError(f"{{{field_name}}}: private attributes are not available")
        return super().get_field(field_name, args, kwargs)

    def format_field(self, value: Any, format_spec: str) -> Any:
        for number in self._NUMBERS.findall(format_spec):
            if len(number) > 6 or int(number) > MAX_FIELD_WIDTH:
                raise ValueError(
                    f"the width or precision {number} in {{:{format_spec}}} is larger than "
                    f"{MAX_FIELD_WIDTH}"
                )
        text = super().format_field(value, format_spec)
        self.left -= len(text)
        if self.left < 0:
            raise ValueError(
                f"the filled template would be longer than {hosting.limits().result_chars} "
                "characters, the limit on this server"
            )
        return text


class Rule(Reply):
    """A reply given when every ``when`` field equals the argument of that name and every
    ``match`` regex is found in it (non-strings are matched as JSON). A pattern runs with the
    ``regex`` package under a time limit (:data:`REGEX_TIMEOUT`), so a catastrophic one
    (``^(a+)+$``) gives an error result instead of freezing the server."""

    when: dict[str, JsonValue] = Field(default_factory=dict)
    match: dict[str, str] = Field(default_factory=dict)

    @field_validator("match")
    @classmethod
    def _compiles(cls, patterns: dict[str, str]) -> dict[str, str]:
        for name, pattern in patterns.items():
            try:
                regex.compile(pattern)
            except regex.error as exc:
                raise ValueError(f"match.{name}: invalid regex {pattern!r}: {exc}") from None
        return patterns

    def applies(self, arguments: dict[str, Any]) -> bool:
        if any(k not in arguments or arguments[k] != v for k, v in self.when.items()):
            return False
        for name, pattern in self.match.items():
            if name not in arguments:
                return False
            value = arguments[name]
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            try:
                found = regex.search(pattern, text, timeout=REGEX_TIMEOUT, concurrent=True)
            except TimeoutError:
                raise ToolError(
                    f"the rule pattern {pattern!r} took longer than {REGEX_TIMEOUT:g}s on the "
                    f"argument {name!r}: simplify it (nested repeats such as (a+)+ backtrack)",
                    "timeout",
                ) from None
            if found is None:
                return False
        return True


class RulesHandler(_Model):
    """The first rule that applies replies; otherwise ``default``, or an error naming the
    arguments no rule matched."""

    kind: Literal["rules"] = "rules"
    rules: list[Rule] = Field(default_factory=list)
    default: Reply | None = None

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> Outcome:
        try:
            rule = next((r for r in self.rules if r.applies(arguments)), self.default)
        except ToolError as exc:
            return exception_outcome(exc)
        if rule is None:
            shown = json.dumps(arguments, ensure_ascii=False)
            return Outcome.failure(f"no mock rule matches the arguments {shown}")
        return rule.respond(ctx)
