"""The report page and its files from hand-made records: escaping, figures, CSV/Markdown, index, CLI."""

from __future__ import annotations

import argparse
import csv
import json
import re
from pathlib import Path

import pytest

from harness import cli_report
from harness.report import build_report, load_paper_rows, load_suite_def
from harness.report.build import compile_cost_table, scaling_table, scaling_tables, step_kernels_table, throughput_table
from harness.report.figures import MAX_POINTS, data_wait_figure, schedule_figure, schedule_series, tradeoff_figure
from harness.spec import RunSpec

from .test_report_tables import PAPER, SUITE, make_record, suite_from_mapping, tiny_spec

PNG = b"\x89PNG\r\n\x1a\n"
EVIL = "<script>alert('x')</script>"


def _evil_suite_and_records() -> tuple:
    suite = suite_from_mapping("s", {"description": f"desc {EVIL}", "tables": ["1a"], "runs": {
        EVIL: {"recipe": "k400_slowfast_r50_8x8", "paper": [["1a", "baseline"]]},
        "multigrid": {"recipe": "k400_slowfast_r50_8x8", "paper": [["1a", "4-shape (default)"]],
                      "figure": {"method": f"m {EVIL}", "epochs": 1.5}},
        "imagenet_multigrid": {"recipe": "k400_slowfast_r50_8x8", "requires": ["model.pretrained"]}}})
    base = make_record(EVIL, kind="baseline", train_s=100.0, spec=tiny_spec(False, data={"root": f"/d/{EVIL}"}))
    base["_source"] = f"smoke/{EVIL}.json"
    base["hardware"]["cpu"] = EVIL
    return suite, [base, make_record("multigrid", train_s=20.0)]


def test_report_escapes_every_string_and_is_a_pure_function_of_its_inputs():
    suite, records = _evil_suite_and_records()
    html, _ = build_report(suite, records, PAPER, notes=[f"note {EVIL}"])
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(" in html
    assert html.count("<img ") == 3  # Figures 3, 2 and the data-wait chart, all embedded
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html), "the page must be self-contained"
    assert "5.00×" in html and "not run" in html and "needs model.pretrained" in html
    assert "Smoke scale" in html
    again, _ = build_report(suite, list(reversed(records)), PAPER, notes=[f"note {EVIL}"])
    assert again == html  # same inputs (in any order), same bytes: no clock, no file reads


def test_report_without_records_says_so():
    html, tables = build_report(SUITE, [], PAPER)
    assert "No runs yet." in html and "0 of 3 runs" in html
    assert all(r["status"] != "ok" for r in tables[0].rows)


def test_figures_are_png():
    records = [make_record("baseline", kind="baseline", train_s=100.0), make_record("multigrid", train_s=20.0)]
    series = {r["variant"]: schedule_series(r) for r in records}
    assert len(series["multigrid"]) == 20 and len(series["baseline"]) == 64  # every iteration of short plans
    assert series["multigrid"][0]["per_gpu_batch"] > series["baseline"][0]["per_gpu_batch"]
    assert schedule_figure(series).startswith(PNG)
    points = [{"method": "baseline", "epochs_x": 1.0, "train_s": 100.0, "top1": 40.0},
              {"method": "multigrid", "epochs_x": 1.5, "train_s": 20.0, "top1": 41.0}]
    paper = [{"method": "multigrid", "epochs_x": 1.5, "speedup": 4.5, "top1": 76.4}]
    assert tradeoff_figure(points, paper).startswith(PNG)
    assert tradeoff_figure([], []) is None
    assert data_wait_figure(records[0]["measured"]["phases"] and [
        {"variant": "baseline", "phase": 0, "data_wait_share": 0.25}]).startswith(PNG)


def test_long_plans_are_sampled():
    record = {"spec": RunSpec().to_dict()}  # the paper's default recipe: hundreds of thousands of iterations
    series = schedule_series(record)
    assert len(series) <= MAX_POINTS + 1
    assert series[-1]["iteration"] > 100_000 and series[0]["iteration"] == 0


