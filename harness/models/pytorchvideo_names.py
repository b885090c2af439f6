"""PyTorchVideo's names for the weights of SlowFast R50, I3D R50 and X3D-S/M (its torch.hub models `slowfast_r50`,
`i3d_r50`, `x3d_s` and `x3d_m`, whose checkpoints SLOWFAST_8x8_R50.pyth, I3D_8x8_R50.pyth, X3D_S.pyth and X3D_M.pyth
keep them under "model_state"), turned into the harness's (:mod:`harness.models.video_weights` loads them).

PyTorchVideo builds a network as a list of blocks (github.com/facebookresearch/pytorchvideo,
`pytorchvideo/models/slowfast.py`, `resnet.py`). SlowFast: `blocks.0` the stems
(`multipathway_blocks.{0 slow, 1 fast}.{conv,norm}`), `blocks.1`–`blocks.4` the four stages
(`multipathway_blocks.{p}.res_blocks.{i}`), `blocks.0`–`blocks.3` also the fast-to-slow fusion after them
(`multipathway_fusion.{conv_fast_to_slow,norm}`), `blocks.6.proj` the classifier. I3D: `blocks.0.{conv,norm}` the
stem, `blocks.1`, `blocks.3`, `blocks.4`, `blocks.5` the stages (`blocks.2` is a pooling layer),
`blocks.6.proj` the classifier. A bottleneck holds `branch2.{conv_a,norm_a,conv_b,norm_b,conv_c,norm_c}` and, where it
projects its shortcut, `branch1_conv` and `branch1_norm`. Its SlowFast R50 and I3D R50 hold 662 and 320 entries, as
the same models here do.

X3D (`pytorchvideo/models/x3d.py`): `blocks.0` the stem, whose `conv` runs `conv.conv_t` first, which is the 1×3×3
spatial convolution, then `conv.conv_xy`, the depthwise 5×1×1 temporal one (the names are swapped against what they
do), and `norm`; `blocks.1`–`blocks.4` the stages, each bottleneck's `branch2` with `conv_a`, `norm_a`, `conv_b`,
`norm_b.0` (the BN) and, in blocks 0, 2, 4, …, the squeeze-excitation `norm_b.1.block.{0,2}` (fvcore's
SqueezeExcitation: reduce, ReLU, expand, sigmoid), `conv_c`, `norm_c`, the shortcut `branch1_conv` and, where the
width changes, `branch1_norm`; `blocks.5` the head: `pool.pre_conv` (conv5), `pool.pre_norm`, `pool.post_conv` (the
2048-d layer) and `proj`, the classifier. Its X3D-S and X3D-M hold 563 entries, as the same models here do.
"""

from __future__ import annotations

from torch import nn

from harness.models.i3d import I3D
from harness.models.resnet3d import Bottleneck
from harness.models.slowfast import SlowFast
from harness.models.x3d import X3D

BOTTLENECK = {"branch2.conv_a": "conv1", "branch2.norm_a": "bn1", "branch2.conv_b": "conv2", "branch2.norm_b": "bn2",
              "branch2.conv_c": "conv3", "branch2.norm_c": "bn3", "branch1_conv": "downsample.0",
              "branch1_norm": "downsample.1"}
I3D_STAGES = {1: "res2", 3: "res3", 4: "res4", 5: "res5"}  # PyTorchVideo's block → the harness's stage


X3D_BOTTLENECK = {"branch2.conv_a": "conv1", "branch2.norm_a": "bn1", "branch2.conv_b": "conv2",
                  "branch2.norm_b.0": "bn2", "branch2.norm_b.1.block.0": "se.reduce",
                  "branch2.norm_b.1.block.2": "se.expand", "branch2.conv_c": "conv3", "branch2.norm_c": "bn3",
                  "branch1_conv": "downsample.0", "branch1_norm": "downsample.1"}
X3D_STEM = {"blocks.0.conv.conv_t": "stem.conv_xy", "blocks.0.conv.conv_xy": "stem.conv_t", "blocks.0.norm": "stem.bn"}
X3D_HEAD = {"blocks.5.pool.pre_conv": "head.conv5", "blocks.5.pool.pre_norm": "head.bn5",
            "blocks.5.pool.post_conv": "head.lin5", "blocks.5.proj": "head.fc"}
X3D_STAGES = ("res2", "res3", "res4", "res5")  # PyTorchVideo's blocks.1..4

# an entry every model of this layout has: SlowFast's slow stem, I3D's and X3D's first bottleneck
ANCHORS = ("blocks.0.multipathway_blocks.0.conv.weight", "blocks.1.res_blocks.0.branch2.conv_a.weight")


def _stem(theirs: str, ours: str) -> dict[str, str]:
    return {f"{theirs}.conv": f"{ours}.conv1", f"{theirs}.norm": f"{ours}.bn1"}


def _stage(theirs: str, ours: str, stage: nn.Module) -> dict[str, str]:
    """A stage's bottlenecks, PyTorchVideo's path → ours (a stage with non-local blocks has no counterpart there:
    their entries stay missing, which the caller names)."""
    blocks = [index for index, module in enumerate(stage) if isinstance(module, Bottleneck)]
    return {f"{theirs}.res_blocks.{i}.{t}": f"{ours}.{index}.{o}" for i, index in enumerate(blocks)
            for t, o in BOTTLENECK.items()}


def _x3d(model: nn.Module) -> dict[str, str]:
    """An X3D's modules, PyTorchVideo's path → ours (a module the model lacks, e.g. a block's squeeze-excitation,
    maps to a name the model does not have, which the caller names)."""
    names = X3D_STEM | X3D_HEAD
    for block, ours in enumerate(X3D_STAGES, start=1):
        for i in range(len(getattr(model, ours))):
            names |= {f"blocks.{block}.res_blocks.{i}.{t}": f"{ours}.{i}.{o}" for t, o in X3D_BOTTLENECK.items()}
    return names


def module_names(model: nn.Module) -> dict[str, str] | None:
    """Every weight-holding module of `model` (a SlowFast, I3D or X3D here), PyTorchVideo's path → the harness's;
    None for other models."""
    if isinstance(model, X3D):
        return _x3d(model)

    names = {"blocks.6.proj": "head.fc"}
    if isinstance(model, SlowFast):
        names |= _stem("blocks.0.multipathway_blocks.0", "slow_stem")
        names |= _stem("blocks.0.multipathway_blocks.1", "fast_stem")
        fusions = ["fuse_stem", *(f"fusions.{i}" for i in range(len(model.fusions)))]
        for block, ours in enumerate(fusions):
            names |= {f"blocks.{block}.multipathway_fusion.conv_fast_to_slow": f"{ours}.conv",
                      f"blocks.{block}.multipathway_fusion.norm": f"{ours}.bn"}
        for i, (slow, fast) in enumerate(zip(model.slow_stages, model.fast_stages, strict=True)):
            names |= _stage(f"blocks.{i + 1}.multipathway_blocks.0", f"slow_stages.{i}", slow)
            names |= _stage(f"blocks.{i + 1}.multipathway_blocks.1", f"fast_stages.{i}", fast)
        return names
    if isinstance(model, I3D):
        names |= _stem("blocks.0", "stem")
        for block, ours in I3D_STAGES.items():
            names |= _stage(f"blocks.{block}", ours, getattr(model, ours))
        return names
    return None
