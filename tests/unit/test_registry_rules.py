"""The model registry's rules (harness.models.registry): the paper's models registered, names strict."""

import pytest
from torch import nn

from harness.models import get_entry, list_models, register_model
from harness.spec import SpecError


def test_paper_models_are_registered():
    for name in ("slowfast_r50_4x16", "slowfast_r50_8x8", "slowfast_r50_16x8", "slowfast_r50_16f", "i3d_r50",
                 "i3d_nl_r50"):
        assert get_entry(name).paper
    assert {"r3d_18", "mc3_18", "r2plus1d_18", "s3d"} <= set(list_models())


def test_registry_is_strict():
    with pytest.raises(ValueError, match="registered twice"):
        register_model("i3d_r50")(lambda **kw: nn.Identity())
    with pytest.raises(SpecError, match="Did you mean 'slowfast_r50_8x8'"):
        get_entry("slowfast_r50_8x4")
