"""Added latency of ``flowdebug record``: the same requests sent straight to the emulator and
through the recording proxy in front of it, per vendor, plain and streaming.

Each request is one raw HTTP POST (httpx, one kept-alive connection) of the weather
conversation's first request, encoded by the vendor's codec, read to its last byte. Prints the
p50 and p95 of each path and their difference; the recorder saves every exchange to a fresh
SQLite store meanwhile (on its own thread, as in use). Target: a few ms added.

    .venv/bin/python bench/record_latency.py [--requests 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from flowdebug import protocols  # noqa: E402
from flowdebug.emulator.server import Emulator  # noqa: E402
from flowdebug.players.live.settings import LIVE_PROTOCOLS  # noqa: E402
from flowdebug.record.server import RecordingProxy  # noqa: E402
from flowdebug.record.sessions import Recorder  # noqa: E402
from flowdebug.store.sessions import open_store  # noqa: E402
from tests import cases  # noqa: E402


def _path(protocol: str, stream: bool) -> str:
    """The request path an SDK would use on a server standing in for the vendor."""
    facts = protocols.facts(protocol)
    help_lines = [h.split(" ", 1)[1] for h in facts.route_help]
    path = help_lines[-1] if stream and len(help_lines) > 1 else help_lines[0]
    model = facts.default_model or "m"
    path = path.replace("{model}", model).replace("{modelId}", model)
    path = path.replace("{v1,v1beta}", "v1beta")
    return path + ("?alt=sse" if stream and "stream" in path.lower() and "{" not in path else "")


def _timings(client: httpx.Client, url: str, body: bytes, n: int) -> list[float]:
    out = []
    for _ in range(n):
        started = time.perf_counter()
        with client.stream("POST", url, content=body, headers={"x-api-key": "bench"}) as r:
            for _ in r.iter_raw():
                pass
            assert r.status_code == 200, (url, r.status_code)
        out.append((time.perf_counter() - started) * 1000)
    return out


def _pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    db = Path(tempfile.mkdtemp()) / "record.db"
    store = open_store(str(db))
    recorder = Recorder(store, "bench")
    print(f"{'vendor':<18}{'mode':<8}{'direct p50':>11}{'p95':>8}{'proxy p50':>11}{'p95':>8}"
          f"{'added p50':>11}{'p95':>8}  (ms)")  # fmt: skip
    with Emulator() as emu, RecordingProxy(recorder, upstream=emu.url) as proxy:
        for protocol in LIVE_PROTOCOLS:
            for stream in (False, True):
                payload = protocols.get(protocol).encode_request(cases.WEATHER_INITIAL).value
                if stream and "stream" not in " ".join(protocols.facts(protocol).route_help):
                    payload = {**payload, "stream": True}
                body = json.dumps(payload).encode()
                path = _path(protocol, stream)
                with httpx.Client() as client:
                    _timings(client, emu.url + path, body, 5)  # warm both paths
                    _timings(client, proxy.url + path, body, 5)
                    direct = _timings(client, emu.url + path, body, args.requests)
                    through = _timings(client, proxy.url + path, body, args.requests)
                d50, d95 = _pct(direct, 50), _pct(direct, 95)
                p50, p95 = _pct(through, 50), _pct(through, 95)
                mode = "stream" if stream else "plain"
                print(f"{protocol:<18}{mode:<8}{d50:>11.2f}{d95:>8.2f}{p50:>11.2f}{p95:>8.2f}"
                      f"{p50 - d50:>11.2f}{p95 - d95:>8.2f}")  # fmt: skip
        started = time.perf_counter()
        recorder.flush(timeout=600)
        print(f"recorder caught up {time.perf_counter() - started:.2f} s after the last answer; "
              f"{len(store.list())} sessions, {db.stat().st_size / 1e6:.1f} MB")  # fmt: skip
    recorder.close()
    store.close()


if __name__ == "__main__":
    main()
