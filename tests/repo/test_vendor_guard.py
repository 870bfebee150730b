"""A vendor is one folder: outside ``flowdebug/protocols/<vendor>/`` and the registry, no code
names a vendor in any form, and a seventh vendor registered at run time shows up everywhere
vendors are listed, counted or recognised."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

from flowdebug import protocols
from flowdebug.cli.main import main
from flowdebug.exchange.exports import export_protocols
from flowdebug.exchange.tool_imports import parse_tools
from flowdebug.protocols.facts import BareTool, Snippet
from flowdebug.views import vendors

REPO = Path(__file__).resolve().parents[2]
SCANNED = [REPO / "flowdebug", REPO / "ui", REPO / "pages", REPO / "sample_tools", REPO / "app.py"]
REGISTRY = REPO / "flowdebug" / "protocols" / "__init__.py"
# Strings (an f-string's text is its own token from Python 3.12 on) and names.
TEXT = {tokenize.STRING, tokenize.NAME, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


def _vendor_words() -> re.Pattern[str]:
    """Every spelling of a registered vendor the code could use, read from the registry: CLI
    and module names, the display name's first word, its SDK package and loggers. MCP is left
    out: it is also the name of a layer (flowdebug/mcp/) and of its SDK."""
    words: set[str] = set()
    for name, codec in protocols.PROTOCOLS.items():
        f = codec.facts
        if f.kind != "model":
            continue
        words |= {name, name.replace("-", "_"), f.short.split()[0]}
        words |= {w for sdk in filter(None, [f.sdk]) for w in re.split(r"[-_.]", sdk)}
        words |= {w for logger in f.sdk_loggers for w in re.split(r"[-_.]", logger)}
    words -= {"genai"}  # the second half of google-genai is no vendor's name
    return re.compile("|".join(sorted(map(re.escape, words), key=len, reverse=True)), re.I)


def _allowed() -> set[Path]:
    """The vendor folders' files and the SDK sender modules their facts name."""
    allowed = set((REPO / "flowdebug" / "protocols").glob("*/**/*.py"))  # parts/ packages too
    for codec in protocols.PROTOCOLS.values():
        if codec.facts.sdk_sender:
            allowed.add(REPO / (codec.facts.sdk_sender.replace(".", "/") + ".py"))
    return allowed


def _registry_lines() -> set[int]:
    """The registry: the import of the vendor folders and the tuple registering their codecs."""
    lines = REGISTRY.read_text("utf-8").splitlines()
    opening = "from flowdebug.protocols import ("
    start = next(i for i, line in enumerate(lines, 1) if line.startswith(opening))
    end = next(i for i, line in enumerate(lines, 1) if line.strip() == "register(_codec)")
    return set(range(start, end + 1))


def vendor_mentions(path: Path, words: re.Pattern[str]) -> list[str]:
    """Each string (f-strings and user-facing text included) and each name (imports,
    attributes) in ``path`` that spells a vendor; docstrings and comments are prose."""
    found = []
    prev = None
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text("utf-8")).readline):
        at_statement_start = prev in (
            None, tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE, tokenize.NL
        )  # fmt: skip
        docstring = tok.type == tokenize.STRING and at_statement_start
        spelled = tok.type in TEXT and words.search(tok.string)
        if spelled and not docstring:
            where = path.relative_to(REPO) if path.is_relative_to(REPO) else path
            found.append(f"{where}:{tok.start[0]}: {tok.line.strip()}")
        if tok.type not in (tokenize.COMMENT, tokenize.NL):
            prev = tok.type
    return found


def _scanned_files() -> list[Path]:
    return sorted(p for root in SCANNED for p in ([root] if root.is_file() else root.rglob("*.py")))


def test_nothing_outside_the_vendor_folders_and_the_registry_names_a_vendor():
    words, allowed, registry = _vendor_words(), _allowed(), _registry_lines()
    hits = [
        hit
        for path in _scanned_files()
        if path not in allowed
        for hit in vendor_mentions(path, words)
        if not (path == REGISTRY and int(hit.split(":")[1]) in registry)
    ]
    assert hits == []


@pytest.mark.parametrize(
    "line",
    [
        'names = ["anthropic", "openai-chat"]',
        'if protocol.startswith("openai"):',
        'match p:\n    case "gemini": pass',
        'label = f"{root} via Bedrock"',
        "_SDKS = {'botocore': 1}",
        "from flowdebug.protocols import anthropic",
    ],
)
def test_the_guard_sees_a_vendor_named_in_any_form(tmp_path, line):
    path = tmp_path / "probe.py"
    path.write_text(line + "\n", "utf-8")
    assert vendor_mentions(path, _vendor_words()), line