def _results(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    (results / "smoke" / "smoke").mkdir(parents=True)
    for record in (make_record("baseline", kind="baseline", train_s=90.0), make_record("multigrid", train_s=30.0)):
        (results / "smoke" / "smoke" / f"{record['variant']}.json").write_text(json.dumps(record))
    (results / "smoke" / "broken.json").write_text("{not json")
    return results


def test_cli_writes_html_csv_markdown_and_the_index(tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="harness")
    cli_report.register(parser.add_subparsers(dest="command", required=True))
    results, out = _results(tmp_path), tmp_path / "reports"
    args = parser.parse_args(["report", "--suite", "smoke", "--results", str(results), "--out", str(out)])
    assert args.func(args) == 0
    assert f"report: {out / 'smoke' / 'index.html'}" in capsys.readouterr().out
    html = (out / "smoke" / "index.html").read_text()
    assert "broken.json: unreadable" in html and "3.00×" in html and "2-core CPU (Test CPU)" in html
    rows = list(csv.DictReader((out / "smoke" / "tables.csv").open()))
    mg = next(r for r in rows if r["table"] == "1a" and r["variant"] == "multigrid")
    assert float(mg["speedup"]) == pytest.approx(3.0) and float(mg["paper_speedup"]) == 4.5
    assert "## Table 1a" in (out / "smoke" / "tables.md").read_text()
    index = (out / "index.html").read_text()
    assert 'href="smoke/index.html"' in index and "2 of 2" in index
    assert "kinetics_ablation" in index and "no report yet" in index
    with pytest.raises(SystemExit):
        parser.parse_args(["report"])


def test_real_suites_and_paper_rows_load():
    suite = load_suite_def("kinetics_generalization")
    assert suite.tables == ("2a", "2b", "2c")
    assert suite.run("imagenet_baseline").requires == ("model.pretrained",)
    assert {r["table"] for r in load_paper_rows()} >= {"1a", "3", "6"}


def test_profile_table_puts_predicted_speedups_beside_the_papers():
    from harness.report.build import profile_table

    profile = {"scale": "paper", "device": "cuda", "assumptions": "x",
               "provenance": {"hardware": {"gpu": "Some <GPU>"}, "commit": "abc"},
               "runs": [{"variant": "multigrid",
                         "paper": [{"table": "1a", "row": "4-shape (default)", "speedup": "4.5"}],
                         "iteration_ratio": 3.43, "predicted_gpu_hours": 2.0, "baseline_predicted_gpu_hours": 5.0,
                         "predicted_speedup": 2.5}]}
    table = profile_table(profile)
    assert table.title == "Predicted paper-scale speedups on Some <GPU>, eager steps"
    row = table.rows[0]
    assert row["speedup"] == 2.5 and row["paper_speedup"] == 4.5 and row["paper_rows"] == "1a: 4-shape (default)"
    assert "loader_speedup" not in [c.key for c in table.columns]

    profile["runs"][0]["loader_bound_speedup"] = 1.4  # `harness profile --data`: the loader caps multigrid
    profile["loader"] = {"source": "bench.json:cache"}
    table = profile_table(profile)
    assert table.title.endswith("with the loader") and table.id == "profile_eager_some_loader"
    keys = [c.key for c in table.columns]
    assert keys.index("speedup") < keys.index("loader_speedup") < keys.index("paper_speedup")
    assert table.rows[0]["loader_speedup"] == 1.4 and "bench.json:cache" in " ".join(table.notes)


def test_sub_batch_bn_profiles_get_their_own_tables_and_the_cost_per_shape():
    from harness.report.build import profile_table, sub_batch_bn_table
    from harness.report.overview import predicted_speedups

    def profile(impl, speedup, shapes):
        return {"scale": "paper", "device": "cuda", "step": "cuda_graphs", "assumptions": "x", "sub_batch_bn": impl,
                "provenance": {"hardware": {"gpu": "NVIDIA H100 80GB HBM3"}, "commit": "abc"},
                "runs": [{"variant": "multigrid", "paper": [], "iteration_ratio": 3.4, "predicted_gpu_hours": 1.0,
                          "baseline_predicted_gpu_hours": speedup, "predicted_speedup": speedup}],
                "shapes": shapes}

    shape = {"model": "slowfast_r50_8x8", "t": 8, "s": 112, "batch": 128, "bn_splits": 8}
    default = profile("auto", 2.95, [{**shape, "median_ms": 90.0, "plain_bn_ms": 72.0},
                                     {**shape, "bn_splits": 1, "median_ms": 70.0}])
    triton = profile("triton", 3.76, [{**shape, "median_ms": 60.0, "plain_bn_ms": 72.0}])
    ids = {profile_table(p).id for p in (default, triton)}
    assert ids == {"profile_cuda_graphs_h100", "profile_cuda_graphs_triton_h100"}
    assert profile_table(triton).title.endswith("sub-batch BN: triton")
    table = sub_batch_bn_table([default, triton])
    assert [(r["impl"], r["splits"], round(r["cost"], 1)) for r in table.rows] == [("auto", 8, 25.0),
                                                                                   ("triton", 8, -16.7)]
    assert sub_batch_bn_table([profile("auto", 3.0, [{**shape, "median_ms": 1.0}])]) is None
    # The overview predicts what the trainer does by default.
    assert predicted_speedups([triton, default])[0] == {"multigrid": 2.95}


def test_scaling_table_matches_each_shape_to_its_phase_on_one_gpu():
    def shape(t, per_gpu, global_batch, splits, sync, ms):
        return {"t": t, "s": 56, "per_gpu_batch": per_gpu, "global_batch": global_batch, "bn_splits": splits,
                "bn_sync": sync, "median_ms": ms}

    one = {"world_size": 1, "shapes": [shape(16, 64, 64, 2, 1, 100.0), shape(16, 64, 64, 4, 1, 80.0),
                                       shape(32, 8, 8, 1, 1, 40.0)],
           "predicted_s": {"multigrid": 50.0, "baseline_of_multigrid": 100.0}}
    two = {"world_size": 2, "shapes": [shape(16, 32, 64, 1, 1, 50.0), shape(16, 32, 64, 2, 1, 80.0),
                                       shape(32, 4, 8, 1, 2, 80.0)],
           "predicted_s": {"multigrid": 40.0, "baseline_of_multigrid": 40.0}}
    table = scaling_table([two, one])
    speedups = {(r["one_layout"], r["n_layout"]): r["scaling"] for r in table.rows}
    # 32 clips per BN group on both sides, then 16; the 2-GPU baseline shape synchronises BN over both GPUs.
    assert speedups == {("64/GPU, BN split 2", "32/GPU, plain BN"): 2.0,
                        ("64/GPU, BN split 4", "32/GPU, BN split 2"): 1.0,
                        ("8/GPU, plain BN", "4/GPU, BN sync 2"): 0.5}
    assert "multigrid 2.00× faster" in table.notes[0] and "multigrid 1.00× faster" in table.notes[1]
    assert "DDP eager steps" in table.notes[-1] and table.id == "scaling"
    assert "median over 15 synchronised steps" in table.notes[-1]  # records without `repeats` used the default
    assert "median over 15/30 synchronised" in scaling_table([{**two, "repeats": 30}, one]).notes[-1]
    assert scaling_table([one]) is None
    # Records of another step mode get their own table: eager and graphed steps are not compared shape by shape.
    graphed = [{**one, "step": "cuda_graphs"}, {**two, "step": "cuda_graphs", "predicted_s": {}}]
    tables = scaling_tables([one, two, *graphed, {**two, "world_size": 4, "step": "compile"}])
    assert [t.id for t in tables] == ["scaling", "scaling_cuda_graphs"]  # compile: no 1-GPU record, no table
    assert tables[1].title.endswith(", cuda_graphs steps") and len(tables[1].rows) == 3
    # The report shows scaling measured at the scale of its runs only (here: no runs, so none).
    _, tables = build_report(load_suite_def("kinetics_ablation"), [], PAPER,
                             scaling=[{**one, "scale": "proxy"}, {**two, "scale": "proxy"}])
    assert "scaling" not in {t.id for t in tables}


def test_weak_scaling_tables_compare_the_same_clips_per_gpu_and_keep_kernels_and_step_modes_apart():
    def shape(t, per_gpu, splits, ms):
        return {"t": t, "s": 224, "per_gpu_batch": per_gpu, "global_batch": per_gpu, "bn_splits": splits,
                "bn_sync": 1, "median_ms": ms, "clips_per_s": per_gpu / ms * 1e3}

    def record(world, step="eager", impl="auto", slow=1.0):
        shapes = [shape(32, 8, 1, 70.0 * slow), shape(16, 32, 2, 90.0 * slow)]
        for r in shapes:
            r["global_batch"] *= world
            r["clips_per_s"] *= world
        return {"world_size": world, "scale": "paper", "step": step, "fixed_per_gpu_batch": 8,
                "sub_batch_bn": impl, "shapes": shapes, "predicted_s": {}}

    runs = [record(1), record(2, slow=1.25), record(4, slow=1.0 / 0.9), record(1, "cuda_graphs"),
            record(4, "cuda_graphs", slow=2.0), record(1, impl="triton")]
    tables = scaling_tables(runs)
    # The triton records have one process count only: no table; eager and graphed steps each get one.
    assert [t.id for t in tables] == ["scaling_paper_eager_per_gpu8", "scaling_paper_cuda_graphs_per_gpu8"]
    eager = {(r["gpus"], r["shape"]): (round(r["efficiency"], 3), round(r["speedup"], 2)) for r in tables[0].rows}
    assert eager == {(2, "32×224²"): (0.8, 1.6), (2, "16×224²"): (0.8, 1.6),
                     (4, "32×224²"): (0.9, 3.6), (4, "16×224²"): (0.9, 3.6)}
    assert tables[0].notes[0].startswith("2 GPUs: efficiency 0.80–0.80")
    assert {r["efficiency"] for r in tables[1].rows} == {0.5}
    # Unlike a fixed global batch, weak scaling at paper scale is shown beside a proxy suite's runs.
    _, shown = build_report(load_suite_def("kinetics_ablation"), [], PAPER, scaling=runs)
    assert "scaling_paper_eager_per_gpu8" in {t.id for t in shown}


def test_step_kernels_table_shows_where_each_profiled_steps_time_goes():
    def row(recipe, mode, kernels):
        return {"recipe": recipe, "model": recipe, "t": 32, "s": 224, "batch": 8, "mode": mode, "ms_per_step": 65.0,
                "kernels": kernels}

    profiled = {"device_ms_per_step": 64.0, "busy_share": 64.0 / 65.0,
                "groups_ms": {"convolution": 29.0, "normalisation": 21.0, "elementwise": 14.0},
                "top": [{"name": "welford_reduce", "group": "normalisation", "ms_per_step": 11.0, "share": 0.17}]}
    record = {"rows": [row("k400_slowfast_r50_8x8", "eager", profiled), row("k400_slowfast_r50_8x8", "plain", None),
                       row("k400_i3d_r50", "eager", profiled)]}
    table = step_kernels_table([record], {"k400_slowfast_r50_8x8"})
    assert [(r["model"], r["mode"]) for r in table.rows] == [("k400_slowfast_r50_8x8", "eager")]
    only = table.rows[0]
    assert (only["convolution"], only["normalisation"], only["copy"]) == (29.0, 21.0, None)
    assert only["largest"] == "welford_reduce (17%)" and round(only["busy"], 3) == 0.985
    unprofiled = {"rows": [row("k400_slowfast_r50_8x8", "eager", None)]}
    assert step_kernels_table([unprofiled], {"k400_slowfast_r50_8x8"}) is None


def test_compile_cost_table_splits_each_compiled_modes_setup_into_its_stages():
    cost = {"compile_s": 30.0, "tracing_s": 6.0, "guards_s": 1.0, "aot_autograd_s": 8.0, "inductor_forward_s": 15.0,
            "inductor_backward_s": 20.0, "graphs": 2, "inductor_cache_hits": 0, "inductor_cache_misses": 4,
            "aot_autograd_cache_hits": 2, "aot_autograd_cache_misses": 0}
    row = {"recipe": "a", "model": "slowfast_r50_8x8", "t": 32, "s": 224, "batch": 8, "ms_per_step": 48.0,
           "setup_s": 56.5}
    record = {"device": "cpu", "rows": [{**row, "mode": "plain", "setup_s": 0.0, "compile": None},
                                        {**row, "mode": "compile_graphs", "compile": cost}]}
    table = compile_cost_table([record], {"a"})
    assert [r["mode"] for r in table.rows] == ["compile_graphs"]
    only = table.rows[0]
    assert (only["inductor_s"], only["rest_s"], only["graphs"]) == (35.0, 6.5, 2)
    assert (only["aot_cache"], only["inductor_cache"]) == ("2 of 2", "0 of 4")
    assert compile_cost_table([record], {"b"}) is None
    uncompiled = {"rows": [{**row, "mode": "cuda_graphs"}]}  # records from before the breakdown was kept
    assert compile_cost_table([uncompiled], {"a"}) is None


def test_throughput_table_keeps_the_suites_recipes_and_compares_each_mode_with_eager():
    def row(recipe, mode, ms, setup=0.0):
        return {"recipe": recipe, "model": recipe, "t": 32, "s": 224, "batch": 8, "mode": mode, "ms_per_step": ms,
                "clips_per_s": 8e3 / ms, "train_tflops": 1.0, "share_of_matmul": 0.01, "setup_s": setup}

    record = {"device": "cpu", "matmul_tflops": 100.0, "notes": "n",
              "rows": [row("a", "eager", 60.0), row("a", "cuda_graphs", 50.0, 0.4), row("b", "eager", 10.0)]}
    table = throughput_table([record], {"a"})
    assert [(r["mode"], r["gain"]) for r in table.rows] == [("eager", 1.0), ("cuda_graphs", 1.2)]
    assert table.rows[1]["setup_s"] == 0.4 and table.rows[0]["setup_s"] is None
    assert throughput_table([record], {"c"}) is None
    padded = {**record, "rows": [*record["rows"], {**row("a", "eager", 40.0), "pad_stem_channels": 8}]}
    rows = throughput_table([padded], {"a"}).rows  # a padded stem's row against the unpadded eager step
    assert (rows[2]["mode"], rows[2]["gain"]) == ("eager, stem 8", 1.5)
    assert rows[0]["gain"] == 1.0
    # an eager row with Triton BN listed after the plain one is set against it, not taken for it
    triton = {**record, "rows": [*record["rows"], {**row("a", "eager", 30.0), "plain_bn_impl": "triton"}]}
    rows = throughput_table([triton], {"a"}).rows
    assert [(r["mode"], r["gain"]) for r in rows] == [("eager", 1.0), ("cuda_graphs", 1.2), ("eager, triton BN", 2.0)]


def test_throughput_table_sets_each_step_against_the_plain_loop_of_the_same_commit_and_card():
    def row(mode, ms, **settings):
        return {"recipe": "a", "model": "a", "t": 32, "s": 224, "batch": 8, "mode": mode, "ms_per_step": ms,
                "clips_per_s": 8e3 / ms, "train_tflops": 1.0, "share_of_matmul": 0.01, "setup_s": 0.0, **settings}

    def record(commit, *rows):
        return {"device": "cuda", "matmul_tflops": 1.0, "notes": "n", "rows": list(rows),
                "provenance": {"commit": commit, "hardware": {"gpu": "H100"}}}

    plain = record("c1", row("plain", 70.0), row("plain", 65.0, pad_stem_channels=8))
    steps = record("c1", row("compile_graphs", 50.0, pad_stem_channels=8), row("cuda_graphs", 35.0,
                                                                                 plain_bn_impl="triton"))
    other = record("c2", row("compile", 35.0))  # another call: its plain loop is not this one
    rows = throughput_table([plain, steps, other], {"a"}).rows
    assert [(r["mode"], r["vs_plain"]) for r in rows] == [
        ("plain", None), ("plain, stem 8", 70.0 / 65.0), ("compile_graphs, stem 8", 1.4),
        ("cuda_graphs, triton BN", 2.0), ("compile", None)]


def test_data_wait_figure_is_the_same_bytes_every_time_and_leaves_numpys_rng_alone():
    import numpy as np

    from harness.report.figures import data_wait_figure

    rows = [{"variant": "a", "phase": "all", "data_wait_share": 0.1}] + \
        [{"variant": "a", "phase": str(i), "data_wait_share": 0.02 * i} for i in range(6)]
    np.random.seed(5)
    expected_next = np.random.rand()
    np.random.seed(5)
    first, second = data_wait_figure(rows), data_wait_figure(rows)
    assert first == second  # seaborn's strip jitter would otherwise move the dots
    assert np.random.rand() == expected_next


def _with(record: dict, section: str, **values) -> dict:
    return {**record, section: {**record[section], **values}}


def test_files_that_are_no_records_the_report_reads_are_left_out_with_a_note(tmp_path, capsys):
    """Run records edited by hand or of another tool (the wrong-typed ones newest, so that they would be chosen),
    profile, scaling and throughput records likewise, another report's damaged summary.json: each is named and
    left out, and the report is built from the good records, instead of ending in a traceback."""
    results, out = _results(tmp_path), tmp_path / "reports"
    scale = results / "smoke" / "smoke"
    newest = {"date": "2027-01-01T00:00:00+00:00"}
    bad = {"measured_str.json": json.dumps({**make_record("multigrid", **newest), "measured": "abc"}),
           "final_null.json": json.dumps({**make_record("multigrid", **newest), "final": None}),
           "train_s_str.json": json.dumps(_with(make_record("multigrid", **newest), "measured", train_s="x")),
           "seed_str.json": json.dumps(make_record("multigrid", spec={**tiny_spec(), "seed": "x"}, **newest)),
           "list.json": "[1, 2]", "another_tool.json": json.dumps({"variant": "x", "measured": {}, "tool": "y"}),
           # Numbers no run measures: shown as a -1.25× speedup and an accuracy of inf.
           "train_s_negative.json": json.dumps(_with(make_record("multigrid", **newest), "measured", train_s=-3)),
           "top1_inf.json": json.dumps(_with(make_record("multigrid", **newest), "final", top1=float("inf")))}
    for name, text in bad.items():
        (scale / name).write_text(text)
    (scale / "latin1.json").write_bytes(b'{"variant": "caf\xe9"}')
    for rel, text in {"profile/paper/smoke.json": '{"runs": "x"}', "throughput/t.json": "[1]",
                      "scaling/smoke/smoke/gpus2.json": '{"scale": "smoke", "shapes": [1]}'}.items():
        (results / rel).parent.mkdir(parents=True, exist_ok=True)
        (results / rel).write_text(text)
    (out / "kinetics_main").mkdir(parents=True)
    (out / "kinetics_main" / "summary.json").write_text('{"suite": "kinetics_main", "overview": "x"')
    parser = argparse.ArgumentParser(prog="harness")
    cli_report.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["report", "--suite", "smoke", "--results", str(results), "--out", str(out)])
    assert args.func(args) == 0
    err = capsys.readouterr().err
    for name in [*bad, "latin1.json"]:
        assert f"{scale / name}: " in err
    assert "'measured' is a string, not an object" in err and "'final' is null" in err
    assert "'measured.train_s' is a string" in err and "'spec.seed' is a string, not an integer" in err
    assert "latin1.json: unreadable" in err and "list.json: not a run record (a list" in err
    assert "'measured.train_s' is -3, not a time in seconds" in err and "'final.top1' is inf, not a percentage" in err
    for rel in ("profile/paper/smoke.json", "throughput/t.json", "scaling/smoke/smoke/gpus2.json"):
        assert f"{results / rel}: not a record the report can read" in err
    html = (out / "smoke" / "index.html").read_text()
    assert "measured_str.json: not a run record" in html and "3.00×" in html  # from the good records
    assert (out / "index.html").is_file()


