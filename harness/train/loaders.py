"""A training run's data: its two splits (the validation one checked readable before training) and DataLoaders that
leave the run's random streams alone and keep the memory their workers free."""

from __future__ import annotations

from typing import Any

import torch
from torch.utils.data import DataLoader

from harness.data.clip_dataset import VideoClipDataset, collate_clips
from harness.data.errors import DataError
from harness.data.sampler import ShortCycleBatchSampler, check_num_classes
from harness.data.transforms import normalize
from harness.data.worker_memory import loader_worker_init
from harness.schedule import Plan, iteration
from harness.spec import RunSpec
from harness.train.distributed import DistInfo


def eval_options(spec: RunSpec) -> dict[str, int]:
    """The evaluation views (clips, crops) `spec` sets; the dataset's defaults for those it leaves unset."""
    t = spec.train
    return {k: v for k, v in (("eval_clips", t.eval_clips), ("eval_crops", t.eval_crops)) if v is not None}


def datasets(spec: RunSpec, min_frames: int) -> tuple[VideoClipDataset, VideoClipDataset]:
    """The training split and the validation split (with the evaluation views) of `spec`."""
    # Videos shorter than `min_frames` are unusable in both splits, as `harness data check` says of them: training
    # replaces them, evaluation leaves them unscored (videos_scored), both count them in the record's bad_videos.
    train_set = VideoClipDataset.from_spec(spec, "train", min_frames=min_frames)
    val_set = VideoClipDataset.from_spec(spec, "val", min_frames=min_frames, **eval_options(spec))
    check_num_classes(spec, train_set.num_classes, spec.data.root)
    return train_set, val_set


def require_a_readable_video(val_set: VideoClipDataset) -> None:
    """DataError before training where not one validation video can be read: the run would train to the end and
    then fail at its evaluation. Reads the first view of videos in turn until one is read (one, normally)."""
    views, failures = val_set.sampling.eval_clips, []
    for video in range(len(val_set.records)):
        item = val_set[video * views]
        if item["valid"]:
            return
        failures += item["failures"]
    if failures:
        path, reason = failures[0]
        raise DataError(f"None of the {len(val_set.records)} validation videos could be read (e.g. {path}: "
                        f"{reason}), so the run could not be scored. Run 'harness data check' on the dataset.")


def _private_generator() -> torch.Generator:
    """For DataLoaders: each new loader iterator draws a seed from its generator, and from the global RNG
    without one, which would shift dropout's random stream whenever a run resumes mid-epoch. Our clips take
    their randomness from the sampler's keys, so this seed changes nothing else."""
    return torch.Generator().manual_seed(0)


def run_loader(dataset: Any, workers: int, **options: Any) -> DataLoader:
    """A DataLoader of this run with `workers` processes: its own generator (_private_generator), and workers
    that keep the memory they free (harness.data.worker_memory)."""
    return DataLoader(dataset, num_workers=workers, generator=_private_generator(), worker_init_fn=loader_worker_init,
                      **options)


def train_loader(spec: RunSpec, plan: Plan, train_set: VideoClipDataset, info: DistInfo, start: int) -> DataLoader:
    """The batches of this rank from global iteration `start` to the end of the run, in one pass: the workers
    prefetch across epochs."""
    first = iteration(plan, min(start, plan.iterations - 1))
    sampler = ShortCycleBatchSampler(plan, len(train_set), rank=info.rank, world_size=info.world_size,
                                     epoch=first.epoch, start_iteration=start, to_end=True)
    workers = spec.train.num_workers
    return run_loader(train_set, workers, batch_sampler=sampler, collate_fn=collate_clips,
                      pin_memory=info.device.type == "cuda", persistent_workers=workers > 0)


def device_clips(clips: torch.Tensor, device: torch.device, memory_format: torch.memory_format) -> torch.Tensor:
    """The loader's uint8 clips on `device`, normalised, in the run's memory format."""
    return normalize(clips.to(device, non_blocking=True)).contiguous(memory_format=memory_format)
