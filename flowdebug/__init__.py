"""flowdebug: a visual debugger for the tool-calling cycle of language models."""

__version__ = "0.1.0"
