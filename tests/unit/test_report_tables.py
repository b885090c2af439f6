"""Report tables from hand-made records: speedup arithmetic, paper-row matching, 'not run' rows, scale choice."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from harness.report.data_wait_table import data_wait_table, layout_text
from harness.report.inputs import NoSuchSetup, select_records, suite_from_mapping
from harness.report.setups_table import setups_table
from harness.report.table_model import fmt
from harness.report.table_text import tables_csv, tables_markdown
from harness.report.tables import NOT_IN_SUITE, NOT_RUN, OK, build_tables, paper_table, runs_table
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


def test_rows_of_the_same_name_are_told_apart_by_model():
    suite = suite_from_mapping("m", {"tables": ["3"], "runs": {
        "i3d_multigrid": {"recipe": "k400_i3d_r50", "paper": [["3", "multigrid"]]},
        "i3d_nl_multigrid": {"recipe": "k400_i3d_nl_r50", "paper": [["3", "multigrid"]]}}})
    table = paper_table("3", suite, {}, PAPER)
    assert _row(table, paper_row="i3d_r50: multigrid")["variant"] == "i3d_multigrid"
    assert _row(table, paper_row="i3d_nl_r50: multigrid")["variant"] == "i3d_nl_multigrid"
    runs = runs_table(suite, {}, PAPER)
    assert _row(runs, variant="i3d_multigrid")["paper_top1"] == 74.8
    assert _row(runs, variant="i3d_nl_multigrid")["paper_top1"] == 75.5


def test_map_tables_show_map():
    suite = suite_from_mapping("c", {"tables": ["6"], "runs": {
        "baseline": {"recipe": "charades_slowfast_r50_16x8", "paper": [["6", "baseline"]]}}})
    chosen = {"baseline": make_record("baseline", kind="baseline", metric="map", top1=12.5)}
    table = paper_table("6", suite, chosen, PAPER)
    keys = [c.key for c in table.columns]
    assert "map" in keys and "paper_map" in keys and "top1" not in keys
    assert table.rows[0]["map"] == 12.5 and table.rows[0]["paper_map"] == 38.0


def test_each_table_says_where_its_runs_weights_started_beside_the_papers():
    suite = suite_from_mapping("c", {"tables": ["6"], "runs": {
        "baseline": {"recipe": "charades_slowfast_r50_16x8", "paper": [["6", "baseline"]]}}})
    scratch = make_record("baseline", kind="baseline", metric="map", top1=12.5)
    (note,) = [n for n in paper_table("6", suite, {"baseline": scratch}, PAPER).notes if "scratch" in n]
    assert note.startswith("Trained from scratch where the paper starts from Kinetics-400 weights: baseline")
    tuned = copy.deepcopy(scratch)
    tuned["spec"]["model"]["pretrained"] = "/ckpt/k400/checkpoint_000012000.pt"
    notes = paper_table("6", suite, {"baseline": tuned}, PAPER).notes
    assert "Started from checkpoint_000012000.pt (model.pretrained): baseline." in notes
    assert not any("scratch" in n for n in notes)
    # Rows the paper trains from scratch too say nothing.
    assert not any("scratch" in n or "Started" in n for n in paper_table("1a", SUITE, {
        "baseline": make_record("baseline", kind="baseline")}, PAPER).notes)


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


def test_setups_table_compares_each_run_across_setups():
    def two(record):
        return {**record, "world_size": 2, "shape_checks": record["plan"]["iterations"]}

    one = {"baseline": make_record("baseline", kind="baseline", train_s=100.0, top1=40.0),
           "multigrid": make_record("multigrid", train_s=40.0, top1=38.0)}
    double = {"baseline": two(make_record("baseline", kind="baseline", train_s=80.0, top1=39.0)),
              "multigrid": two(make_record("multigrid", train_s=20.0, top1=37.0))}
    table = setups_table(SUITE, {"2 GPUs, eager steps": double, "1 GPU, eager steps": one}, "1 GPU, eager steps")
    assert [(r["variant"], r["setup"]) for r in table.rows] == [
        ("baseline", "1 GPU, eager steps"), ("baseline", "2 GPUs, eager steps"),
        ("multigrid", "1 GPU, eager steps"), ("multigrid", "2 GPUs, eager steps")]
    mg2 = _row(table, variant="multigrid", setup="2 GPUs, eager steps")
    assert mg2["speedup"] == pytest.approx(4.0) and mg2["vs_main"] == pytest.approx(2.0)
    assert mg2["top1"] == 37.0 and mg2["shape_checks"] == 20
    assert _row(table, variant="multigrid", setup="1 GPU, eager steps")["shape_checks"] is None
    assert setups_table(SUITE, {"1 GPU, eager steps": one}, "1 GPU, eager steps") is None


def test_csv_and_markdown_hold_every_table():
    chosen = {"baseline": make_record("baseline", kind="baseline", train_s=100.0),
              "multigrid": make_record("multigrid|pipe", train_s=20.0)}
    chosen["multigrid"]["variant"] = "multigrid"
    tables = build_tables(SUITE, chosen, PAPER)
    assert [t.id for t in tables] == ["1a", "runs", "data_wait", "provenance"]
    csv_text = tables_csv(tables)
    header = csv_text.splitlines()[0].split(",")
    assert header[0] == "table" and "speedup" in header and "paper_top1" in header
    assert any(line.startswith("1a,4-shape (default),multigrid,ok") for line in csv_text.splitlines())
    md = tables_markdown(tables)
    assert "## Table 1a" in md and "| 4-shape (default) | multigrid |" in md and "5.00×" in md


def test_phases_show_the_per_gpu_batches_and_bn_layout_that_ran():
    assert layout_text([8], 2, 1) == "8/GPU, BN split 2"
    assert layout_text([8, 2, 4], 1, 4) == "2–8/GPU, BN sync 4"
    assert layout_text([16], 1, 1) == "16/GPU, plain BN"
    assert layout_text([], 1, 1) == ""  # records from before layouts were noted
    record = make_record("multigrid")
    record["measured"]["phases"][0] |= {"per_gpu_batches": [1, 2, 4], "bn_splits": 1, "bn_sync": 2}
    rows = data_wait_table(SUITE, {"multigrid": record}).rows
    assert rows[0]["layout"] == "1–4/GPU, BN sync 2" and rows[-1]["phase"] == "all"
    assert rows[0]["ms_per_iteration"] == pytest.approx(1000 * 10.0 / 20)  # wall 10 s over 20 iterations


def test_runs_text_lists_every_run_for_the_terminal():
    from harness.report.page import runs_text

    chosen = [make_record("baseline", kind="baseline", train_s=100.0, top1=40.0),
              make_record("multigrid", train_s=25.0, top1=39.5)]
    lines = runs_text(SUITE, chosen).splitlines()
    assert lines[0] == "s at smoke scale:" and "speedup" in lines[1]
    assert lines[2].split()[:2] == ["baseline", "20"] and "1.00×" in lines[2]
    assert lines[3].split()[0] == "multigrid" and "4.00×" in lines[3] and lines[3].endswith("39.5")
    assert runs_text(SUITE, []) == "s: no complete runs recorded yet."


def test_smoke_scale_leads_with_the_ratios_and_marks_wall_clock_speedup_not_indicative():
    """Seconds-long smoke runs are dominated by fixed costs and noise: their wall-clock speedup misleads."""
    from harness.report.page import build_report, runs_text
    from harness.report.smoke_view import SMOKE_SPEEDUP_LABEL

    def records(scale):
        return [make_record("baseline", kind="baseline", train_s=100.0, iterations=64, gflops=8.0, scale=scale),
                make_record("multigrid", train_s=4.0, iterations=20, gflops=2.0, scale=scale)]

    header, _, mg = runs_text(SUITE, records("smoke")).splitlines()[1:4]
    labels = ["× fewer iters", "× fewer FLOPs", "wall-clock speedup*"]
    assert all(label in header for label in labels)
    assert [header.index(label) for label in labels] == sorted(header.index(label) for label in labels)
    assert "3.20×" in mg and "4.00×" in mg and "25.00×" in mg  # iterations, FLOPs, then the wall-clock ratio
    assert "not indicative" in runs_text(SUITE, records("smoke"))
    html, tables = build_report(SUITE, records("smoke"), PAPER)
    assert SMOKE_SPEEDUP_LABEL in html and "speedups are meaningful" not in html
    for table in (t for t in tables if t.id in ("1a", "runs")):
        keys = [c.key for c in table.columns if c.show]
        assert keys.index("iteration_ratio") < keys.index("flops_ratio") < keys.index("speedup")
        assert table.notes[0].startswith("Smoke scale:")
    # Proxy (and paper) scale: unchanged.
    text = runs_text(SUITE, records("proxy"))
    assert "not indicative" not in text and "× fewer FLOPs" not in text.splitlines()[1]
    html, tables = build_report(SUITE, records("proxy"), PAPER)
    assert SMOKE_SPEEDUP_LABEL not in html and "not indicative" not in html
    table_1a = next(t for t in tables if t.id == "1a")
    assert next(c for c in table_1a.columns if c.key == "speedup").label == "speedup"


def test_resumed_runs_are_noted_whether_the_record_says_so_or_its_times_do():
    fresh = make_record("baseline", kind="baseline", train_s=100.0)
    fresh |= {"resumed_from_iteration": 0, "outside_steps": {"total_s": 110.0}}

    def notes(multigrid: dict[str, Any]) -> dict[str, str]:
        return {r["variant"]: r["note"] for r in runs_table(SUITE, {"baseline": fresh, "multigrid": multigrid},
                                                             PAPER).rows}

    resumed = make_record("multigrid", train_s=30.0) | {"resumed_from_iteration": 8, "outside_steps": {"total_s": 12.0}}
    assert notes(resumed)["baseline"] == ""
    assert notes(resumed)["multigrid"].startswith("resumed at iteration 8:")
    # Records from before the trainer stored it: resumed when the last attempt is shorter than the train time.
    older = make_record("multigrid", train_s=30.0) | {"outside_steps": {"total_s": 12.0}}
    assert notes(older)["multigrid"].startswith("resumed:")
    assert notes(make_record("multigrid", train_s=30.0) | {"outside_steps": {"total_s": 40.0}})["multigrid"] == ""


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


def test_another_setups_run_is_timed_against_the_same_seed_on_the_same_card():
    def run(seed: int, gpu: str, train_s: float, impl: str = "auto") -> dict[str, Any]:
        record = copy.deepcopy(make_record("multigrid", train_s=train_s))
        record["spec"]["seed"], record["spec"]["train"]["sub_batch_bn"] = seed, impl
        record["hardware"] = {"gpu": gpu, "gpu_memory_gib": 80, "cpu_count": 16}
        record["step"] = {"mode": "cuda_graphs", "setup_s": 1.0, "specialisations": 3}
        return record

    main_newest, main_same_seed = run(3, "H100", 120.0), run(1, "H200", 110.0)
    triton = run(1, "H200", 100.0, "triton")
    main_setup, other = "1 GPU, cuda_graphs steps", "1 GPU, cuda_graphs steps, sub-batch BN triton"
    by_setup = {main_setup: {"multigrid": main_newest}, other: {"multigrid": triton}}
    table = setups_table(SUITE, by_setup, main_setup, [main_newest, main_same_seed])
    assert _row(table, setup=other)["vs_main"] == pytest.approx(1.1)  # seed 1 on the H200, not seed 3 on the H100
    assert _row(table, setup=main_setup)["vs_main"] == pytest.approx(1.0)
    elsewhere = run(1, "A100", 100.0, "triton")  # no run of the main setup on that card: no ratio
    table = setups_table(SUITE, {main_setup: {"multigrid": main_newest}, other: {"multigrid": elsewhere}},
                         main_setup, [main_newest, main_same_seed])
    assert _row(table, setup=other)["vs_main"] is None
    two_gpus = {**run(1, "H200", 55.0), "world_size": 2}  # the same card, more of them: timed against seed 1
    table = setups_table(SUITE, {main_setup: {"multigrid": main_newest}, "2 GPUs, cuda_graphs steps":
                                 {"multigrid": two_gpus}}, main_setup, [main_newest, main_same_seed])
    assert _row(table, setup="2 GPUs, cuda_graphs steps")["vs_main"] == pytest.approx(2.0)


def test_a_users_model_is_not_set_beside_the_papers_numbers():
    from harness.report.page import build_report

    chosen = {"baseline": make_record("baseline", kind="baseline", train_s=120.0),
              "multigrid": make_record("multigrid", train_s=40.0)}
    for record in chosen.values():
        record["plan"].update(model="mypkg.models:tiny", paper_model=False)
    table = paper_table("1a", SUITE, chosen, PAPER)
    row = _row(table, variant="multigrid")
    assert row["paper_speedup"] is None and row["paper_top1"] is None and row["paper_row"] == "4-shape (default)"
    assert "not the paper's model" in row["note"] and row["speedup"] == pytest.approx(3.0)
    runs = _row(runs_table(SUITE, chosen, PAPER), variant="multigrid")
    assert runs["paper_speedup"] is None and "not the paper's model" in runs["note"]
    html, _ = build_report(SUITE, list(chosen.values()), PAPER)
    assert "multigrid vs baseline on mypkg.models:tiny" in html
