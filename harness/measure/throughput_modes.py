"""The modes and default recipes of `harness throughput`, apart from the measurement (which imports torch), so
that the command line is built without importing it."""

MODES = ("plain", "eager", "eager_autotuned", "cuda_graphs", "compile", "compile_graphs")
DEFAULT_RECIPES = ("k400_slowfast_r50_8x8", "k400_i3d_r50")
