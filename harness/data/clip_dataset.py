"""The torch dataset of video clips: a ClipRequest (index + planned shape) in, a uint8 clip of that shape out.

Training items are :class:`~harness.data.sampler.ClipRequest` s from the short-cycle batch sampler; all
randomness of a clip (stride, window, scale, crop, flip) comes from the request's key, so results do not depend
on which worker loads it: the request and the video's header give a :class:`~harness.data.clip_plan.ClipPlan`, which
decoding and resampling execute. An unusable video (missing, empty, not a video, truncated, undecodable, too short) is
replaced by another one drawn from the same key (bounded retries); the failures travel with the sample, and
:class:`BadVideoLog` in the main process counts them and logs each file once (worker processes cannot share a
counter). Evaluation items are (video, temporal clip) pairs with all spatial crops of that clip, decoded once.
With ``data.cache`` set, frames come from a decoded-frame cache (:mod:`harness.data.cache_read`) instead of PyAV;
the clips are the same. Datasets stored as extracted frames (frame lists, :mod:`harness.data.frames`) read the
JPEG frames a clip needs.
"""

from __future__ import annotations

import contextlib
import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from harness.data.annotation_records import VideoRecord, path_under
from harness.data.annotations import Annotations, load_annotations
from harness.data.cache_read import CachedVideoReader, FrameCache, open_frame_cache
from harness.data.clip_plan import ClipPlan, ClipSampling, VideoGeometry, attempt_index, geometry, train_clip_plan
from harness.data.decode import VideoReader, open_video
from harness.data.errors import DataError, VideoError
from harness.data.frames import FrameListReader, FrameListRecord
from harness.data.headers import KnownHeaders, load_headers
from harness.data.low_res import LowResCopy, open_low_res_copies, pick_copy, scale_box
from harness.data.sampler import ClipRequest
from harness.data.transforms import CropBox, eval_clip_times, eval_crop_boxes, resize_crop, segment_indices
from harness.spec import RunSpec

log = logging.getLogger("harness.data")


@dataclass(frozen=True)
class Sampling:
    """How clips are cut from videos (the dataset-specific part of the recipe)."""

    num_frames: int = 32  # T0: frames of an evaluation clip (training takes t from each ClipRequest)
    sampling_rate: int = 2  # r: evaluation stride, in frames at `fps`
    crop_size: int = 224  # S0: evaluation crop
    jitter: tuple[int, int] = (256, 340)  # training short-side range at S0 (for bare integer indices)
    fps: float | None = 30.0  # strides count frames at this rate (reference: 30); None = each video's own rate
    segment: bool = False  # SSv2: one frame per uniform segment instead of a strided window
    flip: bool = True  # random horizontal flip in training (off for SSv2: left/right matter there)
    eval_clips: int = 10
    eval_crops: int = 3
    eval_short_side: int | None = None  # short side before the eval crops; None = crop_size
    antialias: bool = False


DATASET_SAMPLING = {  # reference test settings per dataset (PySlowFast slowfast/datasets/{kinetics,ssv2,charades}.py)
    "ssv2": {"segment": True, "flip": False, "eval_clips": 1, "eval_crops": 1},
    "charades": {"eval_clips": 10, "eval_crops": 3},
}


def _read_box(reader: Any, times: Sequence[float], box: CropBox, size: tuple[int, int]) -> torch.Tensor | None:
    """The frames nearest `times` cut to `box`, which was drawn on frames of `size` (height, width), where `reader`
    is PyAV's and its frames are that size: it stacks only the box's pixels. None for other readers and frames of
    another size (a rotation the header did not say), which the caller reads whole."""
    if not isinstance(reader, VideoReader):
        return None
    frames = reader.frames_at(times, crop=box)
    return frames if reader.shown_size == size else None


