"""docs/usage.md is what the parsers and RunSpec generate, and every config key has its line."""

from __future__ import annotations

from pathlib import Path

from harness.cli import build_parser
from harness.reference import KEYS, spec_keys, usage_markdown

ROOT = Path(__file__).resolve().parents[2]


def test_every_config_key_is_described_and_no_description_is_stale():
    keys = [key for key, _ in spec_keys()]
    assert sorted(keys) == sorted(KEYS), "harness/reference.py's KEYS must describe exactly RunSpec's keys"


def test_the_committed_reference_is_what_the_code_generates():
    committed = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")
    assert committed == usage_markdown(build_parser()), (
        "docs/usage.md is out of date: run `python -m harness.reference docs/usage.md`")


def test_the_reference_names_every_command_and_flag():
    text = usage_markdown(build_parser())
    for command in ("harness train", "harness reproduce", "harness report", "harness data check", "harness profile"):
        assert f"## `{command}`" in text
    report = text.split("## `harness report`", 1)[1].split("\n## ", 1)[0]
    assert "`--force`" in report and "`--results`" in report
    assert "| `data.root` | `null` |" in text and "| `solver.base_lr` | `0.1` |" in text
