"""ui.serving.theme_once: every run's new_session message carries the theme Streamlit itself
would write, built once per parsed config instead of once per run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from streamlit import config
from streamlit.proto.NewSession_pb2 import CustomThemeConfig
from streamlit.runtime import app_session

from ui.serving import theme_once

SECTIONS = ["theme"] + [f"theme.{c.value}" for c in config.CustomThemeCategories]


@pytest.fixture
def reparse() -> Iterator[object]:
    """Parse the config again with these flags; the project's own config once the test ends."""

    def parse(flags: dict[str, object]) -> None:
        config.get_config_options(force_reparse=True, options_from_flags=flags)

    yield parse
    parse({})


def _written(populate: object, section: str) -> bytes:
    msg = CustomThemeConfig()
    populate(msg, section)  # type: ignore[operator]
    return msg.SerializeToString()


def test_this_streamlit_has_the_step_to_wrap_and_twice_is_once():
    assert theme_once(), "Streamlit no longer builds new_session's theme in _populate_theme_msg"
    wrapped = app_session._populate_theme_msg
    assert theme_once() and app_session._populate_theme_msg is wrapped
    assert wrapped.flowdebug and callable(wrapped.__wrapped__)  # type: ignore[attr-defined]


def test_each_section_is_written_as_streamlit_writes_it_and_follows_a_new_parse(reparse):
    theme_once()
    cached = app_session._populate_theme_msg
    original = cached.__wrapped__  # type: ignore[attr-defined]
    assert set(SECTIONS) == {
        "theme", "theme.light", "theme.dark", "theme.sidebar", "theme.light.sidebar",
        "theme.dark.sidebar",
    }  # fmt: skip
    for colour in ("#123456", "#abcdef"):
        reparse(
            {
                "theme.primaryColor": colour,
                "theme.light.backgroundColor": "#fafafa",
                "theme.sidebar.textColor": colour,
                "theme.baseRadius": "small",
            }
        )
        for section in SECTIONS:
            assert _written(cached, section) == _written(original, section), section
            assert _written(cached, section) == _written(cached, section)  # from the cache
        msg = CustomThemeConfig()
        cached(msg, "theme")
        assert msg.primary_color == colour


def test_a_theme_with_nothing_set_leaves_the_message_untouched(reparse):
    theme_once()
    reparse({})
    outer = CustomThemeConfig()
    for _ in range(2):
        app_session._populate_theme_msg(outer.light, "theme.light")
        assert not outer.HasField("light") and outer.ByteSize() == 0