class VideoClipDataset(torch.utils.data.Dataset):
    """Clips of annotated videos, in the shape each ClipRequest asks for (training) or as eval views."""

    def __init__(self, annotations: Annotations, sampling: Sampling = Sampling(), *, train: bool = True,
                 min_frames: int = 1, max_retries: int = 10, decode_threads: int = 1, seed: int = 0,
                 cache: FrameCache | None = None, root: str | Path | None = None,
                 low_res: tuple[LowResCopy, ...] = (), headers: KnownHeaders | None = None):
        if not len(annotations):
            raise ValueError("the annotations list no videos")
        if low_res and root is None:
            raise ValueError("low-res copies mirror data.root: pass root with them")
        self.annotations, self.records = annotations, annotations.records
        self.sampling, self.train = sampling, train
        self.min_frames, self.max_retries = min_frames, max_retries
        self.decode_threads, self.seed = decode_threads, seed
        self.cache = cache  # a checked FrameCache (open_frame_cache): frames come from it instead of decoding
        # Copies at smaller short sides that training clips of a small scale-jitter draw decode instead (the
        # videos' relative paths under `root`, data.root, are theirs in each copy).
        self.root = Path(root).expanduser() if root is not None else None
        self.low_res = low_res
        self.headers = headers  # the full copy's headers where it lists them: a low-res clip need not open it
        self._bad: dict[int, VideoError] = {}  # per process: known-bad files fail again without I/O

    @classmethod
    def from_spec(cls, spec: RunSpec, split: str = "train", *, root: str | Path | None = None,
                  **options: Any) -> VideoClipDataset:
        """The dataset `spec.data` names, with its recipe's sampling; `options` override Sampling fields or
        the constructor's keywords (train, min_frames, max_retries, decode_threads). With `data.cache` set, clips are
        read from that frame cache, which must hold every video of the split (SpecError otherwise)."""
        d = spec.data
        root = root if root is not None else d.root
        ann = load_annotations(d.name, root, split, d.num_classes)
        cache = open_frame_cache(d.cache, ann, d.name, root, max(d.jitter)) if d.cache else None
        fields = {"num_frames": d.num_frames, "sampling_rate": d.sampling_rate, "crop_size": d.crop_size,
                  "jitter": d.jitter, **DATASET_SAMPLING.get(d.name, {})}
        keywords = {k: options.pop(k) for k in ("min_frames", "max_retries", "decode_threads") if k in options}
        train = options.pop("train", split == "train")  # train=False: the split's videos as evaluation views
        fields.update(options)
        low_res = open_low_res_copies(d.low_res_copies, root) if d.low_res_copies and train else ()
        headers = load_headers(root, [r.path for r in ann.records]) if low_res else None
        return cls(ann, Sampling(**fields), train=train, seed=spec.seed, cache=cache, root=root,
                   low_res=low_res, headers=headers, **keywords)

    @property
    def num_classes(self) -> int:
        return self.annotations.num_classes

    def __len__(self) -> int:
        return len(self.records) if self.train else len(self.records) * self.sampling.eval_clips

    # ------------------------------------------------------------ training
    def __getitem__(self, item: ClipRequest | int) -> dict[str, Any]:
        if not self.train:
            return self._eval_item(int(item))
        if not isinstance(item, ClipRequest):  # a plain DataLoader: the baseline shape
            sp = self.sampling
            item = ClipRequest(int(item), sp.num_frames, sp.crop_size, (sp.sampling_rate, sp.sampling_rate),
                               sp.jitter, (self.seed, int(item)))
        return self._train_item(item)

    def _open(self, index: int) -> VideoReader | CachedVideoReader | FrameListReader:
        """The reader of video `index`: extracted frames for a frame-list record, else the frame cache when
        there is one, else PyAV's."""
        if index in self._bad:
            raise self._bad[index]
        record = self.records[index]
        if isinstance(record, FrameListRecord):
            reader = FrameListReader(record.files, record.fps, record.path)
        elif self.cache is not None:
            reader = self.cache.reader(record.path)
        else:
            reader = open_video(record.path, self.decode_threads)
        if reader.info.frames < self.min_frames:
            reader.close()
            raise VideoError("too_short", f"{reader.path}: {reader.info.frames} frame(s), fewer than the "
                                          f"{self.min_frames} a clip needs")
        return reader

    def _train_item(self, req: ClipRequest) -> dict[str, Any]:
        failures: list[tuple[str, str]] = []
        for attempt in range(self.max_retries + 1):
            # Attempts after the first read a replacement drawn from the request's key, not from process state.
            index = attempt_index(req, attempt, len(self.records))
            try:
                clip, plan = self._train_clip(req, attempt)
            except VideoError as err:
                self.note_failure(index, err, failures)
                continue
            return {"clip": clip, "label": self._target(self.records[index], plan.times), "index": index,
                    "failures": failures}
        raise self.too_many_failures(failures)

    def note_failure(self, index: int, err: VideoError, failures: list[tuple[str, str]]) -> None:
        """Remember that video `index` cannot be used and add it to a sample's `failures` (path, reason)."""
        self._bad[index] = err
        failures.append((str(self.records[index].path), str(err)))

    def too_many_failures(self, failures: list[tuple[str, str]]) -> DataError:
        return DataError(f"{self.max_retries + 1} videos in a row could not be read (last: {failures[-1][1]}). "
                         f"Run 'harness data check' on the dataset.")

    def clip_sampling(self) -> ClipSampling:
        sp = self.sampling
        return ClipSampling(sp.fps, sp.segment, sp.flip)

    def plan_clip(self, req: ClipRequest, attempt: int, size: tuple[int, int] | None = None) -> ClipPlan:
        """The plan of attempt `attempt` of `req`, from its video's header (opened, not decoded: VideoError if
        the video cannot be used, with the reasons decoding would give for a missing, empty, non-video or too
        short file). `size` (height, width) replaces the header's frame size."""
        index = attempt_index(req, attempt, len(self.records))
        with self._open(index) as reader:
            video = geometry(reader.info)
        return train_clip_plan(req, attempt, len(self.records), video.with_size(*size) if size else video,
                               self.clip_sampling())

    def _train_clip(self, req: ClipRequest, attempt: int) -> tuple[torch.Tensor, ClipPlan]:
        sp, n = self.sampling, len(self.records)
        index = attempt_index(req, attempt, n)
        # The full copy's header as prepare kept it: the plan without opening the video, which a smaller copy
        # may then decode; the same plan the opened header gives. The full copy is opened only where needed.
        video = self.headers.geometry(index) if self.headers is not None and index not in self._bad else None
        with contextlib.ExitStack() as opened:
            reader = None
            if video is None:
                reader = opened.enter_context(self._open(index))
                video = geometry(reader.info)
            plan = train_clip_plan(req, attempt, n, video, self.clip_sampling())
            if (smaller := self._low_res_clip(index, plan, video)) is not None:
                return smaller, plan
            if reader is None:
                reader = opened.enter_context(self._open(index))
            frames = _read_box(reader, plan.times, plan.box, (plan.height, plan.width))
            if frames is not None:
                return resize_crop(frames, CropBox(0, 0, plan.box.size), plan.size, plan.flip, sp.antialias), plan
            frames = reader.frames_at(plan.times)  # whole frames, planned again on their size below if it differs
        if tuple(frames.shape[1:3]) != (plan.height, plan.width):  # a display rotation, known once decoded
            plan = train_clip_plan(req, attempt, n, video.with_size(*frames.shape[1:3]), self.clip_sampling())
        return resize_crop(frames, plan.box, plan.size, plan.flip, sp.antialias), plan

    def _low_res_clip(self, index: int, plan: ClipPlan, video: VideoGeometry) -> torch.Tensor | None:
        """The clip of `plan` (on the full copy's `video`) decoded from the smallest of data.low_res_copies that
        has its drawn short side and serves its frames (harness.data.low_res); None where no copy is small enough
        to help, the copy lacks the video or cannot read it, or holds it at another aspect ratio: the full copy
        decodes it then."""
        level = pick_copy(self.low_res, plan.short_side, plan.times, video.fps, video.frame_step) \
            if self.low_res else None
        if level is None:
            return None
        try:
            # placed as harness data prepare mirrors them: a list may name videos by absolute or linked paths
            relative = path_under(self.records[index].path, self.root)
            if relative is None:
                return None
            path = level.root / relative
            with open_video(path, self.decode_threads) as reader:
                size = (reader.info.height, reader.info.width)
                box = scale_box(plan.box, (plan.height, plan.width), size)
                frames = _read_box(reader, plan.times, box, size) if box is not None else None
                if frames is not None:
                    box = CropBox(0, 0, box.size)
                else:  # whole frames: the box scaled to their size
                    frames = reader.frames_at(plan.times)
                    box = scale_box(plan.box, (plan.height, plan.width), tuple(frames.shape[1:3]))
        except (VideoError, ValueError):
            return None
        if box is None:
            return None
        return resize_crop(frames, box, plan.size, plan.flip, self.sampling.antialias)

    def _target(self, record: VideoRecord, times: Sequence[float] | None) -> int | torch.Tensor:
        """Class index, or (multi-label) a 0/1 vector: in training the actions overlapping the clip's window."""
        if not record.multilabel:
            return int(record.label)
        target = torch.zeros(self.num_classes)
        if times is not None and record.actions:
            labels = [a.label for a in record.actions if a.start <= times[-1] and a.end >= times[0]]
        else:
            labels = list(record.label)
        target[labels] = 1.0
        return target

    # ------------------------------------------------------------ evaluation
    def _eval_item(self, item: int) -> dict[str, Any]:
        """Temporal clip `item % eval_clips` of video `item // eval_clips`, all its spatial crops.

        A broken video is not replaced (that would score another video under its label): its views are
        zeros with `valid` False, and the failure is reported.
        """
        sp = self.sampling
        video, k = divmod(item, sp.eval_clips)
        record = self.records[video]
        s, crops = sp.crop_size, sp.eval_crops
        try:
            with self._open(video) as reader:
                info = reader.info
                if sp.segment:
                    times = reader.frame_times(segment_indices(info.frames, sp.num_frames, None))
                else:
                    times = eval_clip_times(info.duration, sp.num_frames, sp.sampling_rate, sp.fps or info.fps,
                                            sp.eval_clips)[k]
                frames = reader.frames_at(times)
            boxes = eval_crop_boxes(frames.shape[1], frames.shape[2], s, sp.eval_short_side or s, crops)
            clips = torch.stack([resize_crop(frames, b, s, False, sp.antialias) for b in boxes])
            failures, valid = [], True
        except VideoError as err:
            self._bad[video] = err
            clips = torch.zeros(crops, 3, sp.num_frames, s, s, dtype=torch.uint8)
            failures, valid = [(str(record.path), str(err))], False
        return {"clips": clips, "label": self._target(record, None), "video": video, "valid": valid,
                "failures": failures}