def test_the_index_puts_every_paper_table_in_one_place(tmp_path):
    """reports/overview.md (and the index): one row per paper row in the paper's order; a suite with a report
    gives its measured speedup and accuracy difference, one without gives the profile's predicted speedup; a row
    two suites cover appears once, with the measured numbers."""
    parser = argparse.ArgumentParser(prog="harness")
    cli_report.register(parser.add_subparsers(dest="command", required=True))
    results, out = _results(tmp_path), tmp_path / "reports"
    (results / "profile" / "paper").mkdir(parents=True)
    profile = {"scale": "paper", "step": "eager", "provenance": {"commit": "abc", "hardware": {"gpu": "Card X"}},
               "runs": [{"variant": "short_1_shape", "predicted_speedup": 1.87},
                        {"variant": "multigrid", "predicted_speedup": 2.91}]}
    (results / "profile" / "paper" / "kinetics_ablation.json").write_text(json.dumps(profile))
    args = parser.parse_args(["report", "--suite", "smoke", "--results", str(results), "--out", str(out)])
    assert args.func(args) == 0
    lines = (out / "overview.md").read_text().splitlines()
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines if line.startswith("| 1")]
    default_1a = [r for r in rows if r[:2] == ["1a", "4-shape (default)"]]
    assert len(default_1a) == 1 and default_1a[0][5] == "3.00×" and default_1a[0][7] == "+0.0 (1 v 1)"
    assert default_1a[0][6] == "3.00× (1 pair)" and default_1a[0][8] == "inconclusive"  # one seed a side
    long_only = next(r for r in rows if r[:2] == ["1b", "1-shape (long cycle only)"])
    assert long_only[3] == "4.20×" and long_only[4] == "1.87× (eager)" and long_only[5] == ""
    assert long_only[9] == "-1.1"  # the paper's 74.5 against its baseline's 75.6
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)  # 1a before 1b
    assert "Every paper table in one place" in (out / "index.html").read_text()
    assert "on one Card X" in lines[-1]
    # A report of predictions only (its summary has no overview rows) still lists its paper rows, predicted.
    (results / "profile" / "paper" / "kinetics_models.json").write_text(json.dumps(
        {**profile, "runs": [{"variant": "i3d_multigrid", "predicted_speedup": 3.71}]}))
    (out / "kinetics_models").mkdir(parents=True, exist_ok=True)
    (out / "kinetics_models" / "summary.json").write_text(json.dumps({"suite": "kinetics_models", "overview": []}))
    assert args.func(args) == 0
    table3 = [line for line in (out / "overview.md").read_text().splitlines() if line.startswith("| 3 |")]
    assert any("i3d_multigrid" in line and "3.71× (eager)" in line for line in table3)
    # Another folder of reports beside the suites' (runs of another setting) is linked from the index.
    (out / "finetuned" / "ssv2").mkdir(parents=True)
    (out / "finetuned" / "index.html").write_text("<html></html>")
    assert args.func(args) == 0
    assert '<a href="finetuned/index.html">finetuned</a>' in (out / "index.html").read_text()


