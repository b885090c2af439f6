"""The paper tables from hand-made records (speedups, group baselines, not run rows, mAP); records other tests use."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from harness.report.inputs import suite_from_mapping
from harness.report.table_model import fmt
from harness.report.tables import NOT_IN_SUITE, NOT_RUN, OK, paper_table, runs_table
from harness.spec import RunSpec

BASELINE = {"long_cycle": False, "short_cycle": False}
PAPER = [
    # A slice of suites/paper/paper_results.csv (the report takes the rows as plain dicts).
    {"table": "1a", "dataset": "kinetics400", "model": "slowfast_r50", "row": "baseline", "method": "baseline",
     "epoch_factor": "1.0", "pretrain": "none", "T": "32", "crop": "224", "speedup": "1.0", "top1": "75.6",
     "top5": "91.9", "map": "", "train_days": "", "note": ""},
    {"table": "1a", "dataset": "kinetics400", "model": "slowfast_r50", "row": "2-shape", "method": "multigrid",
     "epoch_factor": "1.5", "pretrain": "none", "T": "32", "crop": "224", "speedup": "4.3", "top1": "75.5",
     "top5": "92.1", "map": "", "train_days": "", "note": "same iterations as default multigrid"},
    {"table": "1a", "dataset": "kinetics400", "model": "slowfast_r50", "row": "4-shape (default)",
     "method": "multigrid", "epoch_factor": "1.5", "pretrain": "none", "T": "32", "crop": "224", "speedup": "4.5",
     "top1": "76.4", "top5": "92.4", "map": "", "train_days": "", "note": ""},
    {"table": "2b", "dataset": "kinetics400", "model": "slowfast_r50", "row": "T=16 baseline", "method": "baseline",
     "epoch_factor": "1.0", "pretrain": "none", "T": "16", "crop": "224", "speedup": "1.0", "top1": "74.8",
     "top5": "91.4", "map": "", "train_days": "", "note": ""},
    {"table": "2b", "dataset": "kinetics400", "model": "slowfast_r50", "row": "T=16 multigrid", "method": "multigrid",
     "epoch_factor": "1.5", "pretrain": "none", "T": "16", "crop": "224", "speedup": "4.0", "top1": "75.2",
     "top5": "91.9", "map": "", "train_days": "", "note": ""},
    {"table": "2b", "dataset": "kinetics400", "model": "slowfast_r50", "row": "T=32 baseline", "method": "baseline",
     "epoch_factor": "1.0", "pretrain": "none", "T": "32", "crop": "224", "speedup": "1.0", "top1": "75.6",
     "top5": "91.9", "map": "", "train_days": "", "note": ""},
    {"table": "2b", "dataset": "kinetics400", "model": "slowfast_r50", "row": "T=32 multigrid", "method": "multigrid",
     "epoch_factor": "1.5", "pretrain": "none", "T": "32", "crop": "224", "speedup": "4.5", "top1": "76.4",
     "top5": "92.4", "map": "", "train_days": "", "note": ""},
    {"table": "3", "dataset": "kinetics400", "model": "i3d_r50", "row": "multigrid", "method": "multigrid",
     "epoch_factor": "1.5", "pretrain": "imagenet", "T": "16", "crop": "224", "speedup": "3.9", "top1": "74.8",
     "top5": "91.7", "map": "", "train_days": "", "note": ""},
    {"table": "3", "dataset": "kinetics400", "model": "i3d_nl_r50", "row": "multigrid", "method": "multigrid",
     "epoch_factor": "1.5", "pretrain": "imagenet", "T": "16", "crop": "224", "speedup": "3.3", "top1": "75.5",
     "top5": "92.4", "map": "", "train_days": "", "note": ""},
    {"table": "6", "dataset": "charades", "model": "slowfast_r50", "row": "baseline", "method": "baseline",
     "epoch_factor": "1.0", "pretrain": "kinetics400", "T": "64", "crop": "224", "speedup": "1.0", "top1": "",
     "top5": "", "map": "38.0", "train_days": "", "note": ""},
]


def tiny_spec(multigrid: bool = True, **sections: dict[str, Any]) -> dict[str, Any]:
    """A valid spec dict whose plan is a few dozen iterations (like the smoke runs)."""
    spec = RunSpec().to_dict()
    spec["solver"].update(batch_size=2, steps=[0, 2, 3], max_epoch=4, warmup_epochs=1.0)
    spec["data"].update(name="synthetic", train_videos=32, num_frames=8, crop_size=32, jitter=[36, 48])
    spec.update(num_gpus=1, scale="smoke")
    if not multigrid:
        spec["multigrid"].update(BASELINE)
    for name, values in sections.items():
        spec[name].update(values)
    return spec


def make_record(variant: str, *, kind: str = "multigrid", train_s: float = 10.0, iterations: int = 20,
                gflops: float = 1.0, top1: float | None = 50.0, metric: str = "top", scale: str = "smoke",
                date: str = "2026-01-01T00:00:00+00:00", recipe: str = "k400_slowfast_r50_8x8",
                spec: dict[str, Any] | None = None, status: str = "complete") -> dict[str, Any]:
    spec = copy.deepcopy(spec or tiny_spec(kind != "baseline"))
    spec["scale"] = scale
    final = {"epoch": 4, "map": top1} if metric == "map" else {"epoch": 4, "top1": top1, "top5": 90.0}
    return {
        "record_version": 1, "run_id": f"id-{variant}", "suite": "s", "recipe": recipe, "variant": variant,
        "status": status, "spec": spec,
        "plan": {"kind": kind, "max_epoch": 4, "iterations": iterations, "baseline_iterations": 64,
                 "iteration_ratio": 64 / iterations},
        "commit": "0123456789abcdef0123456789abcdef01234567", "date": date,
        "versions": {"python": "3.11", "torch": "2.4"}, "hardware": {"cpu": "Test CPU", "cpu_count": 2},
        "world_size": 1, "precision": "fp32",
        "measured": {"phases": [{"phase": 0, "iterations": iterations, "clips": 2 * iterations,
                                 "data_wait_s": train_s / 4, "compute_s": 3 * train_s / 4, "wall_s": train_s,
                                 "clips_per_s": 2 * iterations / train_s, "data_wait_share": 0.25}],
                     "iterations": iterations, "clips": 2 * iterations, "train_s": train_s,
                     "data_wait_s": train_s / 4, "compute_s": 3 * train_s / 4, "data_wait_share": 0.25,
                     "eval_s": 1.0, "forward_gflops": gflops, "peak_memory_gib": 0.0},
        "evals": [final], "final": final, "bad_videos": {"bad_videos": 0},
    }


SUITE = suite_from_mapping("s", {
    "description": "test suite", "tables": ["1a"],
    "runs": {
        "baseline": {"recipe": "k400_slowfast_r50_8x8", "paper": [["1a", "baseline"]],
                     "overrides": ["multigrid.long_cycle=false", "multigrid.short_cycle=false"]},
        "multigrid": {"recipe": "k400_slowfast_r50_8x8", "paper": [["1a", "4-shape (default)"]]},
        "imagenet_multigrid": {"recipe": "k400_slowfast_r50_8x8", "requires": ["model.pretrained"]},
    }})


def _row(table, **match):
    return next(r for r in table.rows if all(r.get(k) == v for k, v in match.items()))


def test_speedup_is_baseline_wall_clock_over_run_wall_clock():
    chosen = {"baseline": make_record("baseline", kind="baseline", train_s=120.0, iterations=64, gflops=8.0),
              "multigrid": make_record("multigrid", train_s=30.0, iterations=20, gflops=2.0)}
    table = paper_table("1a", SUITE, chosen, PAPER)
    mg = _row(table, paper_row="4-shape (default)")
    assert mg["status"] == OK and mg["variant"] == "multigrid"
    assert mg["speedup"] == pytest.approx(4.0)
    assert mg["iteration_ratio"] == pytest.approx(3.2)
    assert mg["flops_ratio"] == pytest.approx(4.0)
    assert mg["paper_speedup"] == 4.5 and mg["paper_top1"] == 76.4
    assert mg["train_s"] == 30.0 and mg["gflops"] == 2.0 and mg["top1"] == 50.0
    assert _row(table, paper_row="baseline")["speedup"] == pytest.approx(1.0)
    assert fmt(mg["speedup"], "ratio") == "4.00×"


def test_rows_without_records_are_not_run_and_paper_rows_outside_the_suite_are_marked():
    chosen = {"multigrid": make_record("multigrid")}
    table = paper_table("1a", SUITE, chosen, PAPER)
    base = _row(table, paper_row="baseline")
    assert base["status"] == NOT_RUN and "no record yet" in base["note"]
    mg = _row(table, paper_row="4-shape (default)")
    assert mg["speedup"] is None and "baseline has no record" in mg["note"]
    other = _row(table, paper_row="2-shape")
    assert other["status"] == NOT_IN_SUITE and "same iterations as default multigrid" in other["note"]
    runs = runs_table(SUITE, chosen, PAPER)
    imagenet = _row(runs, variant="imagenet_multigrid")
    assert imagenet["status"] == NOT_RUN and "needs model.pretrained" in imagenet["note"]


def test_each_row_is_compared_with_the_baseline_of_its_own_group():
    suite = suite_from_mapping("g", {"tables": ["2b"], "runs": {
        "t16_baseline": {"recipe": "k400_slowfast_r50_16f", "paper": [["2b", "T=16 baseline"]]},
        "t16_multigrid": {"recipe": "k400_slowfast_r50_16f", "paper": [["2b", "T=16 multigrid"]]},
        "baseline": {"recipe": "k400_slowfast_r50_8x8", "paper": [["2b", "T=32 baseline"]]},
        "multigrid": {"recipe": "k400_slowfast_r50_8x8", "paper": [["2b", "T=32 multigrid"]]}}})
    chosen = {"t16_baseline": make_record("t16_baseline", kind="baseline", train_s=50.0),
              "t16_multigrid": make_record("t16_multigrid", train_s=25.0),
              "baseline": make_record("baseline", kind="baseline", train_s=300.0),
              "multigrid": make_record("multigrid", train_s=60.0)}
    table = paper_table("2b", suite, chosen, PAPER)
    assert _row(table, paper_row="T=16 multigrid")["speedup"] == pytest.approx(2.0)
    assert _row(table, paper_row="T=32 multigrid")["speedup"] == pytest.approx(5.0)


def test_map_tables_show_map():
    suite = suite_from_mapping("c", {"tables": ["6"], "runs": {
        "baseline": {"recipe": "charades_slowfast_r50_16x8", "paper": [["6", "baseline"]]}}})
    chosen = {"baseline": make_record("baseline", kind="baseline", metric="map", top1=12.5)}
    table = paper_table("6", suite, chosen, PAPER)
    keys = [c.key for c in table.columns]
    assert "map" in keys and "paper_map" in keys and "top1" not in keys
    assert table.rows[0]["map"] == 12.5 and table.rows[0]["paper_map"] == 38.0
