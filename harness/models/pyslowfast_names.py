"""PySlowFast's names for the weights of SlowFast and I3D (ResNet-50, with or without non-local blocks), turned into
the harness's, so its checkpoints can start a run (:mod:`harness.models.video_weights`).

PySlowFast (github.com/facebookresearch/SlowFast, `slowfast/models/`) names a model's parts by stage and pathway:
the stems `s1.pathway{0,1}_stem.{conv,bn}` (pathway 0 slow, 1 fast); the fast-to-slow fusions after stages 1–4
`s{1..4}_fuse.{conv_f2s,bn}`; the bottlenecks `s{2..5}.pathway{p}_res{i}` with `branch2.{a,b,c}` and their
`branch2.{a,b,c}_bn`, the projection shortcut `branch1` and `branch1_bn`; the non-local blocks of I3D-NL
`s{stage}.pathway0_nonlocal{i}`, placed after bottleneck i, with `conv_theta`, `conv_phi`, `conv_g`, `conv_out` and
`bn`; the classifier `head.projection`. Its checkpoints keep these under "model_state", without DDP's 'module.'.
The same models here hold 662 (SlowFast R50) and 385 (I3D-NL R50) entries, as PySlowFast's do.
"""

from __future__ import annotations

from torch import nn

from harness.models.i3d import I3D
from harness.models.nonlocal_block import NonLocal
from harness.models.resnet3d import Bottleneck
from harness.models.slowfast import SlowFast

ANCHORS = ("s1.pathway0_stem.conv.weight",)  # an entry every model of this layout has
BOTTLENECK = {"branch2.a": "conv1", "branch2.a_bn": "bn1", "branch2.b": "conv2", "branch2.b_bn": "bn2",
              "branch2.c": "conv3", "branch2.c_bn": "bn3", "branch1": "downsample.0", "branch1_bn": "downsample.1"}
NONLOCAL = {"conv_theta": "theta", "conv_phi": "phi", "conv_g": "g", "conv_out": "out", "bn": "bn"}


def _stem(theirs: str, ours: str) -> dict[str, str]:
    return {f"{theirs}.conv": f"{ours}.conv1", f"{theirs}.bn": f"{ours}.bn1"}


def _stage(theirs: str, ours: str, stage: nn.Module) -> dict[str, str]:
    """A stage's modules, PySlowFast's path → ours: bottleneck i is `{theirs}_res{i}`, a non-local block after it
    `{theirs}_nonlocal{i}`."""
    names, block = {}, -1
    for index, module in enumerate(stage):
        if isinstance(module, Bottleneck):
            block += 1
            names.update({f"{theirs}_res{block}.{t}": f"{ours}.{index}.{o}" for t, o in BOTTLENECK.items()})
        elif isinstance(module, NonLocal):
            names.update({f"{theirs}_nonlocal{block}.{t}": f"{ours}.{index}.{o}" for t, o in NONLOCAL.items()})
    return names


def module_names(model: nn.Module) -> dict[str, str] | None:
    """Every weight-holding module of `model` (a SlowFast or I3D here), PySlowFast's path → the harness's; None for
    other models, which PySlowFast's layout does not describe."""
    names = {"head.projection": "head.fc"}
    if isinstance(model, SlowFast):
        names |= _stem("s1.pathway0_stem", "slow_stem") | _stem("s1.pathway1_stem", "fast_stem")
        fusions = [("s1_fuse", "fuse_stem")] + [(f"s{i + 2}_fuse", f"fusions.{i}") for i in range(len(model.fusions))]
        for theirs, ours in fusions:
            names |= {f"{theirs}.conv_f2s": f"{ours}.conv", f"{theirs}.bn": f"{ours}.bn"}
        for i, (slow, fast) in enumerate(zip(model.slow_stages, model.fast_stages, strict=True)):
            names |= _stage(f"s{i + 2}.pathway0", f"slow_stages.{i}", slow)
            names |= _stage(f"s{i + 2}.pathway1", f"fast_stages.{i}", fast)
    elif isinstance(model, I3D):
        names |= _stem("s1.pathway0_stem", "stem")
        for k in (2, 3, 4, 5):
            names |= _stage(f"s{k}.pathway0", f"res{k}", getattr(model, f"res{k}"))
    else:
        return None
    return names
