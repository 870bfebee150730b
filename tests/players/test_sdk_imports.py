"""The SDKs load one thread at a time, httpx first: the Compare page asks every vendor at once,
and in a process that had loaded the OpenAI SDK (which looks httpx up in ``sys.modules``) but
not yet google-genai, the OpenAI call found httpx half-imported by Gemini's thread and was
refused ("partially initialized module 'httpx' has no attribute 'URL'")."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading

from tests.paths import FIXTURES

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import openai, openai.resources.chat, openai.resources.responses  # loaded, as by a page
    from flowdebug.emulator.server import Emulator
    from flowdebug.players.live.player import live_player
    from flowdebug.views.compare import compare
    from tests import cases

    fresh = [m for m in ("httpx", "google.genai") if m in sys.modules]
    with Emulator() as emu:
        players = [
            live_player(p, base_url=emu.base_url(p), api_key="k")
            for p in ("openai-chat", "openai-responses", "gemini", "anthropic")
        ]
        rows = compare(cases.WEATHER_INITIAL, players)
    print(json.dumps({"loaded": fresh, "rows": [[r.player, r.error, r.chosen] for r in rows]}))
    """
)


def test_every_vendor_answers_at_once_while_another_sdk_is_still_loading():
    root = FIXTURES.parent.parent
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["loaded"] == []  # the race needs httpx and google-genai still to load
    for player, error, chosen in got["rows"]:
        assert error is None, (player, error)
        assert chosen == ["get_weather", "get_weather"], player


def test_httpx_is_loaded_before_any_sdk_call_can_look_it_up():
    """The invariant that closes the race: once a sender is handed out, httpx is imported."""
    script = (
        "import sys\n"
        "from flowdebug.players.live import senders\n"
        "assert 'httpx' not in sys.modules\n"
        "senders.sender_module('openai-chat')\n"
        "print('httpx' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=FIXTURES.parent.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True"]


def test_a_loaded_sender_is_handed_out_without_waiting_for_the_import_lock():
    from flowdebug.players.live import senders

    first = senders.sender_module("openai-chat")
    got: list[object] = []
    with senders._IMPORTING:  # another thread is importing an SDK right now
        worker = threading.Thread(target=lambda: got.append(senders.sender_module("openai-chat")))
        worker.start()
        worker.join(timeout=5)
        assert not worker.is_alive()
    assert got == [first]
