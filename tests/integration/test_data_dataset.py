"""The dataset + sampler + DataLoader: planned shapes, determinism across workers, bad videos replaced."""

from __future__ import annotations

import logging

import pytest
import torch

from harness.data import BadVideoLog, ShortCycleBatchSampler, VideoClipDataset, collate_clips, load_annotations
from harness.data.clip_dataset import Sampling, collate_eval
from harness.data.decode import VideoReader
from harness.data.errors import DataError
from harness.data.sampler import ClipRequest, first_iteration_of_epoch
from harness.data.transforms import resize_crop
from harness.schedule import iteration
from tests.integration.video_files import small_plan, truncate, write_kinetics_list, write_video


@pytest.fixture(scope="module")
def kinetics(tmp_path_factory):
    return write_kinetics_list(tmp_path_factory.mktemp("k"), 50, classes=4, frames=24)


def _loader(ds, plan, epoch, rank=0, workers=0, start=None):
    sampler = ShortCycleBatchSampler(plan, len(ds.records), rank=rank, world_size=2, epoch=epoch,
                                     start_iteration=start)
    return torch.utils.data.DataLoader(ds, batch_sampler=sampler, num_workers=workers, collate_fn=collate_clips)


def test_every_planned_shape_comes_out_of_the_loader(kinetics):
    plan = small_plan()
    ds = VideoClipDataset(load_annotations("synthetic", kinetics, num_classes=4))
    shapes = set()
    for phase in plan.phases:
        if not phase.epochs:
            continue
        first = first_iteration_of_epoch(plan, phase.start_epoch)
        # one cycle of the phase's first epoch covers each of its shapes
        for k, batch in zip(range(len(phase.cycle)), _loader(ds, plan, phase.start_epoch)):
            it = iteration(plan, first + k)
            assert batch["clips"].shape == (it.per_gpu_batch, 3, it.t, it.s, it.s)
            assert batch["clips"].dtype == torch.uint8 and batch["labels"].shape == (it.per_gpu_batch,)
            shapes.add((it.t, it.s))
    assert shapes == {(c.t, c.s) for p in plan.phases if p.epochs for c in p.cycle}


def test_a_training_clip_is_its_plans_box_of_the_whole_frames(kinetics):
    ds = VideoClipDataset(load_annotations("synthetic", kinetics, num_classes=4))
    for k in range(6):  # the decoder stacks only the box's pixels: the same clip as cropping whole frames
        req = ClipRequest(7 * k % len(ds.records), 4, 16, (1, 3), (16, 40), (0, k))
        item, plan = ds[req], ds.plan_clip(req, 0)
        assert plan.box.size < 32  # a box inside the frame, not all of it
        with VideoReader(ds.records[item["index"]].path) as reader:
            whole = reader.frames_at(plan.times)
        assert torch.equal(item["clip"], resize_crop(whole, plan.box, plan.size, plan.flip))


def test_clips_do_not_depend_on_worker_count(kinetics):
    plan = small_plan()
    ds = VideoClipDataset(load_annotations("synthetic", kinetics, num_classes=4))
    epoch = plan.max_epoch - 1
    start = first_iteration_of_epoch(plan, epoch) + 2
    ref = [b for _, b in zip(range(3), _loader(ds, plan, epoch, start=start))]
    par = [b for _, b in zip(range(3), _loader(ds, plan, epoch, workers=2, start=start))]
    for a, b in zip(ref, par):
        assert torch.equal(a["clips"], b["clips"]) and torch.equal(a["index"], b["index"])
        # the resize's channels-innermost layout, kept: the GPU step's channels-last batch with no transpose
        assert a["clips"].is_contiguous(memory_format=torch.channels_last_3d)
    other_rank = next(iter(_loader(ds, plan, epoch, rank=1, start=start)))
    assert other_rank["clips"].shape == ref[0]["clips"].shape and not torch.equal(other_rank["index"], ref[0]["index"])


