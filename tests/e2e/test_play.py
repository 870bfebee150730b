"""Play in Chromium at a projector's 1280x720: it runs the cycle when there is none yet, then
reveals it event by event at the chosen pace, each event with its sentence, the graph growing
with it; Pause stops it where it is. Screenshots go to artifacts/screenshots/ (kept by CI).

The page is tests/e2e/play_page.py (Play and the story panel over the debugger session) until
the Debugger itself draws them.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.e2e.app_server import ROOT, free_port, wait_idle

SHOTS = ROOT / "artifacts" / "screenshots"
PAGE = Path(__file__).resolve().parent / "play_page.py"
WIDTH, HEIGHT = 1280, 720
COUNT = re.compile(r"event (\d+) of (\d+)")

pytestmark = pytest.mark.browser


@contextmanager
def _serve(script: Path, db: Path) -> Iterator[str]:
    """``streamlit run script`` on a free port, as tests/e2e/app_server.py serves app.py."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FLOWDEBUG_DB": str(db)}
    log = db.parent / f"streamlit-{port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "streamlit", "run", str(script)),
                *("--server.port", str(port), "--server.headless", "true"),
                *("--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"),
                *("--server.fileWatcherType", "none"),
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                        if r.status == 200:
                            break
                except OSError:
                    if time.monotonic() > deadline:
                        raise RuntimeError(log.read_text(errors="replace")[-2000:]) from None
                    time.sleep(0.3)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture(scope="module")
def play_server(tmp_path_factory):
    with _serve(PAGE, tmp_path_factory.mktemp("play") / "sessions.db") as url:
        yield url


def _open(browser, url: str):
    ctx = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    page.goto(url, wait_until="domcontentloaded")
    _play_button(page).wait_for()
    wait_idle(page)
    return ctx, page


def _play_button(page):
    # The first: Streamlit keeps a hidden twin of a button with a shortcut.
    return page.locator(".st-key-play button").first


# Every state of the caption area and the graph's count, recorded in the page as the DOM
# changes: a poll from here could miss a beat while the browser is busy drawing a graph.
RECORD = """() => {
  window.__seen = [];
  const read = () => {
    const cap = document.querySelector('.st-key-fd_play_caption');
    const graph = document.querySelector('.st-key-play_graph');
    if (!cap) return;
    const text = cap.innerText, drawn = graph ? graph.innerText : '';
    const last = window.__seen[window.__seen.length - 1];
    if (!last || last[0] !== text || last[1] !== drawn) window.__seen.push([text, drawn]);
  };
  new MutationObserver(read).observe(document.body,
    {subtree: true, childList: true, characterData: true});
}"""


def _parse(text: str, drawn: str) -> tuple[int, str, int]:
    """(the event revealed, its caption, how many events the graph draws)."""
    m = COUNT.search(text)
    shown = re.search(r"revealed (\d+) of", drawn)
    caption = text.split("\n", 1)[1].strip() if m and "\n" in text else ""
    return (int(m[1]) if m else 0), caption, (int(shown[1]) if shown else 0)


def _now(page) -> tuple[int, str, int]:
    text = page.locator(".st-key-fd_play_caption").inner_text()
    return _parse(text, page.locator(".st-key-play_graph").inner_text())


def _button_says(page, word: str) -> None:
    """Until the Play / Pause button reads ``word`` (it is redrawn while the page reruns)."""
    page.wait_for_function(
        f"() => document.querySelector('.st-key-play button')?.innerText.includes('{word}')"
    )


def _record(page) -> None:
    """From now on, record what the caption area shows (read by :func:`_watch`)."""
    page.evaluate(RECORD)


