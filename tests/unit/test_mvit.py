"""MViTv2-S: torchvision's weights give torchvision's outputs, and the model runs where torchvision's cannot."""

import pytest
import torch
import torchvision.models.video as tvv

from harness.models import build_model, multigrid_bns, set_bn_layout
from harness.models.check import check_shapes
from harness.models.mvit import _offsets, _resampled
from harness.spec import ModelSpec


def test_torchvision_weights_give_torchvision_outputs_and_run_at_other_shapes(tmp_path):
    torch.manual_seed(0)
    reference = tvv.mvit_v2_s().eval()  # random initialisation: nothing is downloaded
    path = tmp_path / "mvit_v2_s.pth"
    torch.save(reference.state_dict(), path)
    model = build_model(ModelSpec(name="mvit_v2_s", pretrained=str(path)), 400).eval()
    clip = torch.randn(1, 3, 16, 224, 224)
    with torch.no_grad():
        assert torch.allclose(model(clip), reference(clip), atol=1e-5, rtol=0)
        other = torch.randn(1, 3, 8, 160, 160)
        assert model(other).shape == (1, 400)
        with pytest.raises(RuntimeError):  # its token grid is the one it was built for
            reference(other)


def test_runs_at_grids_of_one_token_and_odd_sizes_without_batchnorm():
    torch.manual_seed(0)
    model = build_model(ModelSpec(name="mvit_v2_s"), 5)
    assert multigrid_bns(model) == []
    set_bn_layout(multigrid_bns(model), splits=2, sync=1)  # the trainer's phase change: nothing to switch
    results = check_shapes(model, [(1, 11), (3, 37)], 5, batch=2)
    assert all(r.ok for r in results), [r.error for r in results]


def test_relative_offsets_stay_in_the_resampled_table_and_match_the_reference_where_exact():
    for q in range(1, 20):
        for k in range(1, 20):
            rows = _offsets(q, k, torch.device("cpu"))
            assert rows.min() == 0 and rows.max() <= 2 * max(q, k) - 2
            # PySlowFast's float form (slowfast/models/attention.py cal_rel_pos_spatial), exact for these ratios
            if max(q, k) % min(q, k) == 0:
                q_ratio, k_ratio = max(k / q, 1.0), max(q / k, 1.0)
                dist = (torch.arange(q)[:, None] * q_ratio - torch.arange(k)[None, :] * k_ratio
                        + (k - 1) * k_ratio)
                assert torch.equal(rows, dist.long())
    table = torch.randn(111, 4)
    assert _resampled(table, 111) is table  # the built shape: the table as it is
    assert _resampled(table, 27).shape == (27, 4)
    assert torch.allclose(_resampled(torch.ones(111, 4), 27), torch.ones(27, 4))
