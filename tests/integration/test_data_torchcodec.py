"""torchcodec as the optional decoding backend: the same frames as PyAV at the same times, the same errors.

torchcodec is not a dependency (CI does not install it): the tests that decode with it skip with the reason.
"""

from __future__ import annotations

import pytest
import torch

from harness.data.decode import TorchCodecReader, VideoReader, open_video, torchcodec_available
from harness.data.decoders import DECODER_ENV, require_decoder
from harness.data.errors import VideoError
from harness.spec import SpecError
from tests.integration.test_data_support import write_kinetics_list, write_video

WHY_NOT = torchcodec_available()
needs_torchcodec = pytest.mark.skipif(WHY_NOT is not None, reason=f"torchcodec cannot be used here: {WHY_NOT} "
                                                                  f"(optional: pip install torchcodec, apt-get "
                                                                  f"install ffmpeg)")


def _index(frames: torch.Tensor) -> list[int]:
    """Frame indices encoded in the red channel by frames_pattern."""
    return [round(float(f[8:, 8:, 0].float().mean()) / 16) for f in frames]


@needs_torchcodec
@pytest.mark.parametrize("fps", [15, 24])
def test_torchcodec_frames_equal_pyav_frames_on_h264(tmp_path, fps):
    path = write_video(tmp_path / "v.mp4", n=14, fps=fps, codec="libx264")
    # On frames, between frames (nearest), on exact ties (earlier), before the start and past the end (clamped).
    times = [0.0, 3 / fps, 4.4 / fps, 4.6 / fps, 6.5 / fps, 13 / fps, -1.0, 100.0]
    with VideoReader(path) as av_reader, TorchCodecReader(path) as tc_reader:
        assert tc_reader.info.fps == pytest.approx(av_reader.info.fps)
        assert (tc_reader.info.frames, tc_reader.info.height, tc_reader.info.width) == (14, 32, 48)
        assert tc_reader.info.duration == pytest.approx(av_reader.info.duration)
        ours, theirs = tc_reader.frames_at(times), av_reader.frames_at(times)
    assert ours.shape == theirs.shape == (len(times), 32, 48, 3) and ours.dtype == torch.uint8
    assert _index(ours) == _index(theirs) == [0, 3, 4, 5, 6, 13, 0, 13]
    # Two FFmpeg builds (PyAV's bundled one, the system's for torchcodec) may convert YUV→RGB a little apart.
    assert (ours.int() - theirs.int()).abs().float().mean() < 2.0


@needs_torchcodec
@pytest.mark.parametrize("rotation", [90, 180])
def test_torchcodec_applies_rotation_as_pyav(tmp_path, rotation):
    path = write_video(tmp_path / "r.mp4", n=3, rotation=rotation)
    with VideoReader(path) as av_reader, TorchCodecReader(path) as tc_reader:
        ours, theirs = tc_reader.frames_at([0.0]), av_reader.frames_at([0.0])
        assert ours.shape == theirs.shape
        assert (tc_reader.info.height, tc_reader.info.width) == tuple(theirs.shape[1:3])
    assert (ours.int() - theirs.int()).abs().float().mean() < 2.0


@needs_torchcodec
def test_torchcodec_bad_files_get_pyavs_reasons(tmp_path):
    (tmp_path / "empty.mp4").write_bytes(b"")
    (tmp_path / "text.mp4").write_text("this is not a video\n" * 20)
    good = write_video(tmp_path / "good.mp4", n=30)
    (tmp_path / "cut.mp4").write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    cases = {"missing.mp4": "missing", "empty.mp4": "empty", "text.mp4": "not_a_video", "cut.mp4": "undecodable"}
    for name, kind in cases.items():
        with pytest.raises(VideoError) as err:
            TorchCodecReader(tmp_path / name)
        assert err.value.kind == kind and name in str(err.value), str(err.value)


@needs_torchcodec
def test_the_dataset_decodes_with_torchcodec_when_selected(tmp_path, monkeypatch):
    from harness.data import VideoClipDataset, load_annotations
    from harness.data.sampler import ClipRequest

    write_kinetics_list(tmp_path, 2, classes=2)
    ds = VideoClipDataset(load_annotations("kinetics400", tmp_path, "train"))
    req = ClipRequest(1, 4, 16, (1, 2), (18, 24), (0, 1))
    pyav = ds[req]["clip"]
    ds.decoder = "torchcodec"  # what data.decoder=torchcodec gives the dataset (from_spec)
    assert isinstance(open_video(ds.records[0].path, decoder="torchcodec"), TorchCodecReader)
    ours = ds[req]["clip"]  # the same request: the same window and crop, decoded by torchcodec
    assert ours.shape == pyav.shape == (3, 4, 16, 16)
    assert (ours.int() - pyav.int()).abs().float().mean() < 2.0


def test_decoder_switch(monkeypatch, tmp_path):
    monkeypatch.delenv(DECODER_ENV, raising=False)
    require_decoder("pyav")
    assert isinstance(open_video(write_video(tmp_path / "v.mp4", n=4)), VideoReader)
    assert isinstance(open_video(tmp_path / "v.mp4", decoder="nvdec"), VideoReader)  # nvdec's headers: PyAV
    monkeypatch.setenv(DECODER_ENV, "torchcodec")  # the old switch is an error that names the key
    with pytest.raises(SpecError, match="HARNESS_DECODER='torchcodec' is set, but the decoder is chosen by the "
                                        "config key data.decoder now .* set data.decoder=torchcodec"):
        require_decoder("pyav")


@pytest.mark.skipif(WHY_NOT is None, reason="torchcodec is installed here")
def test_torchcodec_missing_is_a_spec_error_naming_pyav(monkeypatch):
    monkeypatch.delenv(DECODER_ENV, raising=False)
    with pytest.raises(SpecError, match="data.decoder=torchcodec, but torchcodec cannot be used here .* use "
                                        "data.decoder=pyav"):
        require_decoder("torchcodec")
