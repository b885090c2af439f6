"""Iterations inside an epoch when consecutive batches cycle through different sizes.

The short-cycle batch sampler restarts its cycle at every epoch and drops the last
incomplete batch, so an epoch of `n` clips per rank with per-GPU batch sizes
`b_0, b_1, ..., b_{k-1}` (repeating) has a fixed number of iterations, computed here
exactly (the reference's `__len__` only approximates it).
"""

from __future__ import annotations


def cycle_counts(samples: int, batches: tuple[int, ...] | list[int]) -> list[int]:
    """How many iterations of an epoch use each cycle entry (drop-last, cycle restarts each epoch)."""
    per_cycle = sum(batches)
    full, left = divmod(samples, per_cycle)
    counts = [full] * len(batches)
    for j, b in enumerate(batches):
        if left < b:
            break
        counts[j] += 1
        left -= b
    return counts


def iterations_per_epoch(samples: int, batches: tuple[int, ...] | list[int]) -> int:
    """Iterations in one epoch of `samples` clips per rank with cycling per-GPU batch sizes."""
    return sum(cycle_counts(samples, batches))
