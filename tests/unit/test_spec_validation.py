"""Bad settings fail before anything runs, naming the key and the fix."""

import pytest

from harness.schedule import PlanError, build_plan
from harness.spec import RunSpec, SpecError, check_key, known_keys

from .helpers import BASELINE, spec

BAD = [
    ({"solver.steps": [5, 94, 154]}, "solver.steps", "start at epoch 0"),
    ({"solver.steps": [0, 94, 94]}, "solver.steps", "strictly increasing"),
    ({"solver.steps": [0, 154, 94]}, "solver.steps", "strictly increasing"),
    ({"solver.max_epoch": 196}, "solver.max_epoch", "greater than the last LR step"),
    ({"solver.max_epoch": 100}, "solver.max_epoch", "greater than the last LR step"),
    ({"multigrid.long_cycle_factors": [[0.0, 1.0]]}, "multigrid.long_cycle_factors[0]", "(0, 1]"),
    ({"multigrid.long_cycle_factors": [[0.5, 1.5]]}, "multigrid.long_cycle_factors[0]", "(0, 1]"),
    ({"multigrid.short_cycle_factors": [0.5, -1.0]}, "multigrid.short_cycle_factors[1]", "(0, 1]"),
    ({"multigrid.epoch_factor": 0.0}, "multigrid.epoch_factor", "> 0"),
    ({"multigrid.epoch_factor": -1.5}, "multigrid.epoch_factor", "> 0"),
    ({"solver.batch_size": 60}, "solver.batch_size", "divisible by 'num_gpus'"),
    ({"solver.policy": "cosin"}, "solver.policy", "Did you mean 'cosine'"),
    ({"scale": "smok"}, "scale", "Did you mean 'smoke'"),
    ({"data.jitter": [340, 256]}, "data.jitter", "min <= max"),
    ({"solver.steps": "94"}, "solver.steps", "must be a list"),
    ({"model.pad_stem_channels": -1}, "model.pad_stem_channels", ">= 0"),
    ({"data.low_res_copies": "/data/k400-160"}, "data.low_res_copies", "data.low_res_copies=[/data/k400-160]"),
    ({"data.low_res_copies": ["/data/k400-160"], "data.cache": "/data/cache"}, "data.low_res_copies",
     "data.cache=null"),
    ({"data.num_frames": 3.5}, "data.num_frames", "integer"),
    ({"solver.batch_size": float("inf")}, "solver.batch_size", "integer"),  # YAML's .inf, or 1e400
    ({"solver.steps": [0, float("nan")]}, "solver.steps[1]", "integer"),
    ({"multigrid.long_cycle": "yes"}, "multigrid.long_cycle", "true or false"),
    ({"multigrid.short_cycle_shapes": 4}, "multigrid.short_cycle_shapes", "[1, 3]"),
    ({"multigrid.long_cycle_shapes": 0}, "multigrid.long_cycle_shapes", "[1, 4]"),
    ({"baseline.epoch_factor": 0.5}, "baseline.*", "multigrid is on"),
    ({"num_gpus": 0}, "num_gpus", ">= 1"),
    ({"seed": -1}, "seed", "[0, 2**32)"),
    ({"train.eval_crops": 5}, "train.eval_crops", "one of (1, 3)"),  # accepted, it crashed after training
    ({"train.eval_clips": 0}, "train.eval_clips", ">= 1 or null"),
    ({"solver.momentum": 2.0}, "solver.momentum", "in [0, 1)"),  # accepted, the run diverged a while in
    ({"train.sub_batch_bn": "trition"}, "train.sub_batch_bn", "Did you mean 'triton'"),
    ({"train.sub_batch_bn": "triton", "train.device": "cpu"}, "train.sub_batch_bn=triton", "train.sub_batch_bn=auto"),
    ({"train.plain_bn_impl": "tritn"}, "train.plain_bn_impl", "Did you mean 'triton'"),
    ({"train.plain_bn_impl": "triton", "train.device": "cpu"}, "train.plain_bn_impl=triton",
     "train.plain_bn_impl=cudnn"),
]