def _labels(labels: list[int | torch.Tensor]) -> torch.Tensor:
    return torch.stack(labels) if isinstance(labels[0], torch.Tensor) else torch.tensor(labels, dtype=torch.long)


def stack_for_the_main_process(tensors: Sequence[torch.Tensor]) -> torch.Tensor:
    """torch.stack that keeps the clips' memory layout and, inside a DataLoader worker, writes into shared memory.

    A clip from :func:`~harness.data.transforms.resize_crop` is C×T×s×s with the channels innermost (the
    resize's layout): stacking it in that layout is a plain copy per clip and gives the channels-last batch the GPU
    step wants, where a contiguous N×C×T×s×s batch would transpose every clip here and back again on the GPU. In
    a worker the batch then crosses to the main process without a further copy into shared memory."""
    first = tensors[0]
    n, nbytes = len(tensors), first.numel() * first.element_size()
    same = all(t.shape == first.shape and t.stride() == first.stride() for t in tensors)
    # A layout worth keeping covers its storage exactly (no gaps, no overlap); else a contiguous batch (None).
    dense = same and first.storage_offset() == 0 and first.untyped_storage().nbytes() == nbytes
    strides = (first.numel(), *first.stride()) if dense else None
    shared = torch.utils.data.get_worker_info() is not None
    storage = torch.UntypedStorage._new_shared(n * nbytes) if shared else torch.UntypedStorage(n * nbytes)
    out = torch.empty(0, dtype=first.dtype).set_(storage, 0, (n, *first.shape), strides)
    for row, t in zip(out, tensors):
        row.copy_(t)
    return out


