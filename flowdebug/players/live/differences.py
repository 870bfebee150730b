"""What an SDK changed between the codec's request body and the bytes it sent.

The codec's encoding is what flowdebug claims a vendor receives; the wire capture is what
the SDK really sent. :func:`wire_differences` lists every place they disagree, and marks the
changes an SDK is documented to make (see reference/wire/README.md; each vendor declares its
SDK's in its facts, ``Facts.sdk_rewrites``) as expected, so only real disagreements are
flagged.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from flowdebug.protocols import PROTOCOLS

Change = Literal["added", "removed", "changed", "renamed"]


@dataclass(frozen=True)
class Difference:
    """One disagreement at ``path`` (a JSON path into the codec's body).

    ``codec`` / ``wire`` are the two values (for ``renamed``: the two key spellings).
    ``expected`` is True for a documented SDK addition or rewrite, with ``reason`` saying
    which; anything else is a finding worth a look.
    """

    path: str
    change: Change
    codec: Any = None
    wire: Any = None
    expected: bool = False
    reason: str = ""

    def __str__(self) -> str:
        what = {
            "added": f"the SDK added {self.wire!r}",
            "removed": f"the SDK left out {self.codec!r}",
            "changed": f"the codec has {self.codec!r}, the SDK sent {self.wire!r}",
            "renamed": f"the SDK spells {self.codec!r} as {self.wire!r}",
        }[self.change]
        tag = f"expected ({self.reason})" if self.expected else "DIFFERENT"
        return f"{tag} {self.path}: {what}"


def wire_differences(codec_body: Any, wire_body: Any, protocol: str) -> list[Difference]:
    """Every difference between the codec's body and the body on the wire, in path order,
    each labelled expected (with the SDK rule it follows) or not."""
    raw: list[Difference] = []
    _diff(codec_body, wire_body, "$", raw)
    out = []
    for d in raw:
        reason = next((r for r in (rule(protocol, d) for rule in RULES) if r), "")
        out.append(Difference(d.path, d.change, d.codec, d.wire, bool(reason), reason))
    return out


def _key_path(path: str, key: str) -> str:
    return f"{path}.{key}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) else f"{path}[{key!r}]"


def _other_spelling(key: str) -> str:
    if "_" in key:
        head, *rest = key.split("_")
        return head + "".join(p[:1].upper() + p[1:] for p in rest)
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()


def _same_scalar(a: Any, b: Any) -> bool:
    # JSON true is not 1: compare booleans by identity, numbers by value (1 == 1.0).
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def _diff(a: Any, b: Any, path: str, out: list[Difference]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        renamed = {
            k: _other_spelling(k)
            for k in a
            if k not in b and _other_spelling(k) in b and _other_spelling(k) not in a
        }
        for k, v in a.items():
            if k in renamed:
                out.append(Difference(_key_path(path, k), "renamed", k, renamed[k]))
                _diff(v, b[renamed[k]], _key_path(path, k), out)
            elif k in b:
                _diff(v, b[k], _key_path(path, k), out)
            else:
                out.append(Difference(_key_path(path, k), "removed", v, None))
        taken = set(renamed.values())
        for k, v in b.items():
            if k not in a and k not in taken:
                out.append(Difference(_key_path(path, k), "added", None, v))
    elif isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            _diff(x, y, f"{path}[{i}]", out)
        for i in range(len(b), len(a)):
            out.append(Difference(f"{path}[{i}]", "removed", a[i], None))
        for i in range(len(a), len(b)):
            out.append(Difference(f"{path}[{i}]", "added", None, b[i]))
    elif isinstance(a, dict | list) or isinstance(b, dict | list) or not _same_scalar(a, b):
        out.append(Difference(path, "changed", a, b))


def _b64(text: Any) -> bytes | None:
    """The bytes of standard or URL-safe base64 (padding optional), or None."""
    if not isinstance(text, str):
        return None
    body = text.replace("-", "+").replace("_", "/").rstrip("=")
    try:
        return base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


Rule = Callable[[str, Difference], str]


def _stream_flag(protocol: str, d: Difference) -> str:
    if d.path == "$.stream" and d.change == "added" and d.wire is True:
        return "a stream was asked for: the SDK sends stream: true"
    return ""


def _declared(protocol: str, d: Difference) -> str:
    """A rewrite the vendor's facts declare for its SDK (``Facts.sdk_rewrites``)."""
    codec = PROTOCOLS.get(protocol)
    for rewrite in codec.facts.sdk_rewrites if codec is not None else ():
        if rewrite.change != d.change or not rewrite.path.search(d.path):
            continue
        if rewrite.same == "base64" and (_b64(d.codec) is None or _b64(d.codec) != _b64(d.wire)):
            continue
        return rewrite.reason
    return ""


RULES: list[Rule] = [_stream_flag, _declared]
