"""`auto`'s rule (harness.train.choose) on hand-built evidence, and what the committed records make it pick."""

from __future__ import annotations

import pytest

from harness.train.choice_evidence import card_evidence, run_shapes
from harness.train.choose import COMPILE_SHARE_LIMIT, Evidence, RunShapes, choose

from .helpers import CARD

# A multigrid run in miniature: one plain-BN shape and one sub-batch-BN shape, 10,000 iterations each.
RUN = RunShapes("slowfast_r50_8x8", {(8, 224, 8, 1): 10_000, (8, 112, 32, 4): 10_000}, specialisations=2)


def _times(ms_plain: float, ms_sub: float) -> dict:
    return {(8, 224, 8, 1): ms_plain, (8, 112, 32, 4): ms_sub}


def _evidence(passed=(), compile_s=None, **paths) -> Evidence:
    """`paths`: `<step>__<sub_batch_bn>=(ms at the plain shape, ms at the sub-batch shape)`."""
    step_ms = {(*name.split("__"), RUN.model): _times(*ms) for name, ms in paths.items()}
    return Evidence(step_ms, {} if compile_s is None else {RUN.model: compile_s}, frozenset(passed))


def _row(choice, step, bn):
    return next(r for r in choice.candidates if (r["step"], r["sub_batch_bn"]) == (step, bn))


def test_an_eligible_faster_bn_path_is_chosen_and_the_record_says_why():
    evidence = _evidence(["sub_batch_bn=triton"], cuda_graphs__auto=(50, 60), cuda_graphs__triton=(50, 40))
    choice = choose("auto", "auto", RUN, CARD, evidence)
    assert (choice.step, choice.sub_batch_bn) == ("cuda_graphs", "triton")
    assert _row(choice, "cuda_graphs", "triton")["predicted_s"] == pytest.approx(10_000 * 0.09)
    assert "1.22× as fast" in choice.reason
    assert choice.to_dict()["candidates"][0]["predicted_s"] == pytest.approx(10_000 * 0.11)


def test_a_faster_path_whose_numerics_never_passed_on_this_card_is_skipped():
    evidence = _evidence(cuda_graphs__auto=(50, 60), cuda_graphs__triton=(50, 40))
    choice = choose("auto", "auto", RUN, CARD, evidence)
    assert (choice.step, choice.sub_batch_bn) == ("cuda_graphs", "auto")
    assert "numerics test not passed" in _row(choice, "cuda_graphs", "triton")["why_not"]
    assert _row(choice, "cuda_graphs", "triton")["eligible"] is False
    # A BN path the user set needs no pass: only what auto picks must be proven.
    mine = choose("cuda_graphs", "triton", RUN, CARD, evidence)
    assert (mine.step, mine.sub_batch_bn) == ("cuda_graphs", "triton")


def test_compiled_steps_are_chosen_only_where_compiling_is_a_small_share_of_the_run():
    paths = dict(cuda_graphs__auto=(50, 60), compile_graphs__auto=(35, 40))
    predicted = 10_000 * (0.035 + 0.040)  # 750 s of compiled steps; 2 shapes to compile
    cheap = choose("auto", "auto", RUN, CARD, _evidence(["step=compile_graphs"], predicted * 0.019 / 2, **paths))
    assert (cheap.step, cheap.sub_batch_bn) == ("compile_graphs", "auto")
    assert _row(cheap, "compile_graphs", "auto")["compile_share"] == pytest.approx(0.019)
    dear = choose("auto", "auto", RUN, CARD, _evidence(["step=compile_graphs"], predicted * 0.021 / 2, **paths))
    assert dear.step == "cuda_graphs"
    assert f"over {COMPILE_SHARE_LIMIT:.0%}" in _row(dear, "compile_graphs", "auto")["why_not"]
    # Compiled steps set by the user, too dear: nothing counts, and the setting stays as it was asked.
    mine = choose("compile_graphs", "auto", RUN, CARD, _evidence(compile_s=100.0, **paths))
    assert (mine.step, mine.sub_batch_bn) == ("compile_graphs", "auto") and "no candidate counts" in mine.reason
    unmeasured = choose("auto", "auto", RUN, CARD, _evidence(["step=compile_graphs"], **paths))
    assert unmeasured.step == "cuda_graphs"
    assert "no measured compile time" in _row(unmeasured, "compile_graphs", "auto")["why_not"]


