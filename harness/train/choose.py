"""What `train.step=auto` and `train.sub_batch_bn=auto` run: the eligible path that the profiles predict fastest.

A run's candidates are every step mode and sub-batch BN implementation `auto` may pick on a GPU (CUDA graphs or
compiled-and-graphed steps; cuDNN's BN per block or the Triton kernels), minus the combinations the trainer
refuses. A candidate counts only if

- it is *eligible*: every fast path in it (a step mode or BN implementation other than today's default) has passed
  its numerics test on this kind of card (tests/integration/test_fast_path_numerics.py records the passes);
- the profiles of this card (`harness profile` records) time its steps at every shape the run trains, so that its
  steps' seconds can be predicted as Σ iterations × step time;
- for compiled steps, compiling every shape the run trains costs at most COMPILE_SHARE_LIMIT of those seconds.

The fastest such candidate (steps plus compiling) is chosen; where today's default is not itself predicted,
nothing is shown faster than it and it stays. On a CPU, steps are eager. Pure: the evidence comes in as plain data
(harness.train.choice_evidence reads it from the committed records).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.spec import COMPILED_STEP_MODES

ShapeKey = tuple[int, int, int, int]  # (t, s, per-GPU batch, BN splits), as harness.schedule.trained counts them

# A compiled step pays its compiling once per shape, in the run's own wall-clock: worth it only where that is a
# small part of the run (compile time per shape: results/throughput/*compile_graphs*.json).
COMPILE_SHARE_LIMIT = 0.02
GPU_STEPS = ("cuda_graphs", "compile_graphs")  # what step=auto considers on a GPU
SUB_BATCH_BNS = ("auto", "triton")  # what sub_batch_bn=auto considers on a GPU ("auto": cuDNN per block)
DEFAULT_GPU_STEP = "cuda_graphs"


@dataclass(frozen=True)
class Evidence:
    """What the committed records say about one kind of card."""

    # (step mode, sub_batch_bn, model label) -> median step ms at each timed (t, s, per-GPU batch, BN splits)
    step_ms: dict[tuple[str, str, str], dict[ShapeKey, float]] = field(default_factory=dict)
    compile_s_per_shape: dict[str, float] = field(default_factory=dict)  # model label -> seconds to compile a shape
    passed: frozenset[str] = frozenset()  # fast paths whose numerics test passed here, e.g. "sub_batch_bn=triton"


@dataclass(frozen=True)
class RunShapes:
    """What the rule needs to know of a run: its model, the iterations at each shape, how many step keys it
    compiles (distinct shape, batch and BN layouts) and its GPU count."""

    model: str
    iterations: dict[ShapeKey, int]
    specialisations: int
    num_gpus: int = 1

    @property
    def uses_sub_batch_bn(self) -> bool:
        return any(key[3] > 1 for key in self.iterations)


@dataclass(frozen=True)
class Choice:
    step: str
    sub_batch_bn: str
    reason: str
    card: str | None = None
    candidates: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "sub_batch_bn": self.sub_batch_bn, "reason": self.reason, "card": self.card,
                "compile_share_limit": COMPILE_SHARE_LIMIT, "candidates": list(self.candidates)}


def fast_paths(step: str, sub_batch_bn: str) -> list[str]:
    """The parts of a candidate that must have passed their numerics test: those other than today's default."""
    paths = [] if step == DEFAULT_GPU_STEP else [f"step={step}"]
    return paths + ([] if sub_batch_bn == "auto" else [f"sub_batch_bn={sub_batch_bn}"])


def choose(step: str, sub_batch_bn: str, run: RunShapes, card: str | None, evidence: Evidence | None) -> Choice:
    """The step mode and sub-batch BN implementation for `run` on `card` (None: no GPU), as `train.step` and
    `train.sub_batch_bn` ask: a setting other than `auto` is kept as it is."""
    if step != "auto" and sub_batch_bn != "auto":
        return Choice(step, sub_batch_bn, "both set explicitly", card)
    if card is None:
        return Choice("eager" if step == "auto" else step, sub_batch_bn,
                      "no GPU: eager steps and PyTorch's BN (the fast paths are CUDA graphs and CUDA kernels)")
    default = (DEFAULT_GPU_STEP if step == "auto" else step, sub_batch_bn)
    steps = GPU_STEPS if step == "auto" else (step,)
    bns = SUB_BATCH_BNS if sub_batch_bn == "auto" and run.uses_sub_batch_bn else (sub_batch_bn,)
    # Only what auto picks must be proven; a setting the user chose is theirs.
    auto_paths = {f"step={s}" for s in steps if step == "auto"} | {f"sub_batch_bn={b}" for b in bns
                                                                   if sub_batch_bn == "auto"}
    evidence = evidence or Evidence()
    rows = [_candidate(s, b, run, evidence, auto_paths) for s in steps for b in bns]
    return _pick(default, rows, card, bool(evidence.step_ms))


