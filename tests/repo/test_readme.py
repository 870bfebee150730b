"""The README, the door a user comes in by: the two set-up commands exactly, the tours'
screenshots present, the measurement history in docs/performance.md."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _shell_lines(text: str) -> list[str]:
    """Every line of the text's ``sh`` blocks."""
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    return [line for block in blocks for line in block.splitlines()]


def _section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_readme_sets_up_with_exactly_make_run_and_make_test():
    assert _shell_lines(_section("Two commands")) == ["make run", "make test"]


def test_the_two_commands_come_first_and_the_tours_right_after():
    titles = re.findall(r"^## (.+)$", README, re.M)
    assert titles[:2] == ["Two commands", "Tours"], titles


def test_every_image_the_readme_shows_exists():
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", README)
    images += re.findall(r'<img[^>]*\bsrc="([^"]+)"', README)
    assert images, "the tours show screenshots"
    missing = [i for i in images if not (ROOT / i).is_file()]
    assert missing == []


def test_each_tour_shows_a_screenshot_taken_by_the_script():
    tours = re.split(r"^### ", _section("Tours"), flags=re.M)[1:]
    assert len(tours) == 3
    for tour in tours:
        shown = re.findall(r"!\[[^\]]*\]\((docs/tour/[^)]+\.png)\)", tour)
        assert shown, tour.splitlines()[0]
    script = (ROOT / "scripts" / "tour_screenshots.py").read_text(encoding="utf-8")
    for name in re.findall(r"docs/tour/([\w-]+)\.png", _section("Tours")):
        assert f'"{name}"' in script, f"{name}.png is not taken by scripts/tour_screenshots.py"


def test_the_tour_screenshots_stay_small():
    total = sum(p.stat().st_size for p in (ROOT / "docs" / "tour").glob("*.png"))
    assert total < 1_500_000, total


def test_measurement_history_lives_in_docs_performance():
    # Tables that name commits (a 7-hex-digit hash in a row) belong to docs/performance.md.
    rows = [line for line in README.splitlines() if line.startswith("|")]
    commits = [row for row in rows if re.search(r"\b[0-9a-f]{7}\b", row)]
    assert commits == []
    assert "](docs/performance.md)" in README
    assert (ROOT / "docs" / "performance.md").is_file()
