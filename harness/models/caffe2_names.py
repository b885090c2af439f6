"""Caffe2's names for the weights of SlowFast and I3D, as PySlowFast's Caffe2 model zoo publishes them (its Kinetics
SlowFast R50 4×16 and 8×8, I3D R50 and I3D-NL R50 .pkl files), turned into PySlowFast's own names
(:mod:`harness.models.pyslowfast_names` takes them on to the harness's).

A blob's name says where it sits: a leading `t_` marks the fast pathway; `conv1` (or `res_conv1`) and `res_conv1_bn`
are the stem; `res{stage}_{block}_branch2{a,b,c}` a bottleneck's convolutions and `…_bn` their BN, `…_branch1` its
projection shortcut; `t_pool1_subsample` and `t_res{stage}_{block}_branch2c_bn_subsample` the fast-to-slow fusions
after the stem and after stage `stage`; `nonlocal_conv{stage}_{block}_{theta,phi,g,out,bn}` the non-local blocks;
`pred` the classifier. The last part names the tensor: `w` weight, `b` bias, and for BN `s` scale (weight), `b`,
`rm` running mean, `riv` running variance. Caffe2 also keeps the solver's state beside the weights (`…_momentum`,
`lr`, `model_iter`), which is left out, as is any other blob of none of these parts (named in the run's log).
"""

from __future__ import annotations

import re

import torch

TENSOR = {"w": "weight", "b": "bias"}
BN_TENSOR = {"s": "weight", "b": "bias", "rm": "running_mean", "riv": "running_var"}
SOLVER_STATE = re.compile(r"^(lr|model_iter|.*_momentum)$")
# (pattern, PySlowFast module path) in order: the fusions' names also fit the bottleneck pattern, so they come first.
MODULES = (
    (r"t_pool1_subsample_bn", "s1_fuse.bn"),
    (r"t_pool1_subsample", "s1_fuse.conv_f2s"),
    (r"t_res(?P<stage>\d+)_\d+_branch2c_bn_subsample_bn", "s{stage}_fuse.bn"),
    (r"t_res(?P<stage>\d+)_\d+_branch2c_bn_subsample", "s{stage}_fuse.conv_f2s"),
    (r"(?P<t>t_)?(?:res_)?conv1_bn", "s1.pathway{p}_stem.bn"),
    (r"(?P<t>t_)?(?:res_)?conv1", "s1.pathway{p}_stem.conv"),
    (r"(?P<t>t_)?res(?P<stage>\d+)_(?P<block>\d+)_branch2(?P<part>[abc])_bn",
     "s{stage}.pathway{p}_res{block}.branch2.{part}_bn"),
    (r"(?P<t>t_)?res(?P<stage>\d+)_(?P<block>\d+)_branch2(?P<part>[abc])",
     "s{stage}.pathway{p}_res{block}.branch2.{part}"),
    (r"(?P<t>t_)?res(?P<stage>\d+)_(?P<block>\d+)_branch1_bn", "s{stage}.pathway{p}_res{block}.branch1_bn"),
    (r"(?P<t>t_)?res(?P<stage>\d+)_(?P<block>\d+)_branch1", "s{stage}.pathway{p}_res{block}.branch1"),
    (r"nonlocal_conv(?P<stage>\d+)_(?P<block>\d+)_bn", "s{stage}.pathway0_nonlocal{block}.bn"),
    (r"nonlocal_conv(?P<stage>\d+)_(?P<block>\d+)_(?P<conv>theta|phi|g|out)",
     "s{stage}.pathway0_nonlocal{block}.conv_{conv}"),
    (r"pred", "head.projection"),
)
_COMPILED = tuple((re.compile(rf"^(?:{pattern})_(?P<tensor>[a-z]+)$"), path) for pattern, path in MODULES)


def is_caffe2(state: dict) -> bool:
    """Whether `state`'s names are Caffe2's (a stem convolution's, a bottleneck's or the classifier's)."""
    return any(k in ("conv1_w", "res_conv1_w", "pred_w") or k.startswith("res2_0_branch2a_") for k in state)


def pyslowfast_name(blob: str) -> str | None:
    """PySlowFast's name of a Caffe2 blob; None where the blob is none of the parts above."""
    for pattern, path in _COMPILED:
        found = pattern.match(blob)
        if found is None:
            continue
        parts = found.groupdict()
        names = BN_TENSOR if path.endswith("bn") else TENSOR
        if parts["tensor"] not in names:
            return None
        parts["p"] = "1" if parts.get("t") else "0"
        return f"{path.format(**{k: v for k, v in parts.items() if v is not None})}.{names[parts['tensor']]}"
    return None


def caffe2_to_pyslowfast(blobs: dict[str, torch.Tensor]) -> tuple[dict[str, torch.Tensor], list[str]]:
    """`blobs` under PySlowFast's names, and the blobs left out: the solver's state, and blobs of no part above (as
    PySlowFast's own reader skips what its model does not have; the caller says which)."""
    renamed, left_out = {}, []
    for name, value in blobs.items():
        if SOLVER_STATE.match(name):
            continue
        theirs = pyslowfast_name(name)
        if theirs is None:
            left_out.append(name)
        else:
            renamed[theirs] = value
    return renamed, left_out
