"""build_model (harness.models.build): a user's model by import path, model.width for the harness's own models only."""

import pytest
import torch

from harness.models import MultigridBatchNorm3d, build_model
from harness.spec import ModelSpec, SpecError


def test_user_model_by_import_path():
    model = build_model(ModelSpec(target="tests.unit.user_models:tiny_c3d"), 7)
    assert model(torch.randn(2, 3, 4, 16, 16)).shape == (2, 7)
    assert isinstance(model[1], MultigridBatchNorm3d)  # its BN was converted
    with pytest.raises(SpecError, match="no attribute 'tiny_c3'.*Did you mean 'tiny_c3d'"):
        build_model(ModelSpec(target="tests.unit.user_models:tiny_c3"), 7)
    with pytest.raises(SpecError, match="cannot import module"):
        build_model(ModelSpec(target="no_such_pkg.models:f"), 7)
    with pytest.raises(SpecError, match="pkg.module:factory"):
        build_model(ModelSpec(target="tests.unit.user_models"), 7)
    with pytest.raises(SpecError, match="not a torch nn.Module"):
        build_model(ModelSpec(target="tests.unit.user_models:not_a_model"), 7)


def test_width_only_for_own_models():
    with pytest.raises(SpecError, match="model.width"):
        build_model(ModelSpec(name="r3d_18", width=0.5), 5)