def _watch(page, until: int, seconds: float = 40) -> list[tuple[int, str, int]]:
    """Each event the caption area showed since :func:`_record`, in order, as it read once
    its sentence and the graph caught up with its number, until event ``until``."""
    deadline = time.monotonic() + seconds
    seen: list[tuple[int, str, int]] = []
    settled = False
    while time.monotonic() < deadline:
        seen = []
        for text, drawn in page.evaluate("() => window.__seen"):
            state = _parse(text, drawn)
            if not state[0]:
                continue
            if seen and seen[-1][0] == state[0]:
                seen[-1] = state  # the rest of the area (the sentence, the graph) caught up
            else:
                seen.append(state)
        if seen and seen[-1][0] >= until:
            if settled:
                break
            settled = True  # once more, when the graph has drawn the last one too
            page.wait_for_timeout(800)
            continue
        page.wait_for_timeout(100)
    return seen


def test_play_runs_the_cycle_then_reveals_it_event_by_event(browser, play_server):
    ctx, page = _open(browser, play_server)
    assert "Press Play" in page.locator(".st-key-fd_play_caption").inner_text()
    page.locator(".st-key-fd_play_pace").get_by_text("0.5 s").click()
    wait_idle(page)
    _record(page)
    _play_button(page).click()
    seen = _watch(page, until=12)
    numbers = [n for n, _, _ in seen]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers), numbers
    assert numbers[-1] == 12 and len(numbers) >= 8, numbers  # one at a time, never skipping far
    assert max(b - a for a, b in itertools.pairwise(numbers)) <= 2, numbers
    # The graph grows with the caption: it draws exactly the events revealed so far.
    assert all(drawn == n for n, _, drawn in seen[1:]), seen
    captions = [c for _, c, _ in seen]
    expected = [
        "The user asks: “Weather in Paris and Tokyo?”",
        "The model asks for get_weather twice, in one reply: for Paris and for Tokyo.",
        "get_weather for Tokyo never answers: after 1 s the runtime sends an error result instead.",
        "The runtime hands the answer to the user: the cycle is over.",
    ]
    found = [captions.index(c) for c in expected if c in captions]
    assert len(found) == len(expected) and found == sorted(found), captions
    # At the end Play stops by itself and offers to start over.
    _button_says(page, "Play")
    ctx.close()


def test_pause_stops_where_it_is_and_play_goes_on(browser, play_server):
    ctx, page = _open(browser, play_server)
    _record(page)
    _play_button(page).click()  # the 1 s pace
    seen = _watch(page, until=3)
    assert seen and seen[-1][0] >= 3
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "play-midway.png"))
    _play_button(page).click()
    _button_says(page, "Play")
    wait_idle(page)
    paused = _now(page)
    page.wait_for_timeout(2_500)  # two and a half beats: nothing moves
    assert _now(page) == paused
    _record(page)
    _play_button(page).click()
    after = _watch(page, until=paused[0] + 1, seconds=10)
    after = [a for a in after if a[0] != paused[0]]  # the paused event, redrawn as Play starts
    assert after[0][0] == paused[0] + 1, (paused, after)  # on from there, not from the start
    ctx.close()


def test_the_story_acts_out_a_refusal_and_keeps_the_fields_one_click_away(browser, play_server):
    ctx, page = _open(browser, f"{play_server}/?fault=drop_result@%231")
    page.locator(".st-key-fd_play_pace").get_by_text("0.5 s").click()
    wait_idle(page)
    _record(page)
    _play_button(page).click()  # no trace yet: Play runs the cycle first
    captions = [c for _, c, _ in _watch(page, until=12)]
    back = next(c for c in captions if c.startswith("The runtime sends 1 result back"))
    assert "Anthropic, OpenAI Chat and Gemini refuse this request (HTTP 400)" in back, captions
    _button_says(page, "Play")
    wait_idle(page)
    refused = page.locator(".st-key-fd_story_refused").inner_text()
    assert "Anthropic, OpenAI Chat and Gemini stopped earlier, at step 4" in refused
    page.get_by_text("JSON fields per vendor").click()
    wait_idle(page)
    fields = page.locator(".st-key-fd_story_fields").inner_text()
    assert "stop_reason: end_turn" in fields and "finishReason: STOP" in fields
    story = page.locator(".st-key-fd_story")
    story.scroll_into_view_if_needed()
    SHOTS.mkdir(parents=True, exist_ok=True)
    story.screenshot(path=str(SHOTS / "play-story.png"))
    ctx.close()
