"""SlowFast's pathways (harness.models.slowfast): the slow one samples the clip's frames evenly."""

import pytest
import torch

from .tiny_models import tiny


def test_slowfast_slow_pathway_frames():
    model = tiny("slowfast_r50_8x8")
    clip = torch.arange(32.0).view(1, 1, 32, 1, 1).expand(1, 3, 32, 2, 2)
    slow, fast = model.pathways(clip)
    assert slow[0, 0, :, 0, 0].tolist() == torch.linspace(0, 31, 8).long().float().tolist()
    assert fast.shape[2] == 32
    with pytest.raises(ValueError, match="at least 4 frames"):
        model.pathways(clip[:, :, :3])
