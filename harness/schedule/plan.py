"""The Plan: phases of a baseline or multigrid run, derived from a RunSpec (paper §3.2;
PySlowFast slowfast/utils/multigrid.py).

A phase is a span of epochs with one LR multiplier and one long-cycle base shape. The
multigrid schedule's epoch boundaries reproduce the reference implementation's output to
the epoch (its rounding of a running sum, its zero-length phases, the fine-tuning phase
split in two LR halves), without its crashes (long cycle only, one GPU).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from harness.schedule.iterations import iterations_per_epoch
from harness.schedule.shapes import LongShape, PlanError, Shape, cycle_for_base, fixed_shape, long_cycle_shapes
from harness.spec import BaselineSpec, MultigridSpec, RunSpec


@dataclass(frozen=True)
class Phase:
    """Epochs [start_epoch, end_epoch) trained at one LR multiplier and one long-cycle base shape.

    Zero-length phases (start == end) are kept, as the reference keeps them, and never trained.
    """

    index: int
    stage: int  # the baseline's LR stage this phase belongs to (0-based)
    start_epoch: int
    end_epoch: int
    lr_multiplier: float  # relative to solver.base_lr (gamma^stage × long-cycle batch multiplier)
    base: Shape  # batch_mult relative to the baseline batch
    cycle: tuple[Shape, ...]  # shapes of iterations i mod len(cycle); batch_mult relative to `base`
    per_gpu_batches: tuple[int, ...]  # clips per GPU for each cycle entry
    bn_splits: int  # sub-batch BN groups per GPU (1 = plain BN)
    bn_sync: int  # devices BN statistics are synchronised over (1 = none)
    iterations_per_epoch: int
    fine_tune: bool = False

    @property
    def epochs(self) -> int:
        return self.end_epoch - self.start_epoch

    @property
    def iterations(self) -> int:
        return self.epochs * self.iterations_per_epoch

    @property
    def short_cycle(self) -> bool:
        return len(self.cycle) > 1


@dataclass(frozen=True)
class Plan:
    """Everything the trainer asks per iteration, and the run's accounting."""

    spec: RunSpec
    phases: tuple[Phase, ...]
    max_epoch: int
    warmup_epochs: float
    baseline_iterations: int
    kind: str  # "baseline", "multigrid", "long_cycle", "short_cycle"
    iteration_starts: tuple[int, ...] = field(repr=False, default=())

    @property
    def lr_steps(self) -> list[int]:
        return [p.start_epoch for p in self.phases]

    @property
    def lr_multipliers(self) -> list[float]:
        return [p.lr_multiplier for p in self.phases]

    @property
    def iterations(self) -> int:
        return sum(p.iterations for p in self.phases)

    @property
    def iteration_ratio(self) -> float:
        """Baseline iterations over this plan's iterations (the paper's "× fewer iterations")."""
        return self.baseline_iterations / self.iterations

    @property
    def samples_per_rank(self) -> int:
        return samples_per_rank(self.spec)

    def phase_at_epoch(self, epoch: float) -> Phase:
        """The phase training is in at (fractional) `epoch`; zero-length phases are never returned."""
        live = [p for p in self.phases if p.epochs > 0]
        for p in live:
            if epoch < p.end_epoch:
                return p
        return live[-1]

    def stride_range(self, t: int) -> tuple[int, int]:
        """Random temporal stride range for `t` frames: [r, r·(T0 // t)] (paper §3)."""
        r, t0 = self.spec.data.sampling_rate, self.spec.data.num_frames
        return r, r * max(1, t0 // t)

    def jitter_range(self, s: int) -> tuple[int, int]:
        """Random short-side range for crop `s`: [round(jitter_min·s/S0), jitter_max] (paper §3)."""
        lo, hi = self.spec.data.jitter
        return int(round(lo * s / self.spec.data.crop_size)), hi


def samples_per_rank(spec: RunSpec) -> int:
    """Clips each rank sees per epoch: a distributed sampler pads the dataset to a multiple of the ranks."""
    return math.ceil(spec.data.train_videos / spec.num_gpus)


def _bn_layout(spec: RunSpec, per_gpu_batch: int) -> tuple[int, int]:
    """(sub-batch BN splits, BN sync devices) for a long-cycle per-GPU batch (paper §3).

    The reference uses int(f) splits and int(1/f) devices; we additionally keep the split a
    divisor of the batch and the sync group a divisor of the GPU count, where the reference
    would fail to reshape or to form groups.
    """
    f = per_gpu_batch / spec.multigrid.bn_base_size
    if f > 1:
        splits = int(f)
        while per_gpu_batch % splits:
            splits -= 1
        return splits, 1
    if f < 1:
        sync = min(int(1 / f), spec.num_gpus)
        while spec.num_gpus % sync:
            sync -= 1
        return 1, sync
    return 1, 1


def _make_phase(spec: RunSpec, index: int, stage: int, start: int, end: int, lr: float, base: Shape,
                cycle: tuple[Shape, ...], fine_tune: bool = False) -> Phase:
    per_gpu = spec.solver.batch_size // spec.num_gpus
    long_batch = base.batch_mult * per_gpu
    per_gpu_batches = tuple(c.batch_mult * long_batch for c in cycle)
    splits, sync = _bn_layout(spec, long_batch)
    ipe = iterations_per_epoch(samples_per_rank(spec), per_gpu_batches)  # 0 where a batch outgrows the data
    return Phase(index, stage, start, end, lr, base, cycle, per_gpu_batches, splits, sync, ipe, fine_tune)


def _scaled_stages(spec: RunSpec, factor: float) -> tuple[list[int], int]:
    """Steps and max epoch multiplied by `factor` and truncated with int(), as the reference does."""
    steps = [int(s * factor) for s in spec.solver.steps]
    max_epoch = int(spec.solver.max_epoch * factor)
    if max_epoch <= 0:
        raise PlanError(f"An epoch factor of {factor} leaves {spec.solver.max_epoch}×{factor} < 1 epoch. "
                        f"Use a larger 'multigrid.epoch_factor' / 'baseline.epoch_factor'.")
    return steps, max_epoch


def _fixed_shape_phases(spec: RunSpec, steps: list[int], max_epoch: int, base: Shape, short_on: bool) -> list[Phase]:
    """One phase per LR stage at a fixed base shape (baselines and the short-cycle-only variant)."""
    cycle = cycle_for_base(spec, base, short_on)
    ends = [*steps[1:], max_epoch]
    # Linear scaling rule: a larger batch of smaller clips gets a proportionally larger LR (Figure 3 variant).
    return [_make_phase(spec, k, k, start, max(start, end), spec.solver.gamma**k * base.batch_mult, base, cycle)
            for k, (start, end) in enumerate(zip(steps, ends))]


def _long_cycle_phases(spec: RunSpec) -> list[Phase]:
    """The reference's long-cycle schedule (PySlowFast's get_long_cycle_schedule), as LR-constant phases."""
    s = spec.solver
    steps = list(s.steps)
    if len(steps) < 2:
        raise PlanError("The long cycle runs inside every LR stage but the last, so it needs at least two stages: "
                        "give 'solver.steps' a second entry (e.g. solver.steps=[0,100]) or set "
                        "multigrid.long_cycle=false.")
    shapes: list[LongShape] = long_cycle_shapes(spec)
    avg = [ls.avg_batch_mult for ls in shapes]
    total_avg = sum(avg)
    # (stage, long shape, unscaled epochs) for every phase; equal iterations per shape within a stage.
    raw: list[tuple[int, LongShape, float]] = []
    unscaled_iters = 0.0
    for stage in range(len(steps) - 1):
        stage_epochs = steps[stage + 1] - steps[stage]
        for ls in shapes:
            epochs = stage_epochs * ls.avg_batch_mult / total_avg
            unscaled_iters += epochs / ls.avg_batch_mult
            raw.append((stage, ls, epochs))
    iter_saving = steps[-1] / unscaled_iters
    # Fine-tuning at the finest shape; the reference indexes its 3rd short shape here and crashes without
    # a short cycle, so we take the base shape (as PySlowFast's multigrid.py does).
    fine = shapes[-1]
    fine_epochs = (s.max_epoch - steps[-1]) / iter_saving * fine.avg_batch_mult
    raw.append((len(steps) - 1, fine, fine_epochs))

    scale = s.max_epoch * spec.multigrid.epoch_factor / sum(r[2] for r in raw)
    ends, running = [], 0.0
    for _, _, epochs in raw:
        running += epochs * scale
        ends.append(int(round(running)))  # round the running sum, not each phase (reference)
    bounds = [0, *ends]
    mid = (bounds[-2] + bounds[-1]) // 2  # fine-tuning: first half at the previous stage's LR

    phases = []
    for i, (stage, ls, _) in enumerate(raw[:-1]):
        lr = s.gamma**stage * ls.base.batch_mult
        phases.append(_make_phase(spec, i, stage, bounds[i], bounds[i + 1], lr, ls.base, ls.cycle))
    # The fine-tuning phase's long shape is the baseline shape; the short cycle keeps running in it. Its
    # length above assumes exactly that (the avg_batch_mult term), and only then does the default plan
    # need the paper's "3.4× fewer iterations".
    fine_base, fine_cycle = fine.base, fine.cycle
    last_stage = len(steps) - 1
    phases.append(_make_phase(spec, len(phases), last_stage, bounds[-2], mid, phases[-1].lr_multiplier,
                              fine_base, fine_cycle, fine_tune=True))
    phases.append(_make_phase(spec, len(phases), last_stage, mid, bounds[-1],
                              s.gamma**last_stage * fine_base.batch_mult, fine_base, fine_cycle, fine_tune=True))
    return phases


def progressive_sizes(spec: RunSpec, max_epoch: int) -> list[tuple[int, int]]:
    """(first epoch, crop) of each step of a progressive-resizing baseline: equal steps from the starting crop,
    the last one the recipe's crop from (1 − progressive_full_fraction) of the epochs on."""
    b, s0 = spec.baseline, spec.data.crop_size
    ramp_end = max_epoch * (1 - b.progressive_full_fraction)
    steps = [(int(round(ramp_end * k / b.progressive_stages)),
              int(round(s0 * (b.progressive_scale + (1 - b.progressive_scale) * k / b.progressive_stages))))
             for k in range(b.progressive_stages)]
    steps.append((int(round(ramp_end)), s0))
    if min(crop for _, crop in steps) < 1:
        raise PlanError(f"'baseline.progressive_scale' {b.progressive_scale} rounds the first crop to 0px with "
                        f"data.crop_size={s0}. Use a larger scale.")
    return [(epoch, crop) for i, (epoch, crop) in enumerate(steps) if i + 1 == len(steps) or steps[i + 1][0] > epoch]


def _progressive_phases(spec: RunSpec, steps: list[int], max_epoch: int) -> list[Phase]:
    """A baseline whose crop grows once over training at a fixed batch: one phase per stretch of one crop and one
    LR stage, the clip's frames and the LR schedule the baseline's."""
    sizes = progressive_sizes(spec, max_epoch)
    bounds = sorted({0, *(e for e in steps if e < max_epoch), *(e for e, _ in sizes if e < max_epoch), max_epoch})
    phases = []
    for start, end in itertools.pairwise(bounds):
        stage = max(k for k, step in enumerate(steps) if step <= start)
        crop = max((c for e, c in sizes if e <= start), default=sizes[0][1])
        base = Shape(1, spec.data.num_frames, crop)
        phases.append(_make_phase(spec, len(phases), stage, start, end, spec.solver.gamma**stage, base,
                                  cycle_for_base(spec, base, False)))
    return phases


def baseline_spec(spec: RunSpec) -> RunSpec:
    """The 1.0× fixed-shape baseline a plan is compared against."""
    mg = replace(spec.multigrid, long_cycle=False, short_cycle=False)
    return replace(spec, multigrid=mg, baseline=BaselineSpec())


def _phases(spec: RunSpec) -> tuple[list[Phase], int, str]:
    m, s = spec.multigrid, spec.solver
    if m.long_cycle:
        phases = _long_cycle_phases(spec)
        return phases, phases[-1].end_epoch, "multigrid" if m.short_cycle else "long_cycle"
    t0, s0 = spec.data.num_frames, spec.data.crop_size
    if m.short_cycle:
        steps, max_epoch = _scaled_stages(spec, m.epoch_factor)
        return _fixed_shape_phases(spec, steps, max_epoch, Shape(1, t0, s0), True), max_epoch, "short_cycle"
    b = spec.baseline
    steps, max_epoch = (list(s.steps), s.max_epoch) if b.epoch_factor == 1 else _scaled_stages(spec, b.epoch_factor)
    if b.progressive_scale:
        return _progressive_phases(spec, steps, max_epoch), max_epoch, "progressive"
    base = fixed_shape(spec, *b.shape_factor)
    return _fixed_shape_phases(spec, steps, max_epoch, base, False), max_epoch, "baseline"


def _iteration_starts(phases: list[Phase]) -> tuple[int, ...]:
    starts, total = [], 0
    for p in phases:
        starts.append(total)
        total += p.iterations
    return tuple(starts)


def _starved(phases: list[Phase]) -> list[Phase]:
    """The phases that train (epochs > 0) whose first batch of a cycle, its largest, outgrows an epoch's clips."""
    return [p for p in phases if p.epochs > 0 and p.iterations_per_epoch == 0]


def _clips_needed(spec: RunSpec) -> int | None:
    """Clips per GPU per epoch that every phase of `spec`'s plan needs (its largest first batch of a cycle), or None
    where the settings plan nothing."""
    try:
        phases = _phases(spec)[0]
    except PlanError:
        return None
    return max((p.per_gpu_batches[0] for p in phases if p.epochs > 0), default=None)


def _fitting_batch(spec: RunSpec, multigrid: MultigridSpec) -> int:
    """The largest per-GPU batch, up to `spec`'s, at which every phase of `spec` with `multigrid` fits the clips each
    GPU sees per epoch; 0 where none does. Every batch of a plan is a multiple of the per-GPU batch."""
    per_gpu = spec.solver.batch_size // spec.num_gpus
    needed = _clips_needed(replace(spec, multigrid=multigrid))
    return 0 if needed is None else min(per_gpu, samples_per_rank(spec) // (needed // per_gpu))


def _fewer_shapes(m: MultigridSpec) -> Iterator[tuple[str, MultigridSpec]]:
    """Multigrid settings that leave out coarse shapes (those of the largest batches), the fewest first: Table 1a's
    subsets of the long cycle, then the short cycle off."""
    n = m.long_cycle_shapes or len(m.long_cycle_factors)
    if m.long_cycle:
        for k in range(n - 1, 0, -1):
            yield f"multigrid.long_cycle_shapes={k}", replace(m, long_cycle_shapes=k)
    if m.short_cycle:
        for k in range(n, 0, -1) if m.long_cycle else [n]:
            subset = m.long_cycle and k < n
            yield ("multigrid.short_cycle=false" + (f" multigrid.long_cycle_shapes={k}" if subset else ""),
                   replace(m, short_cycle=False, long_cycle_shapes=k if subset else m.long_cycle_shapes))


def _fixes_for_few_clips(spec: RunSpec, need: int) -> list[str]:
    """Settings that make every phase fit the clips each GPU sees per epoch: enough videos; a smaller batch where
    one fits; else the fewest coarse multigrid shapes left out (at a batch that fits); else the baseline."""
    g, per_gpu = spec.num_gpus, spec.solver.batch_size // spec.num_gpus
    videos = (f"a training set of at least {(need - 1) * g + 1} videos (data.train_videos counts them: "
              f"{spec.data.train_videos} now)")
    lr_note = "scale solver.base_lr with it, the linear scaling rule"
    batch = _fitting_batch(spec, spec.multigrid)
    if batch:
        return [videos, f"solver.batch_size={batch * g} ({batch} per GPU; {lr_note})"]
    for setting, multigrid in _fewer_shapes(spec.multigrid):
        batch = _fitting_batch(spec, multigrid)
        if batch:
            smaller = f" solver.batch_size={batch * g} ({lr_note})" if batch < per_gpu else ""
            return [videos, f"{setting}{smaller}: multigrid without its coarsest shapes, whose batches are largest"]
    return [videos, "a baseline run (multigrid.long_cycle=false multigrid.short_cycle=false), one batch of "
                    "solver.batch_size clips a step"]


def _require_clips_for_every_phase(spec: RunSpec, phases: list[Phase], what: str) -> None:
    """PlanError naming every phase whose batches outgrow the clips each GPU sees per epoch, with fixes that work."""
    starved = _starved(phases)
    if not starved:
        return
    need = max(p.per_gpu_batches[0] for p in phases if p.epochs > 0)
    listed = "; ".join(f"phase {p.index} ({p.base.t}×{p.base.s}px) needs {p.per_gpu_batches[0]} clips per GPU"
                       for p in starved)
    raise PlanError(
        f"Each GPU sees {samples_per_rank(spec)} training clip(s) per epoch ('data.train_videos' "
        f"{spec.data.train_videos} over 'num_gpus' {spec.num_gpus}), fewer than one batch of {len(starved)} "
        f"phase(s) of the {what} plan takes per iteration ({spec.solver.batch_size // spec.num_gpus} per GPU at the "
        f"baseline shape, more at the coarse ones): {listed}. Any one of these fits: "
        + "; or ".join(_fixes_for_few_clips(spec, need)) + ".")


def build_plan(spec: RunSpec) -> Plan:
    """Build the Plan of `spec` (baseline or multigrid), raising PlanError on impossible settings."""
    phases, max_epoch, kind = _phases(spec)
    _require_clips_for_every_phase(spec, phases, kind)
    base_phases, _, _ = _phases(baseline_spec(spec))
    _require_clips_for_every_phase(baseline_spec(spec), base_phases, "baseline")
    baseline_iterations = sum(p.iterations for p in base_phases)
    # The reference keeps the warm-up in baseline epochs even when multigrid stretches the schedule
    # (PySlowFast slowfast/utils/multigrid.py); we scale it with the schedule so it covers the same share of training.
    warmup = spec.solver.warmup_epochs * max_epoch / spec.solver.max_epoch
    plan = Plan(spec, tuple(phases), max_epoch, warmup, baseline_iterations, kind, _iteration_starts(phases))
    if plan.iterations == 0:
        raise PlanError(f"The plan has no training iterations (max epoch {max_epoch}): the schedule is too short. "
                        f"Raise 'solver.max_epoch' or the epoch factor ('multigrid.epoch_factor').")
    return plan

