"""A session as a fine-tuning example, in any training format a vendor documents.

The formats come from the registry (``Facts.training_formats``): ``flowdebug export TRACE
--format NAME`` and the app list them from there. An example is one JSON line (JSONL), and the
warnings say what the format cannot hold.
"""

from __future__ import annotations

import json
from typing import Any

from flowdebug import protocols
from flowdebug.errors import UsageError
from flowdebug.model import Conversation
from flowdebug.protocols.base import ConversionWarning
from flowdebug.redact import redact_text


def training_formats() -> list[str]:
    """Every training format a registered vendor documents, in registry order."""
    return [f for c in protocols.PROTOCOLS.values() for f in c.facts.training_formats]


def training_example(
    conv: Conversation, fmt: str
) -> tuple[dict[str, Any], list[ConversionWarning]]:
    """One example of ``conv`` in ``fmt``, and what the format could not hold."""
    for codec in protocols.PROTOCOLS.values():
        make = codec.facts.training_formats.get(fmt)
        if make is not None:
            got = make(conv)
            return got.value, list(got.warnings)
    raise UsageError(
        f"unknown training format {fmt!r}; choose one of: {', '.join(training_formats())}"
    )


def training_line(conv: Conversation, fmt: str) -> tuple[str, list[ConversionWarning]]:
    """:func:`training_example` as one JSONL line (with its newline), credentials redacted."""
    example, warnings = training_example(conv, fmt)
    text = json.dumps(example, ensure_ascii=False, separators=(",", ":"))
    return redact_text(text) + "\n", warnings
