"""Every record, of any kind and version, gives back its provenance through one reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.provenance import provenance, provenance_of

RESULTS = Path(__file__).resolve().parents[2] / "results"
COMMITTED = sorted(RESULTS.rglob("*.json"))


def test_results_hold_records():
    assert len(COMMITTED) > 50  # the glob below must not pass by finding nothing


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: str(p.relative_to(RESULTS)))
def test_every_committed_record_names_its_commit_and_hardware(path):
    prov = provenance_of(json.loads(path.read_text()))
    assert prov["commit"] and prov["date"]
    assert prov["hardware"].get("cpu_count") and prov["versions"].get("python")


BLOCK = {"commit": "abc", "date": "2024-01-01T00:00:00+00:00", "versions": {"python": "3.11"},
         "hardware": {"gpu": "G", "cpu_count": 4}}


@pytest.mark.parametrize("record", [
    {"provenance": BLOCK, "suite": "s"},  # the block
    {**BLOCK, "suite": "s"},  # top level (run records before version 3)
    {**{k: v for k, v in BLOCK.items() if k != "commit"}, "git_commit": "abc"},  # the first loader benchmarks
], ids=["block", "top-level", "git_commit"])
def test_the_three_shapes_read_alike(record):
    assert provenance_of(record) == BLOCK


def test_a_record_without_provenance_reads_as_unknown():
    assert provenance_of({"suite": "s"}) == {"commit": None, "date": None, "versions": {}, "hardware": {}}


def test_the_writer_block_reads_back_unchanged():
    block = provenance()
    assert provenance_of({"provenance": block}) == block
