"""multigrid-harness: benchmark and reproduce multigrid training of video models (Wu et al., CVPR 2020)."""

__version__ = "0.1.0"
