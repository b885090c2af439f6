"""Which records a report reads: one scale, one setup, the runs of other cards on the main card's time scale."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from harness.report.inputs import NoSuchSetup, select_records
from harness.report.table_text import tables_markdown
from harness.report.tables import build_tables, runs_table

from .report_records import PAPER, SUITE, make_record


def test_one_scale_and_every_run_of_a_variant_are_reported():
    records = [make_record("baseline", kind="baseline", train_s=1.0, date="2026-01-01T00:00:00+00:00"),
               make_record("baseline", kind="baseline", train_s=2.0, date="2026-01-02T00:00:00+00:00"),
               make_record("multigrid", scale="proxy", date="2026-01-03T00:00:00+00:00"),
               make_record("multigrid", status="failed"),
               make_record("stranger")]
    scale, chosen, notes = select_records(SUITE, records)
    assert scale == "proxy" and set(chosen) == {"multigrid"}
    scale, chosen, notes = select_records(SUITE, records, "smoke")
    # The same seed run twice: both runs count, the rerun named.
    assert set(chosen) == {"baseline"} and chosen["baseline"]["measured"]["train_s"] == 1.5
    assert chosen["baseline"]["seeds"]["n"] == 2
    text = " ".join(notes)
    assert "proxy scale left out" in text and "a rerun of 'baseline' seed 0" in text and "'failed'" in text
    assert "not in the suite" in text


def test_records_of_another_setup_are_not_mixed_in():
    """A 2-GPU or CUDA-graph run times differently: the report keeps to the newest record's setup."""
    one_gpu = make_record("baseline", kind="baseline", train_s=1.0, date="2026-01-01T00:00:00+00:00")
    two_gpus = {**make_record("multigrid", date="2026-01-02T00:00:00+00:00"), "world_size": 2}
    graphed = {**make_record("baseline", kind="baseline", date="2026-01-03T00:00:00+00:00"),
               "step": {"mode": "cuda_graphs", "setup_s": 1.0, "specialisations": 3}}
    _, chosen, notes = select_records(SUITE, [one_gpu, two_gpus])
    assert set(chosen) == {"multigrid"} and chosen["multigrid"]["world_size"] == 2
    assert "1 record(s) run with 1 GPU, eager steps are compared in the setups table only" in " ".join(notes)
    _, chosen, notes = select_records(SUITE, [one_gpu, two_gpus, graphed])
    assert set(chosen) == {"baseline"} and chosen["baseline"]["step"]["mode"] == "cuda_graphs"
    assert len(notes) == 2
    # The setup with more runs wins over a newer one with fewer.
    one_gpu_mg = make_record("multigrid", date="2026-01-01T00:00:00+00:00")
    _, chosen, _ = select_records(SUITE, [one_gpu, one_gpu_mg, two_gpus])
    assert set(chosen) == {"baseline", "multigrid"} and chosen["multigrid"]["world_size"] == 1
    # --gpus N picks the setup on N GPUs even with fewer runs, and names what it cannot find.
    _, chosen, notes = select_records(SUITE, [one_gpu, one_gpu_mg, two_gpus], gpus=2)
    assert set(chosen) == {"multigrid"} and chosen["multigrid"]["world_size"] == 2
    assert "chosen with --gpus 2" in " ".join(notes)
    with pytest.raises(NoSuchSetup, match="no complete records run on 8 GPU"):
        select_records(SUITE, [one_gpu, two_gpus], gpus=8)
    # Sub-batch BN through other kernels times differently too: its own setup, never another seed of the default.
    triton = copy.deepcopy(make_record("multigrid", date="2026-01-04T00:00:00+00:00"))
    triton["spec"]["train"]["sub_batch_bn"] = "triton"
    _, chosen, notes = select_records(SUITE, [one_gpu, one_gpu_mg, triton])
    assert chosen["multigrid"]["seeds"]["n"] == 1 and chosen["multigrid"]["spec"]["train"]["sub_batch_bn"] == "auto"
    assert "1 record(s) run with 1 GPU, eager steps, sub-batch BN triton are compared in the setups table" in \
        " ".join(notes)
    # So does plain BN through other kernels.
    triton_plain = copy.deepcopy(make_record("multigrid", date="2026-01-05T00:00:00+00:00"))
    triton_plain["spec"]["train"]["plain_bn_impl"] = "triton"
    _, chosen, notes = select_records(SUITE, [one_gpu, one_gpu_mg, triton_plain])
    assert chosen["multigrid"]["spec"]["train"].get("plain_bn_impl", "cudnn") == "cudnn"
    assert "1 record(s) run with 1 GPU, eager steps, plain BN triton are compared in the setups table" in \
        " ".join(notes)


