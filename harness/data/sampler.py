"""The short-cycle batch sampler: batches whose size and clip shape follow the Plan iteration by iteration.

Within epoch `e`, every rank draws the same permutation of the dataset (seeded by `(seed, e)`), pads it to a
multiple of the world size (as torch's DistributedSampler does: repeating the first indices), takes its
strided share, and cuts it, in order, into the planned per-GPU batch sizes of the phase's short cycle, which
restarts every epoch; an incomplete last batch is dropped. So an epoch has exactly the Plan's
`iterations_per_epoch` batches, and every rank gets the same shape at the same global iteration without
talking to the others. The reference's sampler (PySlowFast slowfast/datasets/multigrid_helper.py) crashes with
one process and, since 2022, in its datasets.

Each batch is a list of :class:`ClipRequest` (the index plus that iteration's shape); the dataset applies it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from harness.schedule import Phase, Plan, iteration
from harness.spec import RunSpec, SpecError


class ClipRequest(NamedTuple):
    """One clip to load: dataset `index` at `t` frames × `s`×`s` pixels, with the iteration's sampling ranges.

    `key` = (seed, epoch, iteration, rank, position) seeds the clip's random stride, window, scale, crop and
    flip, so a clip is the same whichever worker process loads it.
    """

    index: int
    t: int
    s: int
    stride_range: tuple[int, int]
    jitter_range: tuple[int, int]
    key: tuple[int, ...]


def check_train_videos(spec: RunSpec, dataset_size: int, root: str | None = None) -> None:
    """Raise SpecError unless the Plan was built for this many training videos (`data.train_videos`)."""
    if spec.data.train_videos != dataset_size:
        where = f" at {root}" if root else ""
        raise SpecError(f"The plan assumes data.train_videos={spec.data.train_videos} training clips, but the "
                        f"dataset{where} has {dataset_size}. Set data.train_videos={dataset_size} so the schedule's "
                        f"iterations per epoch match the data.")


def check_num_classes(spec: RunSpec, num_classes: int, root: str | None = None) -> None:
    """Raise SpecError unless `data.num_classes` matches the annotations' number of classes."""
    if spec.data.num_classes != num_classes:
        where = f" at {root}" if root else ""
        raise SpecError(f"data.num_classes={spec.data.num_classes}, but the annotations{where} define {num_classes} "
                        f"classes. Set data.num_classes={num_classes}.")


def epoch_phase(plan: Plan, epoch: int) -> Phase:
    """The (non-empty) phase that trains epoch `epoch`."""
    for p in plan.phases:
        if p.start_epoch <= epoch < p.end_epoch:
            return p
    raise ValueError(f"epoch {epoch} is outside the plan's epochs [0, {plan.max_epoch})")


def first_iteration_of_epoch(plan: Plan, epoch: int) -> int:
    """The global iteration counter at the start of `epoch`."""
    p = epoch_phase(plan, epoch)
    return plan.iteration_starts[p.index] + (epoch - p.start_epoch) * p.iterations_per_epoch


def epoch_permutation(dataset_size: int, seed: int, epoch: int) -> np.ndarray:
    """The permutation every rank draws in `epoch` (a function of (seed, epoch) only)."""
    return np.random.default_rng([seed, epoch]).permutation(dataset_size)


def rank_indices(dataset_size: int, seed: int, epoch: int, rank: int, world_size: int) -> np.ndarray:
    """Rank `rank`'s share of the padded permutation (DistributedSampler's padding and striding)."""
    perm = epoch_permutation(dataset_size, seed, epoch)
    total = -(-dataset_size // world_size) * world_size
    padded = np.resize(perm, total)  # repeats the permutation's first indices, as DistributedSampler pads
    return padded[rank::world_size]


class ShortCycleBatchSampler:
    """Batches of ClipRequests for one epoch of a Plan (pass as `batch_sampler=` to a DataLoader).

    `world_size` must be the plan's `num_gpus` (the per-GPU batches assume it). `start_iteration` (a global
    iteration counter inside `epoch`) resumes mid-epoch; :meth:`set_epoch` moves to another epoch. With
    `to_end=True` one pass runs on through every later epoch to the end of the plan, so a DataLoader's workers
    keep prefetching across epoch boundaries instead of refilling at each (multigrid's coarse phases have
    epochs of a few dozen iterations). The batches are the same either way.
    """

    def __init__(self, plan: Plan, dataset_size: int, *, rank: int = 0, world_size: int = 1, seed: int | None = None,
                 epoch: int = 0, start_iteration: int | None = None, to_end: bool = False):
        check_train_videos(plan.spec, dataset_size)
        if world_size != plan.spec.num_gpus:
            raise SpecError(f"The plan splits each batch over num_gpus={plan.spec.num_gpus} processes but the sampler "
                            f"runs in a world of {world_size}. Set num_gpus={world_size}.")
        if not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} is outside [0, {world_size})")
        self.plan, self.dataset_size, self.rank, self.world_size = plan, dataset_size, rank, world_size
        self.seed = plan.spec.seed if seed is None else seed
        self.to_end = to_end
        self.set_epoch(epoch, start_iteration)

    def set_epoch(self, epoch: int, start_iteration: int | None = None) -> None:
        """Serve `epoch` from global iteration `start_iteration` (default: the epoch's first)."""
        self.phase = epoch_phase(self.plan, epoch)
        self.epoch = epoch
        self.first = first_iteration_of_epoch(self.plan, epoch)
        self.end = self.first + self.phase.iterations_per_epoch
        start = self.first if start_iteration is None else start_iteration
        if not self.first <= start <= self.end:
            raise ValueError(f"start_iteration {start} is outside epoch {epoch}'s iterations "
                             f"[{self.first}, {self.end}]")
        self.start = start

    def __len__(self) -> int:
        return (self.plan.iterations if self.to_end else self.end) - self.start

    @staticmethod
    def _offset(phase: Phase, step: int) -> int:
        """Position in the rank's share where batch `step` of the epoch starts (the cycle restarts each epoch)."""
        sizes = phase.per_gpu_batches
        full, part = divmod(step, len(sizes))
        return full * sum(sizes) + sum(sizes[:part])

    def __iter__(self) -> Iterator[list[ClipRequest]]:
        epoch, start = self.epoch, self.start
        while True:
            yield from self._epoch(epoch, start)
            epoch += 1
            if not self.to_end or epoch >= self.plan.max_epoch:
                return
            start = first_iteration_of_epoch(self.plan, epoch)

    def _epoch(self, epoch: int, start: int) -> Iterator[list[ClipRequest]]:
        phase, first = epoch_phase(self.plan, epoch), first_iteration_of_epoch(self.plan, epoch)
        share = rank_indices(self.dataset_size, self.seed, epoch, self.rank, self.world_size)
        pos = self._offset(phase, start - first)
        for i in range(start, first + phase.iterations_per_epoch):
            it = iteration(self.plan, i)
            batch = share[pos:pos + it.per_gpu_batch]
            assert len(batch) == it.per_gpu_batch, "the Plan's iterations_per_epoch disagrees with the sampler"
            yield [ClipRequest(int(idx), it.t, it.s, it.stride_range, it.jitter_range,
                               (self.seed, epoch, i, self.rank, j)) for j, idx in enumerate(batch)]
            pos += it.per_gpu_batch
