"""FLOP and parameter counts (harness.models.flops) against the published ones, and `harness flops --json`."""

import json
import subprocess

import pytest

from harness.models import build_model
from harness.models.flops import count_flops
from harness.spec import ModelSpec

# Official model-zoo counts (SlowFast model zoo; fvcore, 1 clip, eval, conv only, 256² crop).
PUBLISHED = [("slowfast_r50_8x8", 32, 34.57e6, 65.7), ("slowfast_r50_4x16", 32, 34.48e6, 36.1)]


@pytest.mark.parametrize(("name", "frames", "params", "gflops"), PUBLISHED)
def test_flops_match_published_counts(name, frames, params, gflops):
    count = count_flops(build_model(ModelSpec(name=name), 400), frames, 256)
    assert count.params == pytest.approx(params, rel=0.01)
    assert count.gflops_conv == pytest.approx(gflops, rel=0.01)
    assert count.gflops > count.gflops_conv


# I3D-NL R50 (5 non-local blocks): PySlowFast's MODEL_ZOO lists I3D NLN R50 8×8 (Kinetics/c2/I3D_NLN_8x8_R50) with
# accuracy but no FLOP count, so these are our own fvcore counts at 256² (8 frames, the model's default; 16, the
# recipe's). Parameters equal the reference model's (35.40M). A non-local block of width C over P positions costs
# θ and the output conv C·C/2·P each and, with φ and g after the 1×2×2 max-pool as in the reference, C·C/2·P/4
# each: 1.25·C²·P conv FLOPs, 6.71 GFLOPs for the five blocks at 8×256², so conv-only is I3D R50's 37.10 + 6.71 =
# 43.81. (With φ and g convolving before the pool, as this block once did, it was 2·C²·P a block: 47.84, 9% more.)
# Conv-only is the convention of the zoo counts above; the total adds the two attention einsums (5.10 GFLOPs at
# 8 frames, 20.40 at 16: quadratic in T·H·W), which is why it grows faster than the frames.
NONLOCAL = [(8, 35.40e6, 43.81, 49.10), (16, 35.40e6, 87.63, 108.40)]


@pytest.mark.parametrize(("frames", "params", "gflops_conv", "gflops"), NONLOCAL)
def test_i3d_nl_flops(frames, params, gflops_conv, gflops):
    count = count_flops(build_model(ModelSpec(name="i3d_nl_r50"), 400), frames, 256)
    assert count.params == pytest.approx(params, rel=1e-3)
    assert count.gflops_conv == pytest.approx(gflops_conv, rel=1e-3)
    assert count.gflops == pytest.approx(gflops, rel=1e-3)
    # The blocks' conv FLOPs in the reference's order: res3 (C=512, 2 blocks) and res4 (C=1024, 3 blocks),
    # after the temporal pool halves T; 1.25·C²·P a block.
    t = frames // 2
    by_hand = 1.25 * (2 * 512**2 * t * (256 // 8) ** 2 + 3 * 1024**2 * t * (256 // 16) ** 2) / 1e9
    plain = count_flops(build_model(ModelSpec(name="i3d_r50"), 400), frames, 256)
    assert count.gflops_conv - plain.gflops_conv == pytest.approx(by_hand, rel=1e-6)


def test_flops_cli_json():
    out = subprocess.run(["harness", "flops", "i3d_r50", "--frames", "8", "--crop", "224", "--json"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert {"params", "gflops", "gflops_conv"} <= set(result)
    assert result["params"] == pytest.approx(28.04e6, rel=0.01)
    # Conv FLOPs scale with pixels (the feature maps divide evenly at 224 and 256).
    assert result["gflops_conv"] == pytest.approx(37.1 * (224 / 256) ** 2, rel=0.01)


def test_mvit_v2_s_counts():
    """MViTv2-S 16×4 at 16×224²: 34.5M parameters and 64 GFLOPs published (the MViTv2 paper's Kinetics-400
    results, PySlowFast's MODEL_ZOO.md).
    fvcore's total also counts LayerNorm (0.233 GFLOPs); without it the count is torchvision's 64.224 (its
    MViT_V2_S_Weights '_ops'), and the attention's own matmuls are 14.4 of the 64."""
    count = count_flops(build_model(ModelSpec(name="mvit_v2_s"), 400), 16, 224)
    assert count.params == 34_537_744  # torchvision's num_params
    assert count.gflops == pytest.approx(64.457, abs=1e-3)
    assert count.gflops - count.by_operator["layer_norm"] == pytest.approx(64.224, abs=1e-3)
    assert count.by_operator["matmul"] == pytest.approx(14.430, abs=1e-3)