def test_combinations_the_trainer_refuses_are_never_chosen():
    evidence = _evidence(["step=compile_graphs"], compile_s=0.0, cuda_graphs__auto=(50, 60),
                         compile_graphs__auto=(10, 10))
    assert choose("auto", "auto", RUN, CARD, evidence).step == "compile_graphs"
    several = choose("auto", "auto", RunShapes(RUN.model, RUN.iterations, 2, num_gpus=4), CARD, evidence)
    assert several.step == "cuda_graphs"
    assert "one GPU" in _row(several, "compile_graphs", "auto")["why_not"]


def test_without_a_profile_of_the_card_or_of_every_shape_todays_default_stays():
    nothing = choose("auto", "auto", RUN, CARD, None)
    assert (nothing.step, nothing.sub_batch_bn) == ("cuda_graphs", "auto")
    assert "no committed profile" in nothing.reason
    # The fast path is timed at every shape, today's default at one: nothing is shown faster than the default.
    partial = Evidence({("cuda_graphs", "auto", RUN.model): {(8, 224, 8, 1): 50.0},
                        ("cuda_graphs", "triton", RUN.model): _times(50, 40)}, {}, frozenset(["sub_batch_bn=triton"]))
    choice = choose("auto", "auto", RUN, CARD, partial)
    assert choice.sub_batch_bn == "auto" and "predicts today's default" in choice.reason


def test_on_a_cpu_steps_are_eager_and_a_plain_bn_run_keeps_its_bn():
    choice = choose("auto", "auto", RUN, None, None)
    assert (choice.step, choice.sub_batch_bn, choice.card) == ("eager", "auto", None)
    baseline = RunShapes(RUN.model, {(8, 224, 8, 1): 10_000}, 1)  # no sub-batch BN: its implementation is moot
    evidence = _evidence(["sub_batch_bn=triton"], cuda_graphs__auto=(50, 60), cuda_graphs__triton=(45, 40))
    assert {r["sub_batch_bn"] for r in choose("auto", "auto", baseline, CARD, evidence).candidates} == {"auto"}


def test_the_committed_records_pick_the_triton_bn_for_paper_multigrid_on_an_h200_only_after_its_pass():
    from dataclasses import replace

    from harness.schedule import build_plan
    from harness.suite import load_scale, load_suite, resolve_suite

    runs = resolve_suite(load_suite("kinetics_ablation"), load_scale("paper"), [], data_root="/nonexistent",
                         pretrained="<none>")
    spec = next(r.spec for r in runs if r.spec and r.run.variant == "multigrid")
    shapes = run_shapes(build_plan(spec), spec.model.label, 1)
    evidence = card_evidence(CARD)
    assert "sub_batch_bn=triton" in evidence.passed  # recorded by the GPU numerics test
    choice = choose("auto", "auto", shapes, CARD, evidence)
    assert (choice.step, choice.sub_batch_bn) == ("cuda_graphs", "triton")
    assert _row(choice, "cuda_graphs", "triton")["predicted_s"] < _row(choice, "cuda_graphs", "auto")["predicted_s"]
    # The same profiles without the pass keep today's default: speed alone never makes a path eligible.
    unproven = choose("auto", "auto", shapes, CARD, replace(evidence, passed=frozenset()))
    assert (unproven.step, unproven.sub_batch_bn) == ("cuda_graphs", "auto")
    assert "numerics test not passed" in _row(unproven, "cuda_graphs", "triton")["why_not"]
