"""multigrid-harness: benchmark and reproduce multigrid training of video models (Wu et al., CVPR 2020)."""

__version__ = "0.1.0"

import warnings

# torchvision's import still calls torch.jit.script, which torch 2.14 reports as deprecated on every run.
warnings.filterwarnings("ignore", message=r"`torch.jit.script` is deprecated", category=FutureWarning)
