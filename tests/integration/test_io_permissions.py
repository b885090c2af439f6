"""Files and folders the file system refuses (chmod): a video (or a frame cache's shard of one video) is skipped and
counted like any unusable one; an annotation, config, checkpoint, record or frame cache file, or an output folder, is
a clear error naming it, before any work."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.config import compose
from harness.data.cache_build import build_frame_cache
from harness.spec import SpecError
from harness.train.loop import train

from ..permissions import denied
from ..unit.report_records import make_record
from .conftest import tiny_synthetic
from .run_overrides import tiny_overrides


def refused(path: Path) -> str:
    """What a message says after the name of `path`, a file the file system refuses."""
    return (f"cannot be read: permission denied; give the user running the harness read access to it and search "
            f"access to its folders (e.g. chmod a+r {path})")


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory) -> Path:
    return tiny_synthetic(tmp_path_factory, "tiny", videos=8, val_videos=4)


@pytest.fixture()
def root(tiny_root, tmp_path) -> Path:
    """A copy of the tiny synthetic dataset (8 train / 4 val videos) to chmod files of."""
    return Path(shutil.copytree(tiny_root, tmp_path / "data"))


def _first_video(root: Path, split: str) -> Path:
    return root / (root / f"{split}.csv").read_text().splitlines()[0].split()[0]


def _smoke_results(tmp_path: Path) -> Path:
    """A results folder holding one record of the smoke suite, for `harness report --suite smoke` to read."""
    results = tmp_path / "results"
    (results / "smoke" / "smoke").mkdir(parents=True)
    (results / "smoke" / "smoke" / "baseline.json").write_text(json.dumps(make_record("baseline", kind="baseline")))
    return results


def test_an_unreadable_video_is_skipped_and_counted_by_check_train_and_cache(root, tmp_path, capsys):
    from harness.cli import main

    videos = [_first_video(root, "train"), _first_video(root, "val")]
    with denied(*videos):
        code = main(["data", "check", "data.name=synthetic", f"data.root={root}", "data.num_classes=4"])
        out = capsys.readouterr().out
        record = train(compose(tiny_overrides(root, tmp_path / "run")))
        cache = build_frame_cache(root, tmp_path / "cache", num_classes=4, workers=1, progress=False)
    assert code == 1 and "2 unreadable" in out
    assert all(f"{v}: unreadable: {v} {refused(v)}" in out for v in videos)
    bad = record["bad_videos"]
    assert bad["by_reason"] == {"unreadable": 2} and bad["failed_reads"] >= 2
    assert {f["path"]: f["reason"] for f in bad["files"]} == {str(v): f"unreadable: {v} {refused(v)}" for v in videos}
    assert (record["final"]["videos"], record["final"]["videos_scored"]) == (4, 3)  # evaluation skips it too
    index = json.loads((tmp_path / "cache" / "index.json").read_text())
    assert {k: v["reason"] for k, v in index["bad"].items()} == {str(v.relative_to(root)): "unreadable" for v in videos}
    assert len(cache["bad"]) == 2


def test_an_unreadable_frame_file_is_an_unusable_video(tmp_path):
    from PIL import Image

    from harness.data.errors import VideoError
    from harness.data.frames import _read_frame

    frame = tmp_path / "000001.jpg"
    Image.new("RGB", (8, 8)).save(frame)
    with denied(frame), pytest.raises(VideoError) as err:
        _read_frame(frame)
    assert err.value.kind == "unreadable" and str(err.value) == f"unreadable: frame file {frame} {refused(frame)}"


CHARADES_ROW = ("id,subject,scene,quality,relevance,verified,script,objects,descriptions,actions,length\n"
                "A1,s,k,1,1,Yes,s,o,d,,3\n")
SSV2_TRAIN = '[{"id": "1", "template": "Pushing [something]", "label": "pushing a pen", "placeholders": ["a pen"]}]'


@pytest.mark.parametrize(("name", "files", "file"), [
    ("kinetics400", {"train.csv": "a.mp4 0\n"}, "train.csv"),
    ("kinetics400", {"train.csv": "a.mp4 0\n", "classes.txt": "a\n"}, "classes.txt"),  # the label map
    ("ssv2", {"labels.json": '{"Pushing something": "0"}', "train.json": SSV2_TRAIN}, "labels.json"),
    ("ssv2", {"labels.json": '{"Pushing something": "0"}', "train.json": SSV2_TRAIN}, "train.json"),
    ("charades", {"Charades_v1_train.csv": CHARADES_ROW}, "Charades_v1_train.csv"),
])
def test_an_unreadable_annotation_file_is_named_with_the_fix(tmp_path, name, files, file):
    from harness.data import AnnotationError, load_annotations

    for each, text in files.items():
        (tmp_path / each).write_text(text)
    load_annotations(name, tmp_path, "train")  # readable, the files are fine
    with denied(tmp_path / file), pytest.raises(AnnotationError) as err:
        load_annotations(name, tmp_path, "train")
    assert [str(p) for p in err.value.problems] == [f"{tmp_path / file}: {refused(tmp_path / file)}"]


def test_an_unreadable_annotation_file_stops_train_and_data_check_before_any_work(root, tmp_path, capsys):
    from harness.cli import main

    out = tmp_path / "run"
    with denied(root / "train.csv"):
        code = main(["train", *tiny_overrides(root, out)])
        err = capsys.readouterr().err
        checked = main(["data", "check", "data.name=synthetic", f"data.root={root}", "data.num_classes=4"])
        report = capsys.readouterr().out
    assert code == 2 and "Traceback" not in err
    csv = root / "train.csv"
    assert f"harness train: error: 1 annotation file problem(s):\n  {csv}: {refused(csv)}\n" in err
    assert not (out / "checkpoints").exists() and not (out / "record.json").exists()
    assert checked == 1 and f"{csv}: {refused(csv)}\n" in report


@pytest.mark.parametrize(("file", "command"), [
    ("config.yaml", ["plan"]),
    ("recipe/k400_i3d_r50.yaml", ["plan", "recipe=k400_i3d_r50"]),
    ("experiments/smoke.yaml", ["reproduce", "--suite", "smoke", "--scale", "smoke", "--dry-run"]),
    ("scales/smoke.yaml", ["reproduce", "--suite", "smoke", "--scale", "smoke", "--dry-run"]),
    ("paper/paper_results.csv", ["reproduce", "--suite", "smoke", "--scale", "smoke", "--dry-run"]),
    # The report reads the suite and the paper's table itself; the table after the records, so it is given one.
    ("experiments/smoke.yaml", ["report", "--suite", "smoke", "--results", "{results}", "--out", "{out}"]),
    ("paper/paper_results.csv", ["report", "--suite", "smoke", "--results", "{results}", "--out", "{out}"]),
])
def test_an_unreadable_config_file_is_named_with_the_fix(tmp_path, monkeypatch, capsys, file, command):
    from harness.cli import main
    from harness.config import _recipe_tree
    from harness.paths import suites_dir

    suites = Path(shutil.copytree(suites_dir(), tmp_path / "suites"))
    monkeypatch.setenv("HARNESS_SUITES_DIR", str(suites))
    _recipe_tree.cache_clear()  # recipes composed from the checkout's suites/ earlier in this process
    try:
        results = _smoke_results(tmp_path)
        with denied(suites / file):
            code = main([c.format(results=results, out=tmp_path / "reports") for c in command])
    finally:
        _recipe_tree.cache_clear()
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"{suites / file} {refused(suites / file)}\n" in err and err.startswith(f"harness {command[0]}: error: ")


@pytest.mark.parametrize(("key", "command"), [
    ("output_dir", ["train", "scale=smoke", "output_dir={ro}/run"]),
    ("HARNESS_DATA_DIR", ["train", "scale=smoke", "output_dir={tmp}/run"]),
    ("HARNESS_DATA_DIR", ["reproduce", "--suite", "smoke", "--scale", "smoke", "--results", "{tmp}/results"]),
    ("--out", ["report", "--suite", "smoke", "--results", "{results}", "--out", "{ro}/reports"]),
    ("--out", ["data", "synth", "--out", "{ro}/synth", "--videos", "2"]),
])
def test_an_unwritable_output_folder_is_named_before_any_work(tmp_path, monkeypatch, capsys, key, command):
    from harness.cli import main

    ro = tmp_path / "read-only"
    ro.mkdir()
    monkeypatch.setenv("HARNESS_DATA_DIR", str(ro / "data"))
    results = _smoke_results(tmp_path)
    with denied(ro, mode=0o555):
        code = main([c.format(ro=ro, tmp=tmp_path, results=results) for c in command])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"error: '{key}' '{ro}/" in err and f"is not a writable folder (Permission denied). Set {key} to" in err
    assert not any(ro.iterdir()) and not list(tmp_path.glob("run/*"))  # the run folder may be made, empty


def test_an_unreadable_checkpoint_stops_a_resume_rather_than_falling_back(root, tmp_path, capsys):
    from harness.cli import main
    from harness.train import checkpoint as ckpt

    out = tmp_path / "run"
    overrides = tiny_overrides(root, out, "train.checkpoint_every=2", "train.keep_checkpoints=3", "resume=true")
    assert main(["train", *overrides]) == 0
    kept = ckpt.list_checkpoints(out / "checkpoints")
    before = {p: p.read_bytes() for p in kept}
    capsys.readouterr()
    with denied(kept[-1]):
        code = main(["train", *overrides])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"harness train: error: Checkpoint {kept[-1]} {refused(kept[-1])}; then resume again.\n" in err
    assert {p: p.read_bytes() for p in ckpt.list_checkpoints(out / "checkpoints")} == before  # nothing lost


def test_an_unreadable_run_record_is_named_not_set_aside_or_run_again(tmp_path, capsys):
    from harness.cli import main

    results = tmp_path / "results"
    record = results / "smoke" / "smoke" / "baseline__k400_slowfast_r50_8x8__0123456789ab.json"
    record.parent.mkdir(parents=True)
    record.write_text('{"variant": "baseline", "spec": {}, "measured": {}, "status": "complete"}\n')
    with denied(record):
        code = main(["reproduce", "--suite", "smoke", "--scale", "smoke", "--results", str(results), "--dry-run"])
        reported = main(["report", "--suite", "smoke", "--results", str(results), "--out", str(tmp_path / "reports")])
    err = capsys.readouterr().err
    message = f"error: Run record {record} {refused(record)}; then start again.\n"
    assert (code, reported) == (2, 2) and "Traceback" not in err
    assert f"harness reproduce: {message}" in err and f"harness report: {message}" in err
    assert [p.name for p in record.parent.iterdir()] == [record.name]  # where it was, not moved aside


def test_an_unwritable_outputs_folder_stops_reproduce_before_any_data(tmp_path, monkeypatch, capsys):
    from harness.cli import main

    # reproduce keeps each run's log and checkpoints in outputs/<suite>/ of the folder it runs in.
    here = tmp_path / "read-only"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    with denied(here, mode=0o555):
        code = main(["reproduce", "--suite", "smoke", "--scale", "smoke", "--results", str(tmp_path / "results")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert (f"harness reproduce: error: 'outputs' '{here}/outputs/smoke' is not a writable folder (Permission "
            f"denied). Run harness reproduce from a folder where you can create and write outputs/smoke/") in err
    assert not (tmp_path / "data").exists() and not any(here.iterdir())  # no data made, no run started


@pytest.mark.parametrize("folder", ["reports", "reports/smoke"])
def test_an_unwritable_reports_folder_stops_reproduce_before_any_data(folder, tmp_path, monkeypatch, capsys):
    from harness.cli import main

    # reproduce writes reports/<suite>/ and reports/index.html beside the results folder, once every run is done.
    here = tmp_path / "here"
    (here / folder).mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    results = here / "results"
    with denied(here / folder, mode=0o555):
        code = main(["reproduce", "--suite", "smoke", "--scale", "smoke", "--results", str(results)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert (f"harness reproduce: error: '--out' '{here / folder}' is not a writable folder (Permission denied). "
            f"Pass --out DIR, a folder of reports you can create and write, make {here / 'reports' / 'smoke'} "
            f"writable, or pass --no-report and write the report later with 'harness report --suite smoke --out "
            f"DIR'.") in err
    assert not (tmp_path / "data").exists() and not list(results.rglob("*.json"))  # no data made, no run trained


def test_an_unreadable_consumer_record_is_named_before_the_bench(tmp_path, capsys):
    from harness.cli import main

    consumer = tmp_path / "profile.json"
    consumer.write_text('{"shapes": []}\n')
    with denied(consumer):
        code = main(["data", "bench", "--consumer", str(consumer), "data.name=synthetic", f"data.root={tmp_path}"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"harness data: error: --consumer {consumer} {refused(consumer)}.\n" in err


def _cache_of(root: Path, out: Path, **build) -> tuple[Path, dict]:
    build_frame_cache(root, out, num_classes=4, workers=1, progress=False, **build)
    return out, json.loads((out / "index.json").read_text())


def test_an_unreadable_cache_shard_of_one_video_is_an_unreadable_video(root, tmp_path):
    cache, index = _cache_of(root, tmp_path / "cache", chunk_videos=1)  # a shard per video
    video = _first_video(root, "train")
    shard = cache / index["videos"][str(video.relative_to(root))]["shard"]
    with denied(shard):
        record = train(compose(tiny_overrides(root, tmp_path / "run", f"data.cache={cache}")))
    bad = record["bad_videos"]
    assert bad["by_reason"] == {"unreadable": 1}
    assert {f["path"]: f["reason"] for f in bad["files"]} == {
        str(video): f"unreadable: frame cache file {shard} {refused(shard)}"}


@pytest.mark.parametrize("file", ["frames-00000.u8", "times.npy", "index.json"])
def test_an_unreadable_cache_file_of_many_videos_stops_train_before_any_work(root, tmp_path, capsys, file):
    from harness.cli import main

    cache, index = _cache_of(root, tmp_path / "cache")
    assert [s["file"] for s in index["shards"]] == ["frames-00000.u8"]  # every video's frames in the one shard
    out = tmp_path / "run"
    with denied(cache / file):
        code = main(["train", *tiny_overrides(root, out, f"data.cache={cache}")])
        err = capsys.readouterr().err
        # `harness data cache` builds such a cache again rather than keep it as it is.
        rebuilt = build_frame_cache(root, cache, num_classes=4, workers=1, progress=False)
        assert (cache / file).read_bytes()  # the new file reads
    assert code == 2 and "Traceback" not in err
    assert (f"harness train: error: 'data.cache={cache}': {cache / file} {refused(cache / file)}; or rebuild it "
            f"with 'harness data cache") in err
    assert not (out / "checkpoints").exists() and not (out / "record.json").exists()
    assert not rebuilt["reused"] and rebuilt["cached"] == 12


def test_a_cache_file_refused_after_the_check_makes_the_video_read_unusable(root, tmp_path):
    from harness.data.cache_read import FrameCache
    from harness.data.errors import VideoError

    cache, _ = _cache_of(root, tmp_path / "cache")
    opened = FrameCache(cache, root)  # as in a run whose cache was checked before the permissions changed
    video, shard = _first_video(root, "train"), cache / "frames-00000.u8"
    with denied(shard), pytest.raises(VideoError) as err:
        opened.reader(video)
    assert err.value.kind == "unreadable" and str(err.value) == f"unreadable: frame cache file {shard} {refused(shard)}"


def test_synthetic_data_made_already_serves_runs_from_a_read_only_folder(tmp_path, monkeypatch):
    """Made once and shared read-only (for several users, say): every run was refused, as the lock beside the
    data could not be written, though there was nothing to build."""
    from harness.reproduce.inputs import prepare_synthetic
    from harness.suite import load_scale

    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    scale = load_scale("smoke")
    root, cache = prepare_synthetic(scale)  # made here, writable
    assert cache is None
    shared = Path(root).parent
    with denied(shared, mode=0o555):
        assert prepare_synthetic(scale) == (root, None)
    (Path(root) / "val.csv").unlink()  # not whole: it must be made, and the folder's refusal is named
    with denied(shared, mode=0o555), pytest.raises(SpecError, match="'HARNESS_DATA_DIR' .* is not a writable folder"):
        prepare_synthetic(scale)
