"""docs/performance.md is what the records generate, cites only records that exist, fails on a changed record, and
its decisions agree with the code (the BN layouts, auto's example, every option and retired setting)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from harness.report.performance_page import BLOCK_SPLITS, COMMAND, EXAMPLE, performance_markdown
from harness.report.record_selectors import EvidenceError

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "performance.md"


@pytest.fixture(scope="module")
def page() -> str:
    return performance_markdown(ROOT)


def _section(page: str, title: str) -> str:
    return page.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def _first_cells(section: str) -> list[str]:
    return [line.split(" | ", 1)[0].removeprefix("| ") for line in section.splitlines()
            if line.startswith("| ") and not line.startswith(("| value", "| key", "| path"))]


def test_the_committed_page_is_what_the_records_generate(page):
    assert PAGE.read_text(encoding="utf-8") == page, f"docs/performance.md is out of date: run `{COMMAND}`"


def test_every_record_the_page_cites_exists(page):
    cited = set(re.findall(r"`(results/[^`]+)`", page))
    assert len(cited) > 20
    assert [path for path in sorted(cited) if not (ROOT / path).is_file()] == []


def _copy_of_the_records(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "results", tmp_path / "results")
    return tmp_path


def test_a_record_that_lost_the_row_a_finding_reads_fails_the_page_naming_the_file(tmp_path, page):
    root = _copy_of_the_records(tmp_path)
    assert performance_markdown(root) == page
    path = "results/throughput/h200_bn_stem.json"
    record = json.loads((root / path).read_text())
    lost = ("i3d_r50", "cuda_graphs", 32)
    record["rows"] = [r for r in record["rows"] if (r["model"], r["mode"], r["batch"]) != lost]
    (root / path).write_text(json.dumps(record))
    with pytest.raises(EvidenceError, match=re.escape(path) + ": no rows match .*model=i3d_r50, mode=cuda_graphs"):
        performance_markdown(root)


def test_a_record_that_no_longer_shows_a_finding_fails_the_page_naming_the_file(tmp_path):
    root = _copy_of_the_records(tmp_path)
    path = "results/data_bench/kinetics_like_paths_h200.json"
    record = json.loads((root / path).read_text())
    nvdec = next(p for p in record["paths"] if p["name"] == "nvdec")
    nvdec["shapes"][-1]["clips_per_s"] = 10_000.0  # faster than PyAV at one planned shape
    (root / path).write_text(json.dumps(record))
    with pytest.raises(EvidenceError, match=re.escape(path) + ": no longer shows that NVDEC is slower"):
        performance_markdown(root)


def test_the_block_layout_limits_are_the_models():
    from harness.models.bn import BLOCK_SPLITS_EAGER, BLOCK_SPLITS_GRAPHED

    assert BLOCK_SPLITS == {"eager": BLOCK_SPLITS_EAGER, "cuda_graphs": BLOCK_SPLITS_GRAPHED}


def test_the_example_run_is_one_auto_gives_tritons_bn():
    from harness.schedule import build_plan
    from harness.suite import load_scale, load_suite, resolve_suite, suite_scale
    from harness.train.choice_evidence import card_evidence, run_shapes
    from harness.train.choose import choose

    suite = load_suite(EXAMPLE["suite"])
    run = next(r for r in resolve_suite(suite, suite_scale(suite, load_scale(EXAMPLE["scale"])), [])
               if r.run.variant == EXAMPLE["variant"])
    shapes = run_shapes(build_plan(run.spec), run.spec.model.label, run.spec.num_gpus)
    choice = choose("auto", "auto", shapes, EXAMPLE["card"], card_evidence(EXAMPLE["card"]))
    assert choice.sub_batch_bn == "triton", choice.reason


def test_every_option_and_every_retired_setting_has_its_row(page):
    from harness.spec import PLAIN_BN_IMPL, RETIRED, STEP_MODES, SUB_BATCH_BN

    for title, values in (("Step mode", [m for m in STEP_MODES if m != "auto"]), ("Sub-batch BN", SUB_BATCH_BN),
                          ("Plain BN", PLAIN_BN_IMPL)):
        assert sorted(_first_cells(_section(page, title))) == sorted(f"`{v}`" for v in values), title
    retired = _first_cells(_section(page, "Retired"))
    for setting in RETIRED:  # a key (data.decoder) by any of its values, a value by its own row or its row's list
        key, _, value = setting.partition("=")
        rows = [cell for cell in retired if cell.startswith(f"`{key}=")]
        assert rows and (not value or any(f"`{setting}`" in cell or f"`{value}`" in cell for cell in rows)), setting
