"""NVDEC decoding of training clips on the GPU (``data.decoder=nvdec``), with PyNvVideoCodec.

The clips are the PyAV path's: the DataLoader's workers (CPU only, no CUDA in a forked process) open each
video's header with PyAV and make the clip's plan (:mod:`harness.data.clip_plan`, the same draws as the PyAV
path); the main process decodes the planned frames with NVDEC into GPU memory and crops, resizes, flips and
normalises the whole batch there (:func:`~harness.data.transforms.batch_resize_crop`), with no host round trip.
Decoders persist: one PyNvVideoCodec ``SimpleDecoder`` per decoding thread, pointed at the next video with
``reconfigure_decoder`` instead of being opened again (opening a decoder per clip costs more than decoding the
clip). A video NVDEC cannot decode
is noted as ``undecodable`` and replaced by the next attempt's video, as on the PyAV path; the reasons a header
gives (missing, empty, not a video, too short) come from the same PyAV code as there. The threads decode ahead of the
training loop (the next batches' clips while a step runs), so the record's data wait holds only the NVDEC time a
step does not hide.

Differences from the PyAV path: frames are fetched by index (the nearest frame at the average frame rate; the
same frames for constant-rate video), NVDEC's YUV→RGB conversion is not FFmpeg's (a few grey levels), the
clip is not rounded to uint8 before normalisation, and a display rotation is not applied (NVDEC returns coded
frames: a rotated video's clip is cut from unrotated frames). Evaluation views and precise BN decode with PyAV.

PyNvVideoCodec is optional (``pip install -e '.[nvdec]'``) and imported only when data.decoder=nvdec.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import torch

from harness.data.clip_plan import ClipPlan
from harness.data.decode import VideoReader
from harness.data.errors import VideoError
from harness.data.transforms import batch_resize_crop
from harness.spec import SpecError

FALLBACK = "Use data.decoder=pyav (the default) to decode on the CPU."
INSTALL = "pip install -e '.[nvdec]' (PyNvVideoCodec 2.2)"
# Decoding threads (each with its own persistent decoder) of the training loader. The decoder's work per clip, not
# the thread count, is the limit: 16 threads gain nothing over 8 (results/data_bench/kinetics_like_paths_h200.json
# against kinetics_like_paths_stream_h200.json).
DECODE_THREADS = 8
# How a clip's frames are asked of a decoder, the default first: `window` (seek_to_index to the clip's first frame,
# then get_batch_frames over its span, the clip's frames picked from it) or `indices` (one get_batch_frames_by_index
# call for the clip's distinct frames; SimpleDecoder's slicing is the same call). `window` is the faster at every
# planned shape (results/data_bench/; `harness data bench --nvdec-access` measures either).
ACCESS = ("window", "indices")


# DataLoader workers forked from a process whose NVDEC threads have decoded die (SIGSEGV, or exit at once; seen with
# PyNvVideoCodec 2.2, for the workers of every loader made after the first NVDEC batch). Loaders
# of a run that decodes with NVDEC start their workers from a fork server instead: a fresh process that never held
# CUDA or NVDEC state, started once and reused (the datasets are pickled to the workers).
NVDEC_WORKER_CONTEXT = "forkserver"


def worker_context(decoder: str, workers: int) -> str | None:
    """The DataLoader `multiprocessing_context` for a loader of `workers` processes in a run decoding with
    `decoder` (data.decoder): a fork server with NVDEC, else the platform's default (fork on Linux)."""
    return NVDEC_WORKER_CONTEXT if decoder == "nvdec" and workers > 0 else None


def _import_nvc() -> Any:
    import PyNvVideoCodec

    return PyNvVideoCodec


def nvdec_unavailable() -> str | None:
    """None if NVDEC decoding can start here, else why not (PyNvVideoCodec missing, no CUDA GPU)."""
    try:
        _import_nvc()
    except Exception as err:  # ImportError, or OSError where the CUDA/NVDEC driver libraries cannot be loaded
        first = str(err).splitlines()[0] if str(err) else ""
        return f"PyNvVideoCodec cannot be imported ({type(err).__name__}: {first}); install it with {INSTALL}"
    if not torch.cuda.is_available():
        return "no CUDA GPU is visible (NVDEC decodes on the GPU)"
    return None


