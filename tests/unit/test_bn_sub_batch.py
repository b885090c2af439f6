"""Sub-batch BatchNorm (harness.models.bn) against an independent implementation, and its contracts (paper §3)."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from harness.models import MultigridBatchNorm3d, build_model, multigrid_bns, set_bn_layout
from harness.spec import ModelSpec

from .sub_bn_oracle import check_against_independent, independent_sub_bn


@pytest.mark.parametrize("blocks", [True, False], ids=["blocks", "interleaved"])
@pytest.mark.parametrize("k", [2, 4])
def test_sub_batch_bn_matches_independent_implementation(k, blocks):
    bn = MultigridBatchNorm3d(6)
    bn.max_block_splits = k if blocks else 1
    check_against_independent(bn, k, blocks)


def test_split_one_is_plain_batchnorm():
    torch.manual_seed(0)
    ours, plain = MultigridBatchNorm3d(4), nn.BatchNorm3d(4)
    x = torch.randn(6, 4, 2, 3, 3)
    for _ in range(3):
        torch.testing.assert_close(ours(x), plain(x))
    torch.testing.assert_close(ours.running_var, plain.running_var)
    ours.eval()
    plain.eval()
    torch.testing.assert_close(ours(x), plain(x))


def test_eval_uses_aggregated_statistics_and_checkpoints_are_plain_bn():
    torch.manual_seed(0)
    bn = MultigridBatchNorm3d(3)
    bn.num_splits = 2
    x = torch.randn(8, 3, 2, 4, 4) * 2 + 1
    for _ in range(50):
        bn(x)
    bn.eval()
    expected = F.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0, bn.eps)
    torch.testing.assert_close(bn(x), expected)
    state = bn.state_dict()
    assert set(state) == set(nn.BatchNorm3d(3).state_dict())
    plain = nn.BatchNorm3d(3)
    plain.load_state_dict(state)  # loads into plain BN, and back into any split count
    other = MultigridBatchNorm3d(3)
    other.num_splits = 4
    other.load_state_dict(plain.state_dict())
    torch.testing.assert_close(other.running_var, bn.running_var)


def test_split_count_changes_without_rebuilding():
    torch.manual_seed(0)
    model = build_model(ModelSpec(name="i3d_r50", width=1 / 16), 3).train()
    params_before = [id(p) for p in model.parameters()]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    bns = multigrid_bns(model)
    for splits, batch in [(4, 8), (2, 4), (1, 2), (4, 16)]:
        set_bn_layout(bns, splits, 1)
        loss = model(torch.randn(batch, 3, 4, 32, 32)).logsumexp(1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        assert all(bn.num_splits == splits for bn in bns)
    assert [id(p) for p in model.parameters()] == params_before
    with pytest.raises(ValueError, match="cannot be split into 4"):
        set_bn_layout(bns, 4, 1)
        model(torch.randn(6, 3, 4, 32, 32))


def test_cumulative_average_for_precise_bn():
    """momentum=None (precise BN) averages the batches' aggregated statistics equally, at any split count."""
    torch.manual_seed(0)
    bn = MultigridBatchNorm3d(3)
    bn.num_splits = 2
    bn.momentum = None
    bn.reset_running_stats()
    batches = [torch.randn(4, 3, 2, 3, 3) * (i + 1) + i for i in range(3)]
    aggregates = []
    for x in batches:
        bn(x)
        _, mean, var = independent_sub_bn(x, bn.weight.detach(), bn.bias.detach(), 2)
        aggregates.append((mean, var))
    torch.testing.assert_close(bn.running_mean, torch.stack([m for m, _ in aggregates]).mean(0))
    torch.testing.assert_close(bn.running_var, torch.stack([v for _, v in aggregates]).mean(0))


@pytest.mark.parametrize("k", [2, 4])
def test_sub_batch_bn_keeps_channels_last_memory(k):
    """The next convolution must get channels-last activations (a channels-first tensor costs it a conversion)."""
    bn = MultigridBatchNorm3d(4)
    bn.num_splits = k
    x = torch.randn(2 * k, 4, 2, 3, 3).contiguous(memory_format=torch.channels_last_3d)
    out = bn(x)
    assert out.is_contiguous(memory_format=torch.channels_last_3d)
    reference, _, _ = independent_sub_bn(x.contiguous(), bn.weight.detach(), bn.bias.detach(), k,
                                         blocks=k <= bn.max_block_splits)
    torch.testing.assert_close(out, reference, rtol=1e-4, atol=1e-5)
