"""Write schemas/trace-v1.schema.json from the trace model (tests check it is up to date).

.venv/bin/python scripts/trace_schema.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flowdebug.exchange.exports import trace_schema  # noqa: E402

if __name__ == "__main__":
    path = ROOT / "schemas" / "trace-v1.schema.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(trace_schema(), indent=2, ensure_ascii=False) + "\n", "utf-8")
    print(path.relative_to(ROOT))