def test_an_overview_without_profiles_says_so():
    """Results with no profile record beside them (a folder of runs of another setting) leave the predicted
    column empty and say why, rather than naming an unknown GPU."""
    from harness.report.overview import overview_cells

    row = {"table": "5", "paper_row": "baseline", "variant": "baseline", "scale": "proxy", "speedup": 1.0}
    _, note = overview_cells([row])
    assert "no `harness profile` record" in note and "?" not in note
    _, note = overview_cells([{**row, "predicted_gpu": "Card X", "predicted_speedup": 2.0}])
    assert "on one Card X" in note


def test_paper_order_sentence_counts_pairs_in_the_papers_order():
    from harness.report.tables import OK, Table
    from harness.report.verdict import paper_order_sentence

    def row(name, paper_top1, top1, paper_speedup, speedup, status=OK):
        return {"paper_row": name, "paper_top1": paper_top1, "top1": top1, "paper_speedup": paper_speedup,
                "speedup": speedup, "status": status}

    table = Table("1b", "Table 1b: number of short-cycle shapes", (), (
        row("baseline", 75.6, 73.8, 1.0, 1.0), row("1-shape", 74.5, 75.2, 4.2, 1.6),
        row("3-shape", 76.4, 73.9, 4.5, 2.4), row("not run", 70.0, None, 9.0, None, status="not run")))
    sentence = paper_order_sentence(table)
    # top-1: baseline > 1-shape reversed, 3-shape > baseline tied (0.1), 3-shape > 1-shape reversed.
    assert sentence.startswith("Table 1b: top-1 does not hold: 0 of 3 pairs of rows in the paper's order, 1 tied")
    assert "speedup holds: 3 of 3 pairs" in sentence and "1-shape 4.20× / 1.60×" in sentence
    assert "not run" not in sentence
    assert paper_order_sentence(Table("6", "Table 6", (), (row("baseline", 1, 1, 1, 1),))) is None


