"""Vendor folders of one shape: every ``flowdebug/protocols/<vendor>/`` names the same job with
the same file, so finding a job in one vendor finds it in the next. A vendor may hold a file
for a job no other vendor has, declared below with its reason; a job it lacks has no file."""

from __future__ import annotations

from pathlib import Path

from flowdebug import protocols

PROTOCOLS = Path(__file__).resolve().parents[2] / "flowdebug" / "protocols"

# The jobs, one file each (or, when a job is too big for one file, a package of that name).
JOBS = {
    "__init__": "the vendor's face: its CODEC and its FACTS",
    "codec": "the facade the registry uses: detection and the six conversions",
    "request": "request bodies, their messages included <-> canonical conversations",
    "response": "response bodies <-> canonical model turns",
    "parts": "content blocks or parts <-> canonical parts, and the helpers the modules share",
    "tools": "tool declarations and tool choice <-> canonical tools",
    "stream": "streams, wire to wire, and how a call's arguments grow in one (for the replay)",
    "usage": "token counters <-> the canonical usage",
    "facts": "what the rest of flowdebug needs to know about the vendor, declared once",
    "rules": "what the vendor rejects: its lint rules",
    "errors": "the vendor's error bodies, as the emulator sends them",
    # jobs several vendors have, under one name everywhere
    "fragment": "a pasted fragment read as the whole payload it stands for",
    "hosted": "tools the vendor runs itself, as canonical hosted calls and results",
}

# Jobs only one vendor has: (vendor folder, module) -> why.
EXTRAS = {
    ("bedrock", "eventstream"): "AWS event-stream framing, the binary wire of ConverseStream",
    ("gemini", "spelling"): "the proto JSON spellings (snake_case and camelCase) the API reads",
    ("mcp", "tasks"): "the MCP tasks utility (2025-11-25) around a tool call",
    ("openai_chat", "finetune"): "a conversation as one line of OpenAI's fine-tuning JSONL",
}


def vendor_folders() -> list[Path]:
    return sorted(p for p in PROTOCOLS.iterdir() if (p / "__init__.py").is_file())


def entries(folder: Path) -> list[str]:
    """The folder's modules and packages, by module name."""
    return sorted(
        p.stem if p.is_file() else p.name
        for p in folder.iterdir()
        if (p.suffix == ".py" and p.is_file()) or (p / "__init__.py").is_file()
    )


def test_the_vendor_folders_are_the_registered_vendors():
    registered = {
        codec.__module__.split(".")[2] for codec in map(type, protocols.PROTOCOLS.values())
    }
    assert {p.name for p in vendor_folders()} == registered


def test_every_module_of_a_vendor_folder_is_a_job_or_a_declared_extra():
    odd = [
        f"{folder.name}/{name}"
        for folder in vendor_folders()
        for name in entries(folder)
        if name not in JOBS and (folder.name, name) not in EXTRAS
    ]
    assert odd == []


def test_every_vendor_has_the_jobs_every_codec_needs():
    missing = [
        f"{folder.name}/{job}"
        for folder in vendor_folders()
        for job in ("__init__", "codec", "facts", "request", "parts")
        if job not in entries(folder)
    ]
    assert missing == []


def test_a_declared_extra_exists_and_is_the_job_of_one_vendor_only():
    names = {name for _, name in EXTRAS}
    for folder, name in EXTRAS:
        assert name in entries(PROTOCOLS / folder), f"{folder}/{name} is declared but gone"
    assert len(names) == len(EXTRAS)
    assert not names & JOBS.keys()


def test_a_job_package_holds_only_modules():
    """A job too big for one file is a package of that name (``parts/``), one level deep."""
    for folder in vendor_folders():
        for name in entries(folder):
            package = folder / name
            if package.is_dir():
                assert name in JOBS, f"{folder.name}/{name}/ is no job"
                assert not [p for p in package.iterdir() if (p / "__init__.py").is_file()]


def test_entries_name_modules_and_job_packages_and_nothing_else(tmp_path: Path):
    for name in ("codec.py", "body.py", "notes.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "__init__.py").write_text("")
    (tmp_path / "data").mkdir()
    assert entries(tmp_path) == ["body", "codec", "parts"]