# -- a seventh vendor ---------------------------------------------------------------------------


@pytest.fixture
def toy():
    """A vendor only this test knows: its codec is the Anthropic codec under another name with
    facts of its own (a bare tool spelled ``{"toyTool": ...}``, a snippet, a base URL whose path
    is ``/toy/v9``, an SDK logger), registered through the registry's public function and
    removed afterwards."""
    import dataclasses

    base = protocols.get("anthropic")

    def request(tools):
        declared = [{"name": t["toyTool"], "input_schema": {"type": "object"}} for t in tools]
        return {"model": "-", "max_tokens": 1, "messages": [], "tools": declared}

    facts = dataclasses.replace(
        base.facts,
        name="toy",
        title="Toy Messages",
        short="Toy",
        api="Toy Chat",
        base_url="https://api.toy.example/toy/v9",
        bare_tools=(
            BareTool(
                title="Toy tool",
                keys='"toyTool"',
                recognise=lambda tool: "toyTool" in tool,
                request=request,
            ),
        ),
        snippet=Snippet("toy-sdk", "TOY_KEY", "TOY_BASE_URL", "import toy", "print(REQUEST)\n"),
        sdk_loggers=("toy_sdk",),
        sdk_sender=None,
    )

    class Toy:
        name = "toy"
        title = facts.title

        def __init__(self) -> None:
            self.facts = facts

        def __getattr__(self, attr):  # encode/decode: Anthropic's wire, under the toy's name
            return getattr(base, attr)

    protocols.register(Toy())  # type: ignore[arg-type]
    yield "toy"
    protocols.unregister("toy")


def test_a_seventh_vendor_is_listed_by_flowdebug_emulate(toy, capsys):
    from flowdebug.cli import live
    from flowdebug.emulator.server import Emulator

    assert toy in live._emulated()
    emulator = Emulator(scenario="weather", host="127.0.0.1", port=0)
    try:
        assert emulator.base_url(toy) == emulator.url + "/toy/v9"
    finally:
        emulator.stop()
    # The whole command, stopped as Ctrl-C would stop it once the banner is printed.
    import flowdebug.emulator.server as server

    def interrupted(self):
        raise KeyboardInterrupt

    mp = pytest.MonkeyPatch()
    mp.setattr(server.Emulator, "serve_forever", interrupted)
    try:
        assert main(["emulate", "--port", "0"]) == 0
    finally:
        mp.undo()
    out = capsys.readouterr().out
    assert re.search(r"^  toy +http://127\.0\.0\.1:\d+/toy/v9$", out, re.M), out


def test_a_seventh_vendor_is_in_the_snippet_list(toy):
    assert export_protocols("snippet")[-1] == toy
    assert toy in export_protocols("request")


def test_a_bare_tool_in_the_seventh_vendors_shape_is_pasted(toy):
    got = parse_tools('[{"toyTool": "ping"}]')
    assert (got.protocol, got.names, got.source) == ("toy", ["ping"], "Toy tools list")


def test_the_paste_error_names_the_seventh_vendors_keys(toy):
    from flowdebug.errors import CodecError

    with pytest.raises(CodecError) as err:
        parse_tools('[{"nothing": 1}]')
    assert err.value.reason.endswith('"toolSpec" (Bedrock toolSpec) or "toyTool" (Toy tool)')


def test_the_sidebar_counts_the_seventh_vendor(toy):
    assert (
        vendors.none_chosen_note() == "No protocol chosen: all seven are shown until you pick one."
    )
    assert vendors.model_vendors().endswith(", Bedrock or Toy")


def test_the_sidebar_counts_six_vendors_without_it():
    assert vendors.none_chosen_note() == "No protocol chosen: all six are shown until you pick one."


def test_verbose_logging_reaches_the_seventh_vendors_sdk_logger(toy):
    import logging

    from flowdebug.cli.options import setup_logging

    setup_logging(2)
    try:
        assert logging.getLogger("toy_sdk").level == logging.DEBUG
        assert logging.getLogger("botocore").level == logging.DEBUG
    finally:
        setup_logging(0)


def test_a_bare_bedrock_tool_is_pasted():
    pasted = '{"toolSpec": {"name": "ping", "inputSchema": {"json": {"type": "object"}}}}'
    got = parse_tools(pasted)
    assert (got.protocol, got.names, got.source) == ("bedrock", ["ping"], "Bedrock toolSpec")
