"""PyTorchVideo's names for the weights of SlowFast R50 and I3D R50 (its torch.hub models `slowfast_r50` and
`i3d_r50`, whose checkpoints SLOWFAST_8x8_R50.pyth and I3D_8x8_R50.pyth keep them under "model_state"), turned into
the harness's (:mod:`harness.models.video_weights` loads them).

PyTorchVideo builds a network as a list of blocks (github.com/facebookresearch/pytorchvideo,
`pytorchvideo/models/slowfast.py`, `resnet.py`). SlowFast: `blocks.0` the stems
(`multipathway_blocks.{0 slow, 1 fast}.{conv,norm}`), `blocks.1`–`blocks.4` the four stages
(`multipathway_blocks.{p}.res_blocks.{i}`), `blocks.0`–`blocks.3` also the fast-to-slow fusion after them
(`multipathway_fusion.{conv_fast_to_slow,norm}`), `blocks.6.proj` the classifier. I3D: `blocks.0.{conv,norm}` the
stem, `blocks.1`, `blocks.3`, `blocks.4`, `blocks.5` the stages (`blocks.2` is a pooling layer),
`blocks.6.proj` the classifier. A bottleneck holds `branch2.{conv_a,norm_a,conv_b,norm_b,conv_c,norm_c}` and, where it
projects its shortcut, `branch1_conv` and `branch1_norm`. Its SlowFast R50 and I3D R50 hold 662 and 320 entries, as
the same models here do.
"""

from __future__ import annotations

from torch import nn

BOTTLENECK = {"branch2.conv_a": "conv1", "branch2.norm_a": "bn1", "branch2.conv_b": "conv2", "branch2.norm_b": "bn2",
              "branch2.conv_c": "conv3", "branch2.norm_c": "bn3", "branch1_conv": "downsample.0",
              "branch1_norm": "downsample.1"}
I3D_STAGES = {1: "res2", 3: "res3", 4: "res4", 5: "res5"}  # PyTorchVideo's block → the harness's stage


# an entry every model of this layout has: SlowFast's slow stem, I3D's first bottleneck
ANCHORS = ("blocks.0.multipathway_blocks.0.conv.weight", "blocks.1.res_blocks.0.branch2.conv_a.weight")


def _stem(theirs: str, ours: str) -> dict[str, str]:
    return {f"{theirs}.conv": f"{ours}.conv1", f"{theirs}.norm": f"{ours}.bn1"}


def _stage(theirs: str, ours: str, stage: nn.Module) -> dict[str, str]:
    """A stage's bottlenecks, PyTorchVideo's path → ours (a stage with non-local blocks has no counterpart there:
    their entries stay missing, which the caller names)."""
    from harness.models.resnet3d import Bottleneck

    blocks = [index for index, module in enumerate(stage) if isinstance(module, Bottleneck)]
    return {f"{theirs}.res_blocks.{i}.{t}": f"{ours}.{index}.{o}" for i, index in enumerate(blocks)
            for t, o in BOTTLENECK.items()}


def module_names(model: nn.Module) -> dict[str, str] | None:
    """Every weight-holding module of `model` (a SlowFast or I3D here), PyTorchVideo's path → the harness's; None for
    other models."""
    from harness.models.i3d import I3D
    from harness.models.slowfast import SlowFast

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
