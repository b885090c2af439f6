"""Video models for every recipe, a strict registry, multigrid BN, FLOP counts, inflation."""

from harness.models import i3d, slowfast, torchvision_models, x3d  # noqa: F401  (registers the models)
from harness.models.bn import MultigridBatchNorm3d, convert_batchnorm, multigrid_bns, set_bn_layout
from harness.models.build import build_model, is_paper_model
from harness.models.registry import get_entry, list_models, register_model

__all__ = [
    "MultigridBatchNorm3d", "build_model", "convert_batchnorm", "get_entry", "is_paper_model", "list_models",
    "multigrid_bns", "register_model", "set_bn_layout",
]
