"""docs/troubleshooting.md stays true: every message it quotes after "says" occurs in the harness's source, and every
config key, command and flag it names exists (as docs/usage.md, generated from the parsers, lists them)."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from harness.spec import RETIRED, known_keys

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "troubleshooting.md"
USAGE = ROOT / "docs" / "usage.md"

SPAN = re.compile(r"`([^`]+)`")
# The marker: "says", "say" or "saying" before one or more code spans (joined by ", ", " or ", " and ").
QUOTED = re.compile(r"\b(?:[Ss]ays?|saying)\s+((?:`[^`]+`(?:,?\s+(?:or|and)\s+|,\s+)?)+)")
# key= at the start of a word (not a --flag=value, not inside another name).
KEY = re.compile(r"(?<![\w.-])([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*)=")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
COMMAND_WORD = re.compile(r"[a-z][a-z0-9-]*")  # `harness COMMAND` names no command: a placeholder
SECTIONS = {key.split(".")[0] for key in known_keys() if "." in key}
NAMES = set(known_keys()) | {setting.split("=")[0] for setting in RETIRED}


@functools.lru_cache(maxsize=1)
def harness_strings() -> tuple[str, ...]:
    """Every string literal of harness/, an f-string's replacement fields as NUL: the messages the harness prints."""
    found = []
    for path in sorted((ROOT / "harness").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.append(node.value)
            elif isinstance(node, ast.JoinedStr):
                found.append("".join(v.value if isinstance(v, ast.Constant) else "\0" for v in node.values))
    return tuple(found)


def in_source(message: str) -> bool:
    """Whether one string literal of the harness holds `message`, each '…' in it standing for any text."""
    pattern = re.compile(".*?".join(re.escape(part) for part in message.split("…")), re.DOTALL)
    return any(pattern.search(s) for s in harness_strings())


@functools.lru_cache(maxsize=1)
def command_flags() -> dict[str, set[str]]:
    """Each command of docs/usage.md ('harness data cache') with the flags its table lists."""
    commands: dict[str, set[str]] = {}
    current = None
    for line in USAGE.read_text(encoding="utf-8").splitlines():
        if heading := re.fullmatch(r"## `(harness[^`]*)`", line):
            current = commands.setdefault(heading.group(1), set())
        elif current is not None and line.startswith("| `"):
            current.update(re.findall(r"`(--[\w-]+)`", line.split(" | ")[0]))
    return commands


def spans(text: str) -> list[str]:
    """The page's code spans, a span wrapped over two lines read as one line."""
    return [" ".join(span.split()) for span in SPAN.findall(text)]


def quoted_messages(text: str) -> list[str]:
    return [message for group in QUOTED.findall(text) for message in spans(group)]


def span_problems(span: str) -> list[str]:
    """What in one code span names a key, command or flag the harness does not have."""
    problems = []
    if "(" not in span:  # Python code (a factory's call, a layer) has keyword arguments, not config keys
        problems += [f"unknown key {key}= in `{span}`" for key in KEY.findall(span) if key not in NAMES]
        if span.split(".")[0] in SECTIONS and re.fullmatch(r"[a-z0-9_.]+", span) and span not in NAMES:
            problems.append(f"unknown key `{span}`")
    flags = FLAG.findall(span)
    words = span.split()
    if words[0] == "harness" and len(words) > 1 and COMMAND_WORD.fullmatch(words[1]):
        command = next((" ".join(words[:n]) for n in range(len(words), 1, -1)
                        if " ".join(words[:n]) in command_flags()), None)
        if command is None:
            return [*problems, f"no such command: `{span}`"]
        problems += [f"{command} has no flag {flag}" for flag in flags if flag not in command_flags()[command]]
    elif span.startswith("--") or words[0] == "harness":  # a flag alone, or `harness COMMAND …` of any command
        every = set().union(*command_flags().values())
        problems += [f"no command has the flag {flag}" for flag in flags if flag not in every]
    return problems


def page_problems(text: str) -> list[str]:
    """Every quoted message the harness does not print and every key, command or flag it does not have."""
    problems = [f"the harness prints no `{m}`" for m in quoted_messages(text) if not in_source(m)]
    for span in spans(text):
        problems += span_problems(span)
    return problems


def test_every_quoted_message_key_and_flag_is_the_harness_s():
    text = PAGE.read_text(encoding="utf-8")
    assert page_problems(text) == []


def test_the_page_quotes_many_messages_and_names_keys_and_commands():
    """The checks above have something to check: a page whose marker went missing would pass them vacuously."""
    text = PAGE.read_text(encoding="utf-8")
    assert len(quoted_messages(text)) >= 30
    named = spans(text)
    assert sum(bool(KEY.search(s)) for s in named) >= 20
    assert sum(s.startswith("harness ") for s in named) >= 10


def test_a_made_up_message_key_or_flag_is_caught():
    made_up = ("- **Says `the flux capacitor is not charged`, or `Set output_dir=DIR` and `Unknown config key`.** "
               "Set `solver.warp_factor=9`, `train.hyperdrive` or run `harness report --no-such-flag` "
               "(`harness report --force` and `--results DIR` exist; `harness teleport` does not).")
    assert page_problems(made_up) == [
        "the harness prints no `the flux capacitor is not charged`",
        "unknown key solver.warp_factor= in `solver.warp_factor=9`",
        "unknown key `train.hyperdrive`",
        "harness report has no flag --no-such-flag",
        "no such command: `harness teleport`",
    ]


def test_a_message_built_from_two_literals_must_be_quoted_by_its_parts():
    """'…' bridges the replacement fields of one literal, not text from two: a quote must be of one message."""
    assert in_source("The plan splits every batch over num_gpus=… processes, but … are running")
    assert not in_source("The plan splits every batch over many processes")


def test_the_page_is_linked_from_the_site_and_its_links_resolve():
    assert "troubleshooting.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "(troubleshooting.md)" in (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    for link in re.findall(r"\]\(([^)#]+)", PAGE.read_text(encoding="utf-8")):
        assert (PAGE.parent / link).is_file(), link
