"""An independent re-statement of the reference implementation's schedule arithmetic.

Written from the spec (section 2.3) in numpy, in the reference's order of operations
(it stores the per-shape epochs in a float64 array and rounds numpy float64 running sums),
so the harness's pure-Python planner can be checked against it on any recipe.
It returns what the reference prints: LR boundaries, relative LRs, max epoch, base shapes.
"""

from __future__ import annotations

import numpy as np


def reference_schedule(steps, max_epoch, t0, s0, long_factors, short_factors, epoch_factor, gamma=0.1,
                       short_cycle=True):
    default = float(t0 * s0**2)
    shapes_per_long, avg = [], []
    for tf, sf in long_factors:
        bt, bs = int(round(t0 * tf)), int(round(s0 * sf))
        ts = [(bt, s0 * short_factors[0]), (bt, s0 * short_factors[1]), (bt, bs)] if short_cycle else [(bt, bs)]
        bts = [(int(round(default / (t * s * s))), t, s) for t, s in ts]
        shapes_per_long.append(bts)
        avg.append(np.mean([b for b, _, _ in bts]))
    entries, iters = [], 0.0
    for k in range(len(steps) - 1):
        for li, bts in enumerate(shapes_per_long):
            e = (steps[k + 1] - steps[k]) * avg[li] / sum(avg)
            iters += e / avg[li]
            entries.append((k, bts[-1], e))
    saving = steps[-1] / iters
    entries.append((len(steps) - 1, shapes_per_long[-1][-1], (max_epoch - steps[-1]) / saving * avg[-1]))
    x = max_epoch * epoch_factor / sum(e for _, _, e in entries)
    total, ends = 0.0, []
    for _, _, e in entries:
        total += e * x
        ends.append(int(round(total)))
    bounds = [0, *ends]
    bounds[-1] = (bounds[-2] + bounds[-1]) // 2
    lrs = [gamma**k * shape[0] for k, shape, _ in entries]
    lrs = [*lrs[:-1], lrs[-2], lrs[-1]]
    base_shapes = [tuple(shape) for _, shape, _ in entries]
    return {"lr_steps": bounds, "lr_multipliers": lrs, "max_epoch": ends[-1], "phase_ends": ends,
            "base_shapes": base_shapes}