def _on_gpu(record: dict[str, Any], gpu: str, seed: int = 0) -> dict[str, Any]:
    record = copy.deepcopy(record)
    record["spec"]["train"]["device"] = "cuda"
    record["spec"]["seed"] = seed
    record["hardware"] = {**record["hardware"], "gpu": gpu}
    return record


def test_runs_on_another_card_are_compared_with_that_cards_baseline():
    """Seeds on card A, a later multigrid run on the slower card B: its speedup is B's baseline time over its
    time, shown in A's seconds; a run on a card without its own baseline counts for accuracy, not for time; both
    are said."""
    records = [_on_gpu(make_record("baseline", kind="baseline", train_s=100.0), "A", seed=0),
               _on_gpu(make_record("baseline", kind="baseline", train_s=110.0), "A", seed=1),
               _on_gpu(make_record("multigrid", train_s=42.0), "A", seed=0),
               _on_gpu(make_record("baseline", kind="baseline", train_s=210.0), "B", seed=2),
               _on_gpu(make_record("multigrid", train_s=70.0), "B", seed=1),
               _on_gpu(make_record("multigrid", train_s=5.0, top1=59.0), "C", seed=2)]
    _, chosen, notes = select_records(SUITE, records)
    text = " ".join(notes)
    assert "run(s) trained on B: their times are shown in A seconds, scaled by 0.500" in text
    assert "run on C, which has no 1.0× baseline record of its own" in text and "its accuracy counts" in text
    assert chosen["baseline"]["seeds"]["train_s"] == [100.0, 110.0, 105.0]
    multigrid = chosen["multigrid"]
    assert multigrid["seeds"]["seeds"] == [0, 1, 2] and multigrid["seeds"]["train_s"] == [42.0, 35.0, None]
    assert multigrid["final"]["top1"] == pytest.approx(53.0) and multigrid["measured"]["train_s"] == 38.5
    speedup = runs_table(SUITE, chosen, PAPER).rows
    row = next(r for r in speedup if r["variant"] == "multigrid")
    assert row["speedup"] == pytest.approx(105.0 / 38.5)
    # The hardware the report names covers every seed, not only each run's first.
    assert [d.split("× ")[1] for d in multigrid["seeds"]["devices"]] == ["A", "B", "C"]
    assert select_records(SUITE, [*records[:3], records[5]])[1]["multigrid"]["seeds"]["train_s"] == [42.0, None]
    # A run with no seed timed on a card with a baseline (e.g. other pre-trained weights, run on a new card only)
    # cannot be compared at all: left out, so that an older record of it is not displaced by one without a time.
    _, chosen_c, notes = select_records(SUITE, [r for r in records if r["variant"] == "baseline"] + [records[5]])
    assert "multigrid" not in chosen_c and any("no seed of the run is timed" in n for n in notes)
    other_weights = copy.deepcopy(records[5])
    other_weights["spec"]["model"]["pretrained"] = "other.pt"
    _, chosen_o, notes = select_records(SUITE, [*records[:3], other_weights])
    # Records of other settings are named for their settings, whatever card they ran on.
    assert chosen_o["multigrid"]["seeds"]["seeds"] == [0] and any("with other settings than its newest" in n
                                                                  for n in notes)
    assert not any("no seed of the run is timed" in n for n in notes)
    # One card: nothing converted, nothing said.
    _, chosen, notes = select_records(SUITE, records[:3])
    assert chosen["multigrid"]["measured"]["train_s"] == 42.0 and not any("scaled" in n for n in notes)


def _in_a_block(record: dict[str, Any]) -> dict[str, Any]:
    """`record` as run records are written since version 3: provenance in one block, not at the top level."""
    keys = ("commit", "date", "versions", "hardware")
    return {**{k: v for k, v in record.items() if k not in keys}, "record_version": 3,
            "provenance": {k: record[k] for k in keys}}


def test_records_with_a_provenance_block_report_as_the_older_shape_does():
    records = [_on_gpu(make_record("baseline", kind="baseline", train_s=100.0), "A", seed=0),
               _on_gpu(make_record("multigrid", train_s=42.0, date="2026-01-02T00:00:00+00:00"), "A"),
               _on_gpu(make_record("baseline", kind="baseline", train_s=210.0), "B", seed=2),
               _on_gpu(make_record("multigrid", train_s=70.0), "B", seed=1)]

    def report(records):
        _, chosen, notes = select_records(SUITE, records)
        return tables_markdown(build_tables(SUITE, chosen, PAPER)), notes

    old, new = report(records), report([_in_a_block(r) for r in records])
    assert new == old and "A seconds" in " ".join(old[1]) and "0123456789ab" in old[0]
