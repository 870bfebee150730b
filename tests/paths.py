"""Where the tests' data lives: inside the repository, so a fresh clone passes alone."""

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# The verified reference payloads of the weather scenario in every protocol (see its README).
WIRE = FIXTURES / "wire"
# Payloads written by others (SDK tests, cassettes, vendor docs), each with its source.
REAL = FIXTURES / "real"
