"""Files beside a dataset that were edited, damaged or written by another tool (a prepared copy's prepare.json and
headers.json, a synthetic dataset's synth.json, a frame cache's index.json), and output
folders below a file: a clear error naming the file and the fix, or the file ignored where it only saves work,
never a traceback. No videos needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.data.cache_build import _current, build_frame_cache
from harness.data.cache_format import CACHE_FORMAT, CACHE_VERSION, INDEX
from harness.data.cache_read import FrameCache
from harness.data.headers import FIELDS, HEADERS, load_headers
from harness.data.low_res import open_low_res_copies
from harness.data.prepare import MANIFEST, prepare_dataset
from harness.data.synth.make import make_synthetic_dataset
from harness.measure.data_bench import synthetic_preset
from harness.spec import SpecError


def _listed_dataset(root: Path) -> Path:
    """A Kinetics-style list of two videos that are never opened: prepare_dataset checks --out before any."""
    root.mkdir()
    (root / "train.csv").write_text("a/v0.mp4 0\na/v1.mp4 1\n")
    return root


@pytest.mark.parametrize("manifest, why", [
    ('{"settings": {"short_sid', "Unterminated string"),
    ("[1, 2]", "a JSON list, not an object"),
    (b"\xff\xfe{}", "can't decode byte 0xff"),
])
def test_prepare_refuses_an_out_folder_whose_prepare_json_cannot_be_read(tmp_path, manifest, why):
    root, out = _listed_dataset(tmp_path / "src"), tmp_path / "copy"
    out.mkdir()
    (out / "a.mp4").write_bytes(b"a video of the copy")
    path = out / MANIFEST
    path.write_bytes(manifest if isinstance(manifest, bytes) else manifest.encode())
    with pytest.raises(SpecError, match=f"--out {out} holds a prepare.json that cannot be read .*{why}") as err:
        prepare_dataset(root, out, name="kinetics", num_classes=2, progress=False)
    assert "use another folder" in str(err.value)
    # neither resumed nor written over
    assert path.read_bytes() == (manifest if isinstance(manifest, bytes) else manifest.encode())
    assert (out / "a.mp4").read_bytes() == b"a video of the copy"


def test_prepare_refuses_an_out_folder_below_a_file(tmp_path):
    root = _listed_dataset(tmp_path / "src")
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(SpecError, match="'--out' .*a_file/copy' is not a writable folder"):
        prepare_dataset(root, tmp_path / "a_file" / "copy", name="kinetics", num_classes=2, progress=False)


@pytest.mark.parametrize("manifest", ["[1]", '{"settings": "x", "complete": true}', "{"])
def test_a_smaller_copy_whose_prepare_json_is_no_record_is_named(tmp_path, manifest):
    copy = tmp_path / "copy_160"
    copy.mkdir()
    (copy / MANIFEST).write_text(manifest)
    with pytest.raises(SpecError, match=f"data.low_res_copies: {copy} holds no readable prepare.json; make"):
        open_low_res_copies([str(copy)], tmp_path / "root")


def test_headers_json_of_another_shape_or_with_non_finite_values_only_costs_the_header_reads(tmp_path):
    video = tmp_path / "v.mp4"
    video.write_bytes(b"12345")
    (tmp_path / HEADERS).write_text(json.dumps({"fields": list(FIELDS), "videos": [["v.mp4"]]}))
    assert load_headers(tmp_path, [video]) is None
    entry = {"duration": 1.0, "fps": 30.0, "frames": float("nan"), "height": 24, "width": 32, "frame_step": 1,
             "bytes": 5}
    (tmp_path / HEADERS).write_text(json.dumps({"fields": list(FIELDS), "videos": {
        "v.mp4": [entry[f] for f in FIELDS]}}))  # json writes NaN, which it reads back
    assert load_headers(tmp_path, [video]).geometry(0) is None  # the loader opens the video instead


@pytest.mark.parametrize("manifest, why", [('{"classes": 4', "Expecting"), ("[1]", "a JSON list, not an object")])
def test_synth_refuses_a_folder_whose_synth_json_cannot_be_read(tmp_path, manifest, why):
    (tmp_path / "synth.json").write_text(manifest)
    with pytest.raises(SpecError, match=f"synth.json cannot be read .*{why}.* Use another --out folder"):
        make_synthetic_dataset(tmp_path, "smoke", progress=False)
    assert (tmp_path / "synth.json").read_text() == manifest
    assert synthetic_preset(tmp_path) is None  # `harness data bench` names no preset for it


def test_synth_and_cache_refuse_an_out_folder_below_a_file(tmp_path):
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(SpecError, match="'--out' .*a_file/data' is not a writable folder"):
        make_synthetic_dataset(tmp_path / "a_file" / "data", "smoke", progress=False)
    root = _listed_dataset(tmp_path / "src")
    with pytest.raises(SpecError, match="--out .*a_file/cache cannot be created"):
        build_frame_cache(root, tmp_path / "a_file" / "cache", name="kinetics", num_classes=2, progress=False)


@pytest.mark.parametrize("index", [[1], {"videos": "x", "bad": {}, "shards": []}])
def test_a_frame_cache_index_of_another_shape_is_refused_and_built_again(tmp_path, index):
    build = {"format": CACHE_FORMAT}
    if isinstance(index, dict):
        index.update(format=CACHE_FORMAT, version=CACHE_VERSION, build=build)
    (tmp_path / INDEX).write_text(json.dumps(index))
    with pytest.raises(SpecError, match=f"'data.cache={tmp_path}' is not a version-.* frame cache; rebuild it"):
        FrameCache(tmp_path)
    assert not _current(tmp_path, build)  # `harness data cache --out` builds it again
