"""The benchmarks run: each script in a tiny mode prints its figures under their headings
(bench/: workshop_load, browser_step, step_profile). They are not timed tests; this only
keeps them working while the pages they drive change."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
CHROMIUM = Path("/usr/bin/chromium")

pytestmark = pytest.mark.bench


def run(*args: str, timeout: float = 120) -> str:
    out = subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def rows(text: str, first: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.split()[:1] == [first]]


def test_workshop_load_prints_latency_cpu_and_memory_for_the_floor_and_the_app():
    out = run(
        str(BENCH / "workshop_load.py"),
        *("--app", "floor,flowdebug", "--gc", "off", "--clients", "1", "--seconds", "1.5"),
        *("--big", "30", "--big-at", "1", "--think", "0.1", "0.2"),
    )
    header = next(line for line in out.splitlines() if line.startswith("code"))
    for heading in ("p50", "p95", "p99", "1k p95", "cpu%", "RSS MB", "MB/sess", "load 1m"):
        assert heading in header
    floor, app = rows(out, ROOT.name[:8])
    for r, name in ((floor, "floor"), (app, "flowdebug")):
        assert r[1:4] == [name, "off", "1"]
        assert int(r[4]) > 0  # Steps were pressed and timed
        assert float(r[6]) > 0  # p95
        assert r[-2] == "0"  # no error
    assert float(app[10]) > 0  # the 1,000-message column (here 30): its p95


def test_workshop_load_refuses_an_app_it_does_not_know():
    # "both" once ran the app without its 1,000-message seat and printed it as a row
    out = subprocess.run(
        [sys.executable, str(BENCH / "workshop_load.py"), "--app", "both"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2 and "--app both: use floor, flowdebug" in out.stderr, out.stderr
    assert not out.stdout


def test_workshop_load_rounds_pool_each_checkouts_steps():
    out = run(
        str(BENCH / "workshop_load.py"),
        *("--app", "floor", "--gc", "off", "--clients", "1", "--seconds", "1", "--rounds", "2"),
        *("--think", "0.1", "0.2"),
    )
    each = rows(out, ROOT.name[:8])
    runs = [r for r in each if r[1] == "floor"]
    assert len(runs) == 2
    (line,) = [line for line in out.splitlines() if "pooled over 2 rounds" in line]
    found = re.search(
        r": (\d+) steps, p50 \d+, p95 (\d+), p99 \d+ ms; .*p95 by round (\d+)/(\d+)$", line
    )
    assert found, line
    assert int(found[1]) == sum(int(r[4]) for r in runs)  # every round's Steps, pooled
    assert [found[3], found[4]] == [r[6] for r in runs]


def test_workshop_load_long_run_samples_memory_on_the_way():
    out = run(
        str(BENCH / "workshop_load.py"),
        *("--app", "floor", "--gc", "default", "--clients", "1", "--minutes", "0.05"),
        *("--every", "1", "--think", "0.1", "0.2"),
    )
    samples = [line for line in out.splitlines() if line.strip().startswith("t=")]
    assert len(samples) >= 2
    assert all(re.search(r"rss=\s*\d+\.\d MB", line) for line in samples)


def test_step_profile_names_where_a_step_goes():
    out = run(str(BENCH / "step_profile.py"), "--messages", "20", "--steps", "1", "--top", "5")
    assert re.search(r"== \d+ messages: \d+\.\d ms a Step", out)
    assert "by tottime" in out and "by cumulative" in out


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Chromium is not installed")
def test_browser_step_times_a_step_until_the_graphs_settle():
    out = run(str(BENCH / "browser_step.py"), "--sizes", "20", "--steps", "1")
    assert "median ms" in out
    (r,) = rows(out, "20")
    assert int(r[1]) == 1 and float(r[2]) > 0


def test_record_long_times_opening_and_stepping_a_recording():
    out = run(str(BENCH / "record_long.py"), "--exchanges", "5")
    assert "recorded 5 exchanges (anthropic)" in out
    assert "opened: 5 exchanges, 10 messages" in out
    (r,) = [line.split() for line in out.splitlines() if re.match(r"\s*\d+\.\d{3}\s", line)]
    # load, graphs, open, its CPU, step, its CPU (s); MB before, after, peak; Protocols CPU (s)
    assert len(r) == 10 and all(float(x) >= 0 for x in r)
    assert float(r[2]) > 0 and float(r[8]) >= float(r[6]) > 0
    assert "open under 2 s: " in out