def require_nvdec() -> None:
    """SpecError (exit 2) naming the fallback where data.decoder=nvdec cannot run here."""
    why = nvdec_unavailable()
    if why is not None:
        raise SpecError(f"data.decoder=nvdec, but {why}. {FALLBACK}")


class NvdecDecoder:
    """Persistent NVDEC decoders, one per thread of a pool of `threads`, reused across videos; frames stay on
    `device`. Use :meth:`batches` over a DataLoader of a dataset's :meth:`planning` items, or :meth:`clips`.
    `nvc` stands in for the PyNvVideoCodec module (tests run the executor on the CPU with a PyAV stand-in)."""

    def __init__(self, device: torch.device | str | int = "cuda", threads: int | None = DECODE_THREADS,
                 nvc: Any = None, access: str = ACCESS[0]):
        if access not in ACCESS:
            raise ValueError(f"NVDEC frame access must be one of {', '.join(ACCESS)}, got {access!r}")
        self.access = access
        self.nvc = nvc if nvc is not None else _import_nvc()
        self.device = torch.device(device) if not isinstance(device, int) else torch.device("cuda", device)
        on_gpu = self.device.type == "cuda"
        self.gpu_id = self.device.index if self.device.index is not None else (torch.cuda.current_device()
                                                                               if on_gpu else 0)
        self.threads = max(1, DECODE_THREADS if threads is None else threads)
        self._local = threading.local()
        self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="nvdec")
        self.opened = 0  # decoders created (a decoder that failed is replaced), against `reconfigured`
        self.reconfigured = 0

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def __enter__(self) -> NvdecDecoder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _decoder_for(self, path: Path, fresh: bool) -> Any:
        decoder = None if fresh else getattr(self._local, "decoder", None)
        self._local.decoder = None  # until it has served this file: a decoder that failed is not reused
        if decoder is None:
            decoder = self.nvc.SimpleDecoder(str(path), gpu_id=self.gpu_id, use_device_memory=True,
                                             output_color_type=self.nvc.OutputColorType.RGB)
            self.opened += 1
        else:
            decoder.reconfigure_decoder(str(path))
            self.reconfigured += 1
        return decoder

    def _decode(self, path: Path, indices: Sequence[int], fresh: bool) -> torch.Tensor:
        decoder = self._decoder_for(path, fresh)
        n = len(decoder)
        if n < 1:
            raise VideoError("undecodable", f"NVDEC found no frame in {path}")
        clamped = [min(max(0, i), n - 1) for i in indices]
        unique = sorted(set(clamped))
        if self.access == "window":  # one sequential run over the clip's span, then its frames
            decoder.seek_to_index(unique[0])
            span = decoder.get_batch_frames(unique[-1] - unique[0] + 1)
            decoded = [span[i - unique[0]] for i in unique] if len(span) == unique[-1] - unique[0] + 1 else span
        else:
            decoded = decoder.get_batch_frames_by_index(unique)
        if len(decoded) != len(unique):
            raise VideoError("undecodable", f"NVDEC returned {len(decoded)} of the {len(unique)} frames asked of "
                                            f"{path}")
        # torch wraps NVDEC's device arrays without a copy; stacking copies them out of the decoder's surfaces (on
        # the same stream) before the decoder moves on to the next video.
        stacked = torch.stack([torch.as_tensor(f, device=self.device) for f in decoded])
        self._local.decoder = decoder
        if clamped == unique:
            return stacked
        where = {f: k for k, f in enumerate(unique)}
        return stacked[[where[i] for i in clamped]]

    def frames(self, path: str | Path, indices: Sequence[int]) -> torch.Tensor:
        """Frames `indices` of `path` (clamped to its last frame), uint8 T×H×W×C RGB on the device (coded
        orientation). VideoError("undecodable") where NVDEC cannot decode the file: a reused decoder that fails
        is replaced by a new one first, so only a file a fresh decoder cannot read counts as bad."""
        path = Path(path)
        error = None
        for fresh in (False, True) if getattr(self._local, "decoder", None) is not None else (True,):
            try:
                return self._decode(path, indices, fresh)
            except VideoError:
                raise
            except Exception as err:  # PyNvVideoCodec raises RuntimeError/ValueError for what it cannot demux/decode
                first = str(err).splitlines()[0] if str(err) else ""
                error = VideoError("undecodable", f"NVDEC could not decode {path} ({type(err).__name__}: {first})")
        raise error

    def _clip(self, dataset: Any, item: dict[str, Any]) -> tuple[torch.Tensor, ClipPlan, list[tuple[str, str]]]:
        """Decode one planned clip; where NVDEC fails, the next attempts' videos, as the PyAV path retries."""
        req, plan, failures = item["request"], item["plan"], list(item["failures"])
        while True:
            try:
                frames = self.frames(dataset.records[plan.index].path, plan.frame_indices)
            except VideoError as err:
                dataset.note_failure(plan.index, err, failures)
                plan = dataset.first_plan(req, plan.attempt + 1, failures)  # DataError after the last attempt
                continue
            if tuple(frames.shape[1:3]) != (plan.height, plan.width):  # the header's size was not the coded one
                plan = dataset.plan_clip(req, plan.attempt, tuple(frames.shape[1:3]))
            return frames, plan, failures

    def clips(self, dataset: Any, items: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """A training batch from plan items (a `planning()` dataset's, via collate_plans): `clips` float
        N×C×T×s×s normalised on the device, `labels`, `index`, `failures` (as collate_clips, clips normalised)."""
        return self._assemble(dataset, list(self._pool.map(lambda item: self._clip(dataset, item), items)))

    def _assemble(self, dataset: Any, done: list[tuple[torch.Tensor, ClipPlan, list[tuple[str, str]]]]
                  ) -> dict[str, Any]:
        """The batch of decoded clips `done` (from :meth:`_clip`): resampled together on the device."""
        sizes = {plan.size for _, plan, _ in done}
        if len(sizes) != 1:
            raise ValueError(f"a batch's clips must share one planned size, got {sorted(sizes)}")
        clips = batch_resize_crop([f for f, _, _ in done], [p.box for _, p, _ in done], sizes.pop(),
                                  [p.flip for _, p, _ in done])
        labels = [dataset._target(dataset.records[p.index], p.times) for _, p, _ in done]
        return {"clips": clips, "normalized": True,
                "labels": torch.stack(labels) if isinstance(labels[0], torch.Tensor) else torch.tensor(labels),
                "index": torch.tensor([p.index for _, p, _ in done]),
                "failures": [f for _, _, fs in done for f in fs]}

    def batches(self, loader: Iterable[list[dict[str, Any]]], dataset: Any) -> Iterator[dict[str, Any]]:
        """The training batches of a DataLoader over `dataset.planning()` (collate_plans), decoded here.

        Decoding runs ahead of the caller: the threads decode the next batches' clips while the caller trains on
        this one, so the data wait is what decoding takes beyond a step, not all of it. At least the next batch
        and at least `threads` clips beyond the one being handed out are in flight (the decoded frames of those
        clips are what it costs in GPU memory)."""
        pending: deque[list[Future]] = deque()
        plans = iter(loader)

        def queued() -> int:
            return sum(len(batch) for batch in pending)

        def submit() -> bool:
            items = next(plans, None)
            if items is None:
                return False
            pending.append([self._pool.submit(self._clip, dataset, item) for item in items])
            return True

        while (len(pending) < 2 or queued() - len(pending[0]) < self.threads) and submit():
            pass
        try:
            while pending:
                futures = pending.popleft()
                while (len(pending) < 1 or queued() < self.threads) and submit():
                    pass
                yield self._assemble(dataset, [f.result() for f in futures])
        finally:
            for batch in pending:  # a caller that stops early: clips not yet started are not decoded
                for future in batch:
                    future.cancel()
            # and those started finish here, so the threads are idle when the caller goes on (the next loader path
            # of `harness data bench` is not timed while this one's clips still decode)
            wait([future for batch in pending for future in batch])


def check_codec(decoder: NvdecDecoder, dataset: Any) -> None:
    """SpecError naming the fallback where NVDEC cannot decode the dataset's first readable video (its codec is
    not one this GPU's NVDEC decodes), before any training work. Videos PyAV cannot open either are left to the
    loader's bad-video bookkeeping."""
    for record in dataset.records[:20]:
        try:
            with VideoReader(record.path) as reader:
                codec = reader.info.codec
        except VideoError:
            continue
        try:
            decoder.frames(record.path, [0])
        except VideoError as err:
            raise SpecError(f"data.decoder=nvdec, but NVDEC cannot decode {record.path} (codec {codec}): {err}. "
                            f"{FALLBACK}") from None
        return