def collate_clips(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """A training batch: `clips` uint8 N×C×T×H×W, `labels` (N int64, or N×K float), `index` N, `failures`."""
    return {"clips": stack_for_the_main_process([x["clip"] for x in samples]),
            "labels": _labels([x["label"] for x in samples]),
            "index": torch.tensor([x["index"] for x in samples]),
            "failures": [f for x in samples for f in x["failures"]]}


def collate_eval(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """An eval batch with crops flattened: `clips` uint8 (N·crops)×C×T×H×W; `video`, `valid`, `labels` per row."""
    crops = samples[0]["clips"].shape[0]
    rep = lambda key: [x[key] for x in samples for _ in range(crops)]  # noqa: E731
    return {"clips": torch.cat([x["clips"] for x in samples]), "labels": _labels(rep("label")),
            "video": torch.tensor(rep("video")), "valid": torch.tensor(rep("valid")),
            "failures": [f for x in samples for f in x["failures"]]}


class BadVideoLog:
    """Unreadable videos the loader met (fed from batches in the main process); logs each file once."""

    def __init__(self, logger: logging.Logger = log):
        self.logger = logger
        self.files: dict[str, str] = {}
        self.failed_reads = 0

    def update(self, failures: Iterable[tuple[str, str]]) -> None:
        """Count a batch's `failures` ((path, reason) pairs); warn the first time a file fails."""
        for path, reason in failures:
            self.failed_reads += 1
            if path not in self.files:
                self.files[path] = reason
                # Training draws another video in its place; evaluation leaves it unscored.
                self.logger.warning("unreadable video skipped: %s (%s)", path, reason)

    def as_dict(self) -> dict[str, Any]:
        """Counts for the run record: failed reads, distinct bad files, files per reason, and the files."""
        kinds = Counter(reason.split(":", 1)[0] for reason in self.files.values())
        return {"failed_reads": self.failed_reads, "bad_videos": len(self.files),
                "by_reason": dict(sorted(kinds.items())),
                "files": [{"path": p, "reason": r} for p, r in sorted(self.files.items())]}