def test_paper_order_sentence_holds_a_tie_of_the_paper_to_the_same_noise():
    from harness.report.tables import OK, Table
    from harness.report.verdict import paper_order_sentence

    def row(name, top1, speedup):
        return {"paper_row": name, "paper_top1": 72.5, "top1": top1, "paper_speedup": {"baseline": 1.0}.get(name, 3.35),
                "speedup": speedup, "status": OK}

    # The paper ties the two rows' top-1 (Table 4): a loss of 1.3 points here contradicts it, 0.3 keeps it.
    def table(multigrid_top1):
        return Table("4", "Table 4: 1-GPU", (), (row("baseline", 73.6, 1.0), row("multigrid", multigrid_top1, 2.5)))

    lost = paper_order_sentence(table(72.3))
    assert lost.startswith("Table 4: top-1 does not hold: 0 of the 1 pair(s) the paper ties within 0.5 points here")
    assert "speedup holds: 1 of 1 pairs of rows in the paper's order" in lost
    kept = paper_order_sentence(table(73.3))
    assert kept.startswith("Table 4: top-1 holds: 1 of the 1 pair(s) the paper ties within 0.5 points here")


def test_the_readme_copies_the_committed_overview_table():
    """The README's results section reproduces reports/overview.md's table (the one `harness report` wrote last):
    a report rendered again must be copied there too, or the README states numbers the records no longer give."""
    root = Path(__file__).resolve().parents[2]

    overview = [line for line in (root / "reports" / "overview.md").read_text(encoding="utf-8").splitlines()
                if line.startswith("|")]
    readme = (root / "README.md").read_text(encoding="utf-8").splitlines()
    assert overview and overview[0] in readme, "README.md lacks the overview table's header"
    start = readme.index(overview[0])
    assert readme[start:start + len(overview) + 1] == [*overview, ""], \
        "copy reports/overview.md's table into README.md"


