"""Golden files: exact wire payloads under tests/golden/<protocol>/<case>.json.

Set FLOWDEBUG_UPDATE_GOLDEN=1 to rewrite them; review the diff before committing. A missing
golden fails under CI and is written (then fails loudly for review) elsewhere.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

GOLDEN = Path(__file__).parent / "golden"


def check_golden(protocol: str, case: str, payload: Any) -> None:
    path = GOLDEN / protocol / f"{case}.json"
    text = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("FLOWDEBUG_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"golden {path} is missing")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        pytest.fail(f"golden {path} was missing and has been written: review it")
    assert json.loads(path.read_text()) == payload, f"payload differs from {path}"
