"""data.decoder=nvdec: the same clip plans as the PyAV path, the same bad-video bookkeeping, a clear error where it
cannot run; on a GPU with PyNvVideoCodec, the same clips as the PyAV path.

The CPU tests run the NVDEC path's executor (harness.data.nvdec.NvdecDecoder) with a stand-in for PyNvVideoCodec
that decodes with PyAV on the CPU; the GPU tests (marked gpu) need PyNvVideoCodec and a CUDA GPU and skip without.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import av
import numpy as np
import pytest
import torch

from harness.cli import main
from harness.data import VideoClipDataset, load_annotations
from harness.data.clip_dataset import BadVideoLog, collate_clips
from harness.data.decode import VideoReader
from harness.data.decoders import DECODER_ENV, require_decoder
from harness.data.errors import VideoError
from harness.data.nvdec import NvdecDecoder, nvdec_unavailable, worker_context
from harness.data.sampler import ClipRequest
from harness.data.transforms import KINETICS_STD, normalize
from harness.spec import SpecError
from tests.integration.test_data_support import write_kinetics_list

GREY = 1.0 / 255.0 / KINETICS_STD[0]  # one grey level, normalised
WHY_NOT = nvdec_unavailable()
needs_nvdec = pytest.mark.skipif(WHY_NOT is not None, reason=f"NVDEC cannot run here: {WHY_NOT}")


class _PyAVDecoder:
    """PyNvVideoCodec's SimpleDecoder as the NVDEC path uses it, decoding with PyAV on the CPU; files named in
    `FAILS` fail as a codec NVDEC lacks would."""

    FAILS: ClassVar[set[str]] = set()

    def __init__(self, path, gpu_id=0, use_device_memory=True, output_color_type=None):
        self.reconfigure_decoder(path)

    def reconfigure_decoder(self, path):
        if Path(path).name in self.FAILS:
            raise RuntimeError(f"codec not supported: {path}")
        with av.open(str(path)) as c:
            self.frames = [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]

    def __len__(self):
        return len(self.frames)

    def get_batch_frames_by_index(self, indices):
        return [self.frames[i] for i in indices]

    def seek_to_index(self, index):  # SimpleDecoder's sequential access: a cursor, then the next frames
        self.cursor = index

    def get_batch_frames(self, n):
        out = self.frames[self.cursor:self.cursor + n]
        self.cursor += len(out)
        return out


class _FakeNvc:
    SimpleDecoder = _PyAVDecoder

    class OutputColorType:
        RGB = "rgb"


def _dataset(root: Path, bad: bool = True) -> VideoClipDataset:
    write_kinetics_list(root, 10, classes=3, frames=24)
    if bad:  # what a header shows (empty, not a video, missing) and what only decoding shows (FAILS)
        (root / "train/c0/v000.mp4").write_bytes(b"")
        (root / "train/c1/v001.mp4").write_text("not a video\n" * 10)
        (root / "train/c2/v002.mp4").unlink()
    return VideoClipDataset(load_annotations("kinetics400", root, "train"), min_frames=4)


def _requests(n: int, size: int, t: int = 4, s: int = 16) -> list[ClipRequest]:
    return [ClipRequest(k % size, t, s, (1, 3), (s, s + 8), (0, 1, k, 0, k)) for k in range(n)]


def test_the_nvdec_paths_plans_are_the_pyav_paths(tmp_path):
    ds = _dataset(tmp_path)
    planner = ds.planning()  # what the NVDEC path's DataLoader workers serve
    for req in _requests(24, len(ds.records)):
        item, planned = ds[req], planner[req]
        assert planned["plan"].index == item["index"] and planned["failures"] == item["failures"]
        clip, plan = ds._train_clip(req, planned["plan"].attempt)
        assert planned["plan"] == plan and torch.equal(clip, item["clip"])


def test_nvdec_needs_pynvvideocodec_and_a_gpu_and_says_use_pyav(tmp_path, monkeypatch, capsys):
    import harness.data.nvdec as nvdec

    monkeypatch.delenv(DECODER_ENV, raising=False)

    def missing():
        raise ModuleNotFoundError("No module named 'PyNvVideoCodec'")

    monkeypatch.setattr(nvdec, "_import_nvc", missing)
    with pytest.raises(SpecError) as err:
        require_decoder("nvdec")
    assert str(err.value) == ("data.decoder=nvdec, but PyNvVideoCodec cannot be imported (ModuleNotFoundError: No "
                              "module named 'PyNvVideoCodec'); install it with pip install -e '.[nvdec]' "
                              "(PyNvVideoCodec 2.2). Use data.decoder=pyav (the default) to decode on the CPU.")
    monkeypatch.setattr(nvdec, "_import_nvc", lambda: _FakeNvc)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SpecError, match=r"data.decoder=nvdec, but no CUDA GPU is visible .* Use data.decoder=pyav"):
        require_decoder("nvdec")
    # From the command line: exit 2 and the message, before any work.
    monkeypatch.setattr(nvdec, "_import_nvc", missing)
    write_kinetics_list(tmp_path, 4, classes=2)
    code = main(["data", "bench", "--min-seconds", "0",
                 "data.name=kinetics400", f"data.root={tmp_path}", "data.num_classes=2",
                 "data.decoder=nvdec", "--clips", "2", "--workers", "0"])
    assert code == 2 and "Use data.decoder=pyav" in capsys.readouterr().err


def test_decoder_settings_are_checked():
    from harness.config import compose

    with pytest.raises(SpecError, match="'data.decoder' must be one of .* got 'nvdeq'. Did you mean 'nvdec'"):
        compose(["data.decoder=nvdeq"])
    with pytest.raises(SpecError, match="'data.cache' serves decoded frames"):
        compose(["data.decoder=nvdec", "data.cache=/tmp/c"])
    with pytest.raises(SpecError, match="decodes on a CUDA GPU, but train.device=cpu"):
        compose(["data.decoder=nvdec", "train.device=cpu"])


def test_the_run_id_keeps_pyav_runs_and_tells_nvdec_runs_apart():
    from harness.config import compose
    from harness.results import run_id

    base = compose([])
    assert "decoder" in base.to_dict()["data"]
    assert run_id(compose(["data.decoder=pyav"])) == run_id(base)
    assert run_id(compose(["data.decoder=nvdec"])) != run_id(base)


def _batches(ds: VideoClipDataset, decoder: NvdecDecoder, reqs: list[ClipRequest], batch: int = 4):
    planner = ds.planning()
    for i in range(0, len(reqs), batch):
        chunk = reqs[i:i + batch]
        yield decoder.clips(ds, [planner[r] for r in chunk]), collate_clips([ds[r] for r in chunk])


def test_bad_videos_are_skipped_and_counted_as_on_the_pyav_path(tmp_path, monkeypatch):
    ds = _dataset(tmp_path)
    _PyAVDecoder.FAILS = {"v004.mp4"}  # opens with PyAV (planned), fails in "NVDEC": noted as undecodable
    real = VideoReader.frames_at

    def pyav_fails_too(self, times, **kwargs):  # the same file failing on the PyAV path, for the same bookkeeping
        if self.path.name in _PyAVDecoder.FAILS:
            raise VideoError("undecodable", f"decoding {self.path} failed")
        return real(self, times, **kwargs)

    monkeypatch.setattr(VideoReader, "frames_at", pyav_fails_too)
    ours, theirs = BadVideoLog(), BadVideoLog()
    with NvdecDecoder("cpu", threads=2, nvc=_FakeNvc) as decoder:
        for nv, cpu in _batches(ds, decoder, _requests(24, len(ds.records))):
            ours.update(nv["failures"])
            theirs.update(cpu["failures"])
            assert torch.equal(nv["index"], cpu["index"]) and torch.equal(nv["labels"], cpu["labels"])
            diff = (nv["clips"] - normalize(cpu["clips"])).abs()
            assert nv["clips"].dtype == torch.float32 and diff.max() <= 1.1 * GREY
        assert decoder.opened >= 1 and decoder.reconfigured > decoder.opened  # decoders persist across videos
    a, b = ours.as_dict(), theirs.as_dict()
    assert {k: v for k, v in a.items() if k != "files"} == {k: v for k, v in b.items() if k != "files"}
    assert [f["path"] for f in a["files"]] == [f["path"] for f in b["files"]]
    assert a["by_reason"] == {"empty": 1, "missing": 1, "not_a_video": 1, "undecodable": 1}
    assert [f["reason"].split(":")[0] for f in a["files"]] == [f["reason"].split(":")[0] for f in b["files"]]
    _PyAVDecoder.FAILS = set()


# ---------------------------------------------------------------- on a GPU, with PyNvVideoCodec
def _red_index(clips: torch.Tensor) -> np.ndarray:
    """Frame indices that frames_pattern encodes in the red channel, per clip and frame (N×T), from
    normalised clips."""
    red = clips[:, 0] * KINETICS_STD[0] + 0.45  # back to [0, 1]
    return torch.round(red.mean(dim=(-1, -2)) * 255 / 16).cpu().numpy()


@pytest.mark.gpu
@needs_nvdec
@pytest.mark.parametrize("access", ["indices", "window"])
def test_nvdec_clips_are_the_pyav_paths_clips(tmp_path, access):
    write_kinetics_list(tmp_path, 6, classes=3, frames=24)
    ds = VideoClipDataset(load_annotations("kinetics400", tmp_path, "train"), min_frames=4)
    with NvdecDecoder("cuda", threads=2, access=access) as decoder:
        for nv, cpu in _batches(ds, decoder, _requests(16, len(ds.records), t=6, s=24)):
            assert nv["clips"].is_cuda and nv["clips"].shape == (4, 3, 6, 24, 24)
            assert torch.equal(nv["index"], cpu["index"])
            ref = normalize(cpu["clips"]).cuda()
            assert (_red_index(nv["clips"]) == _red_index(ref)).all()  # the same frames
            # NVDEC's YUV→RGB is not FFmpeg's: a few grey levels apart on average (as torchcodec's test allows 2)
            assert (nv["clips"] - ref).abs().mean() < 3 * GREY
        assert decoder.reconfigured > 0


@pytest.mark.gpu
@needs_nvdec
def test_nvdec_skips_and_counts_bad_videos(tmp_path):
    ds = _dataset(tmp_path)
    ours, theirs = BadVideoLog(), BadVideoLog()
    with NvdecDecoder("cuda", threads=2) as decoder:
        for nv, cpu in _batches(ds, decoder, _requests(16, len(ds.records))):
            ours.update(nv["failures"])
            theirs.update(cpu["failures"])
            assert torch.equal(nv["index"], cpu["index"])
    assert ours.as_dict() == theirs.as_dict()
    assert ours.as_dict()["by_reason"] == {"empty": 1, "missing": 1, "not_a_video": 1}


def test_dataloader_workers_plan_and_the_main_process_decodes(tmp_path):
    from harness.data.clip_dataset import collate_plans

    ds = _dataset(tmp_path, bad=False)
    reqs = _requests(8, len(ds.records))
    batches = [reqs[:4], reqs[4:]]
    loader = torch.utils.data.DataLoader(ds.planning(), batch_sampler=batches, num_workers=2,
                                         collate_fn=collate_plans,
                                         multiprocessing_context=worker_context("nvdec", 2))
    with NvdecDecoder("cpu", threads=2, nvc=_FakeNvc) as decoder:
        got = list(decoder.batches(loader, ds))
    for nv, chunk in zip(got, batches):
        cpu = collate_clips([ds[r] for r in chunk])
        assert torch.equal(nv["index"], cpu["index"])
        assert (nv["clips"] - normalize(cpu["clips"])).abs().max() <= 1.1 * GREY


def test_workers_of_an_nvdec_run_start_from_a_fork_server():
    # forked from a process whose NVDEC threads have decoded, workers crash; a fork server never held NVDEC state
    assert worker_context("nvdec", 2) == "forkserver"
    assert worker_context("nvdec", 0) is None and worker_context("pyav", 4) is None


def test_decoding_runs_ahead_of_the_batch_handed_out(tmp_path):
    ds = _dataset(tmp_path, bad=False)
    planner = ds.planning()
    reqs = _requests(12, len(ds.records))
    batches = [[planner[r] for r in reqs[i:i + 4]] for i in range(0, 12, 4)]
    with NvdecDecoder("cpu", threads=2, nvc=_FakeNvc) as decoder:
        submitted, submit = [], decoder._pool.submit
        decoder._pool.submit = lambda fn, dataset, item: submitted.append(item) or submit(fn, dataset, item)
        handed = decoder.batches(batches, ds)
        first = next(handed)
        assert first["clips"].shape[0] == 4
        assert len(submitted) == 8  # the next batch was given to the threads before the first one was handed out
        assert [b["clips"].shape[0] for b in handed] == [4, 4] and len(submitted) == 12


def test_a_caller_that_stops_early_leaves_no_clip_decoding(tmp_path):
    import time

    ds = _dataset(tmp_path, bad=False)
    planner = ds.planning()
    reqs = _requests(12, len(ds.records))
    batches = [[planner[r] for r in reqs[i:i + 4]] for i in range(0, 12, 4)]
    with NvdecDecoder("cpu", threads=2, nvc=_FakeNvc) as decoder:
        futures, submit = [], decoder._pool.submit

        def slowly(fn, dataset, item):  # each clip takes a while, so some are mid-decode when the caller stops
            futures.append(submit(lambda: time.sleep(0.2) or fn(dataset, item)))
            return futures[-1]

        decoder._pool.submit = slowly
        handed = decoder.batches(batches, ds)
        next(handed)
        handed.close()
        assert futures and all(f.done() for f in futures)
        assert sum(f.cancelled() for f in futures) >= 2  # the clips not yet started were not decoded


def _bench_on_the_cpu(monkeypatch) -> None:
    """`harness data bench data.decoder=nvdec` here: its NVDEC paths run on the CPU with the PyAV stand-in."""
    import harness.data.nvdec as nvdec

    monkeypatch.delenv(DECODER_ENV, raising=False)
    monkeypatch.setattr(nvdec, "nvdec_unavailable", lambda: None)
    real = nvdec.NvdecDecoder
    monkeypatch.setattr(nvdec, "NvdecDecoder",
                        lambda device, threads, access: real("cpu", threads=threads, nvc=_FakeNvc, access=access))


def test_data_bench_records_the_nvdec_paths(tmp_path, monkeypatch, capsys):
    import json

    _bench_on_the_cpu(monkeypatch)
    root = write_kinetics_list(tmp_path / "k", 6, classes=3, frames=16)
    data = ["data.name=kinetics", f"data.root={root}", "data.num_classes=3", "data.num_frames=8", "data.crop_size=32",
            "data.jitter=[36,48]", "data.train_videos=6"]
    prepared = tmp_path / "prepared"
    assert main(["data", "prepare", "--out", str(prepared), "--quiet", "--workers", "1", *data]) == 0
    out = tmp_path / "bench.json"
    assert main(["data", "bench", "--min-seconds", "0",
                 "--clips", "4", "--workers", "0", "--prepared", str(prepared), "--out", str(out),
                 "--nvdec-threads", "3", "--nvdec-access", "window", *data, "data.decoder=nvdec"]) == 0
    record = json.loads(out.read_text())
    assert record["nvdec_threads"] == 3 and record["nvdec_access"] == "window"
    paths = {p["name"]: p for p in record["paths"]}
    assert set(paths) == {"pyav", "pyav_prepared", "nvdec", "nvdec_prepared"}
    assert paths["nvdec"]["storage_ratio"] == 1.0
    assert paths["nvdec_prepared"]["storage_ratio"] == paths["pyav_prepared"]["storage_ratio"]
    assert all(p["clips_per_s"] > 0 for path in paths.values() for p in path["shapes"])
    assert "nvdec_prepared" in capsys.readouterr().out


def test_a_stalled_nvdec_path_keeps_every_shape_of_the_cpu_paths(tmp_path, monkeypatch):
    import json

    import harness.measure.data_bench as data_bench

    _bench_on_the_cpu(monkeypatch)
    measure, calls = data_bench._bench_nvdec, []

    def stall_at_the_second_shape(*args, **kwargs):  # the call's time limit reached while NVDEC decodes
        calls.append(args[0])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return measure(*args, **kwargs)

    monkeypatch.setattr(data_bench, "_bench_nvdec", stall_at_the_second_shape)
    root = write_kinetics_list(tmp_path / "k", 6, classes=3, frames=16)
    out = tmp_path / "bench.json"
    code = main(["data", "bench", "--min-seconds", "0",
                 "--clips", "4", "--workers", "0", "--out", str(out), "data.name=kinetics",
                 f"data.root={root}", "data.num_classes=3", "data.num_frames=8", "data.crop_size=32",
                 "data.jitter=[36,48]", "data.train_videos=6", "data.decoder=nvdec"])
    assert code == 130  # interrupted, as a shell reports SIGINT, after the record of what was measured is written
    record = json.loads(out.read_text())
    paths = {p["name"]: p for p in record["paths"]}
    assert len(record["shapes"]) == record["planned_shapes"] > 1
    assert len(paths["pyav"]["shapes"]) == record["planned_shapes"]
    baseline = max(record["shapes"], key=lambda r: r["t"] * r["s"] ** 2)
    assert [(p["t"], p["s"]) for p in paths["nvdec"]["shapes"]] == [(baseline["t"], baseline["s"])]
    assert paths["nvdec"]["shapes"][0]["clips_per_s"] > 0


def test_a_clip_is_the_same_asked_by_index_or_as_one_window(tmp_path):
    from harness.cli import build_parser
    from harness.data.nvdec import ACCESS

    ds = _dataset(tmp_path, bad=False)
    reqs = _requests(6, len(ds.records), t=4, s=16)
    items = [ds.planning()[r] for r in reqs]
    with NvdecDecoder("cpu", threads=2, nvc=_FakeNvc, access="indices") as by_index, \
            NvdecDecoder("cpu", threads=2, nvc=_FakeNvc) as by_window:
        assert torch.equal(by_index.clips(ds, items)["clips"], by_window.clips(ds, items)["clips"])
    assert by_window.access == "window"  # the trainer's
    with pytest.raises(ValueError, match="window, indices"):
        NvdecDecoder("cpu", nvc=_FakeNvc, access="seek")
    bench = build_parser()._subparsers._group_actions[0].choices["data"]._subparsers._group_actions[0]
    access = next(a for a in bench.choices["bench"]._actions if a.dest == "nvdec_access")
    assert tuple(access.choices) == ACCESS
