"""harness.models.check: BN statistics over one clip that the model reduces to one value are refused before training."""

import pytest

from harness.spec import SpecError


@pytest.mark.parametrize(("overrides", "refused"), [
    (["multigrid.bn_base_size=1"], True),  # one-clip BN groups at the smoke plan's smallest shapes
    (["multigrid.bn_base_size=2"], False),
])
def test_bn_over_one_clip_that_a_model_reduces_to_one_value_is_refused_before_training(overrides, refused):
    # It passed the settings' checks, then the step failed with a traceback a few iterations in.
    from harness import cli_train
    from harness.config import compose
    from harness.models.check import require_bn_statistics
    from harness.schedule import build_plan

    plan = build_plan(compose(cli_train.scaled_overrides(["scale=smoke", *overrides])))
    if not refused:
        require_bn_statistics(plan)
        return
    with pytest.raises(SpecError, match=r"BN statistics over one clip \(multigrid.bn_base_size=1.*"
                                        r"multigrid.bn_base_size=2 or more"):
        require_bn_statistics(plan)
