"""What a Markdown string from a page reads as on screen, for assertions on content the
pages escape with ``common.literal`` (``get\\_weather`` reads ``get_weather``)."""

import re

_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def shown(markdown: object) -> str:
    """``markdown`` with backslash escapes resolved and hard breaks as newlines."""
    return _ESCAPE.sub(r"\1", str(markdown)).replace("  \n", "\n")


def cells(table):
    """A table's DataFrame with every text cell as it reads on screen."""
    return table.map(lambda v: shown(v) if isinstance(v, str) else v)


def tables_with(app, *columns: str) -> list:
    """The tables on ``app``'s page whose columns are ``columns``, as :func:`cells` reads them."""
    found = [cells(t.value) for t in app.table]
    return [t for t in found if list(t.columns) == list(columns)]