def _candidate(step: str, bn: str, run: RunShapes, evidence: Evidence, auto_paths: set[str]) -> dict[str, Any]:
    """One candidate's row: its prediction, and why it does not count (`why_not`), if it does not."""
    row: dict[str, Any] = {"step": step, "sub_batch_bn": bn, "predicted_s": None, "compile_s": 0.0,
                           "compile_share": None, "eligible": None, "why_not": None}
    needed = [p for p in fast_paths(step, bn) if p in auto_paths]
    row["eligible"] = all(p in evidence.passed for p in needed)
    row["predicted_s"] = predicted_seconds(evidence.step_ms.get((step, bn, run.model)), run.iterations)
    row["why_not"] = (_refused(step, run) or _not_proven(needed, evidence)
                      or _not_predicted(row["predicted_s"], run))
    if step in COMPILED_STEP_MODES and row["predicted_s"] is not None:
        per_shape = evidence.compile_s_per_shape.get(run.model)
        if per_shape is None:
            row["why_not"] = row["why_not"] or f"no measured compile time of {run.model} on this card"
        else:
            row["compile_s"] = per_shape * run.specialisations
            row["compile_share"] = row["compile_s"] / row["predicted_s"]
            if row["compile_share"] > COMPILE_SHARE_LIMIT:
                row["why_not"] = row["why_not"] or (f"compiling {run.specialisations} shapes would be "
                                                    f"{row['compile_share']:.1%} of the run's predicted steps, "
                                                    f"over {COMPILE_SHARE_LIMIT:.0%}")
    return row


def predicted_seconds(step_ms: dict[ShapeKey, float] | None, iterations: dict[ShapeKey, int]) -> float | None:
    """Σ iterations × step time over the run's shapes; None unless every shape was timed."""
    if step_ms is None or any(key not in step_ms for key in iterations):
        return None
    return sum(n * step_ms[key] / 1e3 for key, n in iterations.items())


def _refused(step: str, run: RunShapes) -> str | None:
    """Why the trainer refuses this step mode for the run (harness.spec.validate), or None."""
    if step == "compile_graphs" and run.num_gpus > 1:
        return "compiled graphs run on one GPU"
    return None


def _not_proven(needed: list[str], evidence: Evidence) -> str | None:
    missing = [p for p in needed if p not in evidence.passed]
    return f"numerics test not passed on this card: {', '.join(missing)}" if missing else None


def _not_predicted(predicted_s: float | None, run: RunShapes) -> str | None:
    return None if predicted_s is not None else f"no profile of this card times {run.model} at every planned shape"


def _pick(default: tuple[str, str], rows: list[dict[str, Any]], card: str, profiled: bool) -> Choice:
    """The fastest counted row (steps plus compiling), or the default where the default is not predicted."""
    by_path = {(r["step"], r["sub_batch_bn"]): r for r in rows}
    counted = [r for r in rows if r["why_not"] is None]
    if by_path.get(default, {}).get("predicted_s") is None:
        why = "no committed profile of this card" if not profiled else "no profile predicts today's default here"
        return Choice(*default, f"today's default: {why}", card, tuple(rows))
    if not counted:  # e.g. a compiled step set explicitly whose compiling is too large a share of the run
        return Choice(*default, "today's default: no candidate counts here (their why_not says why)", card,
                      tuple(rows))
    best = min(counted, key=lambda r: r["predicted_s"] + r["compile_s"])
    if (best["step"], best["sub_batch_bn"]) == default:
        return Choice(*default, "today's default is the fastest eligible path predicted", card, tuple(rows))
    base = by_path[default]["predicted_s"]
    gain = base / (best["predicted_s"] + best["compile_s"])
    return Choice(best["step"], best["sub_batch_bn"], f"predicted {gain:.2f}× as fast as today's default "
                  f"({default[0]}, sub_batch_bn={default[1]}), compiling included", card, tuple(rows))