@pytest.mark.parametrize(("settings", "key", "fix"), BAD, ids=[b[1] + ":" + b[2] for b in BAD])
def test_bad_settings_name_key_and_fix(settings, key, fix):
    with pytest.raises(SpecError) as err:
        spec(**settings)
    assert f"'{key}'" in str(err.value)
    assert fix in str(err.value)


BAD_PLANS = [
    ({"data.num_frames": 2}, "multigrid.long_cycle_factors", "0 frames"),
    ({"data.crop_size": 1, "data.jitter": [1, 1], "multigrid.long_cycle_factors": [[1.0, 0.3], [1.0, 1.0]]},
     "multigrid.long_cycle_factors", "0px"),
    ({"data.crop_size": 1, "data.jitter": [1, 1], "multigrid.long_cycle_factors": [[1.0, 1.0]]},
     "multigrid.short_cycle_factors", "0px"),
    ({"multigrid.long_cycle_factors": [[0.5, 0.4], [1.0, 1.0]]}, "multigrid.short_cycle_factors", "larger than"),
    ({"data.train_videos": 100}, "data.train_videos", "clips per GPU"),
    ({**BASELINE, "baseline.shape_factor": [0.01, 1.0], "data.num_frames": 8}, "baseline.shape_factor", "0 frames"),
    ({**BASELINE, "baseline.epoch_factor": 0.001}, "baseline.epoch_factor", "< 1 epoch"),
]


@pytest.mark.parametrize(("settings", "key", "fix"), BAD_PLANS, ids=[b[1] + ":" + b[2] for b in BAD_PLANS])
def test_impossible_plans_name_key_and_fix(settings, key, fix):
    with pytest.raises(PlanError) as err:
        build_plan(spec(**settings))
    assert key in str(err.value)
    assert fix in str(err.value)


def test_unknown_keys_get_did_you_mean():
    with pytest.raises(SpecError, match=r"Unknown config key 'solver.base_rl'.*Did you mean 'base_lr'"):
        spec(**{"solver.base_rl": 0.1})
    with pytest.raises(SpecError, match=r"Did you mean 'multigrid'"):
        spec(**{"multigird.long_cycle": False})
    with pytest.raises(SpecError, match=r"Did you mean 'multigrid.epoch_factor'"):
        check_key("multigrid.epoch_factr")
    check_key("multigrid.epoch_factor")


def test_spec_round_trips_through_a_dict():
    from harness.spec import spec_from_dict

    original = spec(**{"solver.steps": [0, 10, 20], "solver.max_epoch": 30, "solver.warmup_epochs": 2.0})
    assert spec_from_dict(original.to_dict()) == original
    assert set(known_keys()) >= {"solver.base_lr", "data.jitter", "multigrid.bn_base_size", "model.name", "scale"}
    assert RunSpec().is_multigrid


def test_the_run_id_keeps_runs_made_before_the_sub_batch_bn_choice():
    from harness.config import compose
    from harness.results import run_id

    base = compose([])
    assert base.train.sub_batch_bn == "auto"
    assert run_id(compose(["train.sub_batch_bn=auto"])) == run_id(base)
    assert run_id(compose(["train.sub_batch_bn=triton"])) != run_id(base)


@pytest.mark.parametrize("key, off, on", [("model.pad_stem_channels", "0", "8"),
                                          ("data.low_res_copies", "[]", "[/data/k400-160]"),
                                          ("train.plain_bn_impl", "cudnn", "triton")])
def test_the_run_id_keeps_runs_made_before_a_setting_existed(key, off, on):
    from harness.config import compose
    from harness.results import run_id

    base = compose([])
    assert run_id(compose([f"{key}={off}"])) == run_id(base)  # records made before the key ran at its default
    assert run_id(compose([f"{key}={on}"])) != run_id(base)