def test_bad_videos_are_replaced_counted_and_logged_once(tmp_path, caplog):
    write_kinetics_list(tmp_path, 8, classes=2, frames=12)
    good = tmp_path / "train/c0/v000.mp4"
    (tmp_path / "train/c1/v001.mp4").write_bytes(b"")
    truncate(good, tmp_path / "train/c0/v002.mp4")
    (tmp_path / "train/c1/v003.mp4").write_text("not a video")
    write_video(tmp_path / "train/c0/v004.mp4", n=2)
    (tmp_path / "train/c1/v005.mp4").unlink()
    ds = VideoClipDataset(load_annotations("synthetic", tmp_path, num_classes=2), min_frames=4)
    reqs = [ClipRequest(i, 4, 16, (1, 2), (18, 24), (0, 0, 0, 0, i)) for i in range(8)] * 2
    samples = [ds[r] for r in reqs]
    assert all(s["clip"].shape == (3, 4, 16, 16) for s in samples)
    assert all(s["index"] in (0, 6, 7) for s in samples)  # every bad one replaced by a good one
    assert [s["index"] for s in samples] == [ds[r]["index"] for r in reqs]  # deterministic replacements
    log = BadVideoLog()
    with caplog.at_level(logging.WARNING, logger="harness.data"):
        for k in range(0, len(samples), 4):
            log.update(collate_clips(samples[k:k + 4])["failures"])
    counts = log.as_dict()
    assert counts["bad_videos"] == 5 and counts["failed_reads"] >= 10
    assert counts["by_reason"] == {"empty": 1, "missing": 1, "not_a_video": 1, "too_short": 1, "undecodable": 1}
    assert len(caplog.records) == 5  # once per file
    assert any("v005.mp4" in r.getMessage() and "missing" in r.getMessage() for r in caplog.records)


def test_all_bad_raises_after_bounded_retries(tmp_path):
    (tmp_path / "train.csv").write_text("a.mp4 0\nb.mp4 0\n")
    ds = VideoClipDataset(load_annotations("synthetic", tmp_path, num_classes=1), max_retries=3)
    with pytest.raises(DataError, match="4 videos in a row"):
        ds[ClipRequest(0, 2, 8, (1, 1), (8, 10), (0,))]


def test_eval_views_and_broken_eval_video(kinetics, tmp_path):
    ann = load_annotations("synthetic", kinetics, num_classes=4)
    ds = VideoClipDataset(ann, Sampling(num_frames=4, sampling_rate=2, crop_size=24, eval_clips=3, eval_crops=3),
                          train=False)
    assert len(ds) == 150
    batch = collate_eval([ds[0], ds[1], ds[2]])
    assert batch["clips"].shape == (9, 3, 4, 24, 24) and batch["video"].tolist() == [0] * 9
    assert batch["valid"].all() and not torch.equal(batch["clips"][0], batch["clips"][3])
    write_kinetics_list(tmp_path, 2, classes=2, frames=12)
    (tmp_path / "train/c1/v001.mp4").write_bytes(b"")
    one_view = Sampling(num_frames=4, sampling_rate=2, crop_size=24, eval_clips=1, eval_crops=1)
    bad = VideoClipDataset(load_annotations("synthetic", tmp_path, num_classes=2), one_view, train=False)
    item = bad[1]
    assert not item["valid"] and item["clips"].shape == (1, 3, 4, 24, 24) and "empty" in item["failures"][0][1]


def _stacked_in_a_worker(samples):
    from harness.data.clip_dataset import stack_for_the_main_process

    out = stack_for_the_main_process(samples)
    return out, out.is_shared()  # checked before the DataLoader hands it over


def test_a_worker_stacks_its_batch_straight_into_shared_memory():
    clips = [torch.arange(24, dtype=torch.uint8).view(2, 3, 4).permute(2, 0, 1) + i for i in range(3)]
    loader = torch.utils.data.DataLoader(clips, batch_size=3, num_workers=1, collate_fn=_stacked_in_a_worker)
    batch, shared_in_worker = next(iter(loader))
    assert shared_in_worker and torch.equal(batch, torch.stack(clips))
    assert batch.stride() == (24, *clips[0].stride())  # each clip's own layout
