"""Mini-batch shapes of the long and short cycles (paper §3.2; PySlowFast slowfast/utils/multigrid.py).

The arithmetic, including which values are rounded and when, follows the reference
implementation exactly: the Plan's epochs depend on it. That is the paper's batch rule
(multigrid.batch_rule=tokens, Eq. 1); batch_rule=flops puts the counted cost of each shape
(multigrid.shape_costs, counted outside this pure package) where Eq. 1 puts t·s².
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.spec import RunSpec, SpecError


class PlanError(SpecError):
    """The settings are individually valid but produce an impossible plan (names key and fix)."""


@dataclass(frozen=True)
class Shape:
    """One mini-batch shape: `t` frames × `s`×`s` pixels, `batch_mult` × a reference batch of clips."""

    batch_mult: int
    t: int
    s: int


@dataclass(frozen=True)
class LongShape:
    """A long-cycle base shape and the short-cycle shapes iterated inside it.

    `base.batch_mult` is relative to the baseline batch B (Eq. 1). `cycle` lists the shapes
    used at iterations i mod len(cycle) of an epoch; their `batch_mult` is relative to the
    base batch (the last entry is the base itself, multiplier 1). `avg_batch_mult` is the
    reference's mean multiplier relative to B, computed with the *unrounded* short-cycle
    sizes; it only weights how many epochs each long shape gets.
    """

    base: Shape
    cycle: tuple[Shape, ...]
    avg_batch_mult: float


def eq1_batch_mult(t0: int, s0: int, t: float, s: float) -> int:
    """Eq. (1) batch multiplier: round(T0·S0² / (t·s²)), as the reference rounds it."""
    return int(round(t0 * s0 * s0 / (t * s * s)))


def shape_cost(spec: RunSpec, t: int, s: int) -> float:
    """The forward cost of a t×s² clip relative to the baseline clip's (T0×S0², 1 by definition), as
    'multigrid.shape_costs' gives it (batch_rule=flops)."""
    t0, s0 = spec.data.num_frames, spec.data.crop_size
    if (t, s) == (t0, s0):
        return 1.0
    for known_t, known_s, cost in spec.multigrid.shape_costs:
        if (known_t, known_s) == (t, s):
            return cost
    raise PlanError(f"multigrid.batch_rule=flops needs the counted cost of a {t}×{s}² clip, which "
                    f"'multigrid.shape_costs' does not give. Composing the spec (harness plan, train, reproduce) "
                    f"counts it; or add [{t}, {s}, its cost relative to the {t0}×{s0}² clip].")


def flops_batch_mult(spec: RunSpec, large: tuple[int, int], small: tuple[int, int]) -> int:
    """round(cost(large) / cost(small)): the clips of shape `small` that cost one of `large` (batch_rule=flops, the
    counted-cost counterpart of Eq. 1)."""
    mult = int(round(shape_cost(spec, *large) / shape_cost(spec, *small)))
    if mult < 1:
        raise PlanError(f"A {small[0]}×{small[1]}² clip costs more than twice a {large[0]}×{large[1]}² one in "
                        f"'multigrid.shape_costs', which gives it a batch of zero clips under "
                        f"multigrid.batch_rule=flops. Check those costs.")
    return mult


def costed_shapes(spec: RunSpec) -> list[tuple[int, int]]:
    """Every clip shape whose cost a batch_rule=flops plan of `spec` reads, the baseline clip's among them: what to
    count before the plan is built."""
    d, m = spec.data, spec.multigrid
    t0, s0 = d.num_frames, d.crop_size
    if m.long_cycle:
        bases = [(int(round(t0 * tf)), int(round(s0 * sf))) for tf, sf in _kept_long_factors(spec)]
    elif m.short_cycle:
        bases = [(t0, s0)]
    else:
        bases = [(int(round(t0 * f_t)), int(round(s0 * f_s))) for f_t, f_s in [spec.baseline.shape_factor]]
    crops = [int(round(size)) for size in short_cycle_sizes(spec)]
    shapes = {(t0, s0)} | set(bases) | {(t, crop) for t, _ in bases for crop in crops}
    return sorted((t, s) for t, s in shapes if t >= 1 and s >= 1)  # the plan itself refuses the others


def short_cycle_sizes(spec: RunSpec) -> list[float]:
    """Unrounded short-cycle spatial sizes S0·a used by the cycle, most reduced first.

    `multigrid.short_cycle_shapes` = n keeps the last n-1 factors (n=2: only S0/√2): Table 1b.
    The sizes are relative to the default size S0, not to the long-cycle size (as in PySlowFast's multigrid.py).
    """
    m = spec.multigrid
    if not m.short_cycle or m.short_cycle_shapes <= 1:
        return []
    keep = m.short_cycle_shapes - 1
    return [spec.data.crop_size * a for a in m.short_cycle_factors[len(m.short_cycle_factors) - keep:]]


def cycle_for_base(spec: RunSpec, base: Shape, short_on: bool) -> tuple[Shape, ...]:
    """The shapes iterated inside a phase whose base shape is `base` (base last, multiplier 1)."""
    if not short_on:
        return (Shape(1, base.t, base.s),)
    cycle = []
    for size in short_cycle_sizes(spec):
        crop = int(round(size))
        if crop < 1:
            raise PlanError(f"A short-cycle size rounds to 0px with data.crop_size={spec.data.crop_size}. Raise "
                            f"data.crop_size or 'multigrid.short_cycle_factors'.")
        # The sampler's multiplier relative to the base batch (reference: ShortCycleBatchSampler).
        mult = (flops_batch_mult(spec, (base.t, base.s), (base.t, crop)) if spec.multigrid.batch_rule == "flops"
                else int(round((base.s / size) ** 2)))
        if mult < 1:
            raise PlanError(
                f"The short-cycle size {crop}px is larger than the long-cycle base size {base.s}px, which gives a "
                f"batch of zero clips. Lower 'multigrid.short_cycle_factors' or raise the spatial factors in "
                f"'multigrid.long_cycle_factors'.")
        cycle.append(Shape(mult, base.t, crop))
    cycle.append(Shape(1, base.t, base.s))
    return tuple(cycle)


def _kept_long_factors(spec: RunSpec) -> list[tuple[float, float]]:
    """The long-cycle factors kept (the last S' of them: Table 1a)."""
    m = spec.multigrid
    factors = list(m.long_cycle_factors)
    return factors if m.long_cycle_shapes is None else factors[len(factors) - m.long_cycle_shapes:]


def long_cycle_shapes(spec: RunSpec) -> list[LongShape]:
    """The kept long-cycle shapes (the last S' of the factors), coarse to fine."""
    d, m = spec.data, spec.multigrid
    t0, s0 = d.num_frames, d.crop_size
    shapes = []
    for i, (tf, sf) in enumerate(_kept_long_factors(spec)):
        base_t, base_s = int(round(t0 * tf)), int(round(s0 * sf))
        if base_t < 1 or base_s < 1:
            raise PlanError(
                f"Long-cycle shape {i} {list((tf, sf))} of 'multigrid.long_cycle_factors' rounds to {base_t} frames × "
                f"{base_s}px with data.num_frames={t0}, data.crop_size={s0}. Raise data.num_frames/data.crop_size "
                f"or use larger factors.")
        if m.batch_rule == "flops":  # costs are counted at the crops that train: the rounded sizes
            crops = [(base_t, int(round(size))) for size in short_cycle_sizes(spec)] + [(base_t, base_s)]
            mults = [flops_batch_mult(spec, (t0, s0), shape) for shape in crops]
        else:
            # Unrounded short sizes weight the epochs, exactly as the reference does (PySlowFast's
            # get_long_cycle_schedule).
            unrounded = [(base_t, size) for size in short_cycle_sizes(spec)] + [(base_t, base_s)]
            mults = [eq1_batch_mult(t0, s0, t, s) for t, s in unrounded]
        base = Shape(mults[-1], base_t, base_s)
        shapes.append(LongShape(base, cycle_for_base(spec, base, m.short_cycle), sum(mults) / len(mults)))
    return shapes


def fixed_shape(spec: RunSpec, t_factor: float, s_factor: float) -> Shape:
    """A baseline shape scaled by (t_factor, s_factor), with its Eq. (1) batch multiplier."""
    t0, s0 = spec.data.num_frames, spec.data.crop_size
    t, s = int(round(t0 * t_factor)), int(round(s0 * s_factor))
    if t < 1 or s < 1:
        raise PlanError(f"'baseline.shape_factor' {[t_factor, s_factor]} rounds to {t} frames × {s}px with "
                        f"data.num_frames={t0}, data.crop_size={s0}. Use larger factors.")
    mult = flops_batch_mult(spec, (t0, s0), (t, s)) if spec.multigrid.batch_rule == "flops" else eq1_batch_mult(
        t0, s0, t, s)
    return Shape(mult, t, s)