def _on_card(record: dict, gpu: str, **measured) -> dict:
    spec = {**record["spec"], "train": {**record["spec"].get("train", {}), "device": "cuda"}}
    return {**_with(record, "measured", **measured), "spec": spec, "run_id": f"{record['run_id']}-{gpu}",
            "hardware": {**record["hardware"], "gpu": gpu}}


@pytest.mark.parametrize("records", [
    # A baseline that timed nothing on a second card: its runs' times were divided by zero.
    lambda: [_on_card(make_record("baseline", kind="baseline"), "A"), _on_card(make_record("multigrid"), "A"),
             _on_card(make_record("multigrid"), "A"), _on_card(make_record("multigrid"), "B"),
             _on_card(make_record("baseline", kind="baseline"), "B", train_s=0)],
    # Python's json writes NaN; a phase's iteration count of NaN was int()-ed.
    lambda: [make_record("baseline", kind="baseline"),
             _with(make_record("multigrid"), "measured",
                   phases=[{**make_record("multigrid")["measured"]["phases"][0], "iterations": float("nan")}])],
    # A null Figure-3 shape factor, as another writer leaves a default: was "'NoneType' object is not iterable".
    lambda: [make_record("baseline", kind="baseline", spec={**tiny_spec(False), "baseline": {"shape_factor": None}}),
             make_record("multigrid")],
], ids=["train_s_0_on_a_second_card", "nan_iterations", "null_shape_factor"])
def test_records_holding_odd_values_of_the_right_type_still_make_a_report(tmp_path, capsys, records):
    scale = tmp_path / "results" / "smoke" / "smoke"
    scale.mkdir(parents=True)
    for i, record in enumerate(records()):
        (scale / f"{i}.json").write_text(json.dumps(record))
    parser = argparse.ArgumentParser(prog="harness")
    cli_report.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["report", "--suite", "smoke", "--results", str(tmp_path / "results"), "--out",
                              str(tmp_path / "reports")])
    assert args.func(args) == 0
    assert (tmp_path / "reports" / "smoke" / "index.html").is_file()


def test_a_commit_in_short_and_full_form_counts_once():
    from harness.report.build import _commits_and_dates

    full = "0123456789abcdef0123456789abcdef01234567"
    records = [{"seeds": {"commits": [full, "0123456"], "dates": ["2026-01-01"]}},
               {"provenance": {"commit": "fedcba9", "date": "2026-01-02"}}]
    assert _commits_and_dates(records)[0] == [full, "fedcba9"]
