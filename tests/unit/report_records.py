"""Hand-made run records for the report tests, with the paper rows and the test suite they are reported against."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from harness.report.inputs import suite_from_mapping
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


def seeded(variant: str, seed: int, top1: float, train_s: float, **kw) -> dict:
    """make_record's record of a run of `variant` with `seed`, validated on 2000 videos."""
    record = make_record(variant, top1=top1, train_s=train_s, **kw)
    record["spec"]["seed"] = seed
    record["final"]["videos"] = 2000
    return record


def results_folder(root: Path, variants: tuple[str, ...] = ("baseline", "multigrid")) -> Path:
    """`root` made a results folder holding a smoke-scale record of each of `variants` of the smoke suite."""
    (root / "smoke" / "smoke").mkdir(parents=True)
    for variant in variants:
        record = make_record(variant, kind="baseline" if variant == "baseline" else "multigrid")
        (root / "smoke" / "smoke" / f"{variant}.json").write_text(json.dumps(record))
    return root
