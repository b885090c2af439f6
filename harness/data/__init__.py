"""The data layer: synthetic video, dataset readers, PyAV decoding, grid resampling, the short-cycle sampler.

Data flow (each arrow a plain value): annotation files ──annotations──▶ VideoRecords; Plan ──sampler──▶ lists of
ClipRequests (one planned shape per batch); ClipRequest + VideoRecord ──decode + transforms──▶ a uint8 clip
C×T×s×s; ``collate_clips`` stacks a batch. See ``docs`` in each module.
"""

from harness.data.annotation_records import VideoRecord
from harness.data.annotations import DATASETS, Annotations, load_annotations
from harness.data.clip_dataset import BadVideoLog, VideoClipDataset, collate_clips, collate_eval
from harness.data.decode import VideoReader
from harness.data.errors import AnnotationError, AnnotationProblem, VideoError
from harness.data.sampler import ClipRequest, ShortCycleBatchSampler, check_train_videos, first_iteration_of_epoch
from harness.data.scan import scan_video
from harness.data.video_info import VideoInfo

__all__ = [
    "DATASETS", "AnnotationError", "AnnotationProblem", "Annotations", "BadVideoLog", "ClipRequest",
    "ShortCycleBatchSampler", "VideoClipDataset", "VideoError", "VideoInfo", "VideoReader", "VideoRecord",
    "check_train_videos", "collate_clips", "collate_eval", "first_iteration_of_epoch", "load_annotations",
    "scan_video",
]
