"""The tables of measurement records: predicted speedups and sub-batch BN's cost, data-parallel scaling at a fixed
global batch and a fixed batch per GPU, step times, kernels and compile cost."""

from __future__ import annotations

from harness.report.inputs import load_suite_def
from harness.report.measurements import (
    compile_cost_table,
    profile_table,
    scaling_table,
    scaling_tables,
    step_kernels_table,
    sub_batch_bn_table,
    throughput_table,
)
from harness.report.overview import predicted_speedups
from harness.report.page import build_report

from .report_records import PAPER


def test_profile_table_puts_predicted_speedups_beside_the_papers():
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
