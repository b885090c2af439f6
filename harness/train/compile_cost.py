"""Where a compiled step's compile time goes: tracing, AOTAutograd, Inductor forward and backward, guards, and
whether PyTorch's compile caches served it.

`torch.compile` keeps process-wide timers (`torch._dynamo.utils.compilation_time_metrics`, seconds per call of
each compile stage) and counters (`torch._dynamo.utils.counters`: graphs, cache hits and misses). A
`CompileCostMeter` reads both when a compiled step is made and again when asked, so the difference is that step's
compilations. These are PyTorch's internal names: a stage PyTorch renames reads as 0 here, it never fails a run.

The stages nest: Dynamo's compile of a frame (`compile_s`) holds its tracing (`tracing_s`), the guards it builds
(`guards_s`) and AOTAutograd (`aot_autograd_s`), which holds the forward's Inductor compile (`inductor_forward_s`;
`aot_autograd_s` here excludes it). The backward's Inductor compile (`inductor_backward_s`) runs lazily at the
first backward, outside Dynamo's. What a step's setup_s holds beyond `compile_s + inductor_backward_s` is running
the step itself (warm-up runs, a CUDA graph's capture).
"""

from __future__ import annotations

from typing import Any

# stage -> PyTorch's timer of it
_TIMERS = {
    "compile_s": "_compile.compile_inner",
    "tracing_s": "bytecode_tracing",
    "guards_s": "build_guards",
    "aot_autograd_s": "create_aot_dispatcher_function",
    "inductor_forward_s": "compile_fx.<locals>.fw_compiler_base",
    "inductor_backward_s": "compile_fx.<locals>.bw_compiler",
}
# count -> (PyTorch's counter group, counter)
_COUNTERS = {
    "graphs": ("stats", "unique_graphs"),
    "inductor_cache_hits": ("inductor", "fxgraph_cache_hit"),
    "inductor_cache_misses": ("inductor", "fxgraph_cache_miss"),
    "aot_autograd_cache_hits": ("aot_autograd", "autograd_cache_hit"),
    "aot_autograd_cache_misses": ("aot_autograd", "autograd_cache_miss"),
}


def _totals() -> dict[str, float]:
    """Every stage's seconds and every count so far in this process (0 for what PyTorch does not keep)."""
    try:
        from torch._dynamo import utils
        timers, counters = utils.compilation_time_metrics, utils.counters
        totals = {stage: float(sum(timers.get(name, ()))) for stage, name in _TIMERS.items()}
        totals.update({count: float(counters.get(group, {}).get(name, 0))
                       for count, (group, name) in _COUNTERS.items()})
    except Exception:  # PyTorch without these internals, or of another shape: no breakdown, and
        return {}  # never a run that fails writing its record
    return totals


class CompileCostMeter:
    """The compile stages' seconds and the compile caches' hits since this meter was made."""

    def __init__(self) -> None:
        self.start = _totals()

    def cost(self) -> dict[str, Any]:
        """Seconds per stage (rounded to ms) and counts since the meter was made; {} where PyTorch keeps neither."""
        now = _totals()
        cost: dict[str, Any] = {}
        for key, value in now.items():
            spent = value - self.start.get(key, 0.0)
            cost[key] = round(spent, 3) if key.endswith("_s") else int(spent)
        if cost:  # AOTAutograd's timer holds the forward's Inductor compile: its own share is the rest
            cost["aot_autograd_s"] = round(max(0.0, cost["aot_autograd_s"] - cost["inductor_forward_s"]), 3)
        return cost
