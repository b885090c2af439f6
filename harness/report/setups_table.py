"""The setups table: every run under each setup it was recorded with (processes, step mode, kernels), timed
against its own setup's baseline and against the same run under the main tables' setup on the same card."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.provenance import provenance_of
from harness.report.baselines import suite_baseline, versus_baseline
from harness.report.provenance_table import device_of
from harness.report.run_numbers import ratio, run_numbers
from harness.report.table_model import Column, Table
from harness.suite import SuiteDef


def _seed(record: Mapping[str, Any]) -> Any:
    return (record.get("spec") or {}).get("seed")


def _same_run_under_main(record: Mapping[str, Any], main: Mapping[str, Any] | None,
                         main_records: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """What a run under another setup is timed against: the main setup's run of the same variant, seed and card
    (else the main setup's reported run, on the same card); None where the cards differ, since the ratio would
    then time the cards, not the setups."""
    def card(r: Mapping[str, Any]) -> tuple[Any, Any]:  # the kind of device, whatever the number of processes
        hw = provenance_of(r)["hardware"]
        return hw.get("gpu"), hw.get("gpu_memory_gib") if hw.get("gpu") else hw.get("cpu")

    same = [r for r in main_records if r.get("variant") == record.get("variant") and _seed(r) == _seed(record)
            and card(r) == card(record)]
    if same:
        return same[0]
    return main if main is not None and card(main) == card(record) else None


def setups_table(suite: SuiteDef, by_setup: Mapping[str, Mapping[str, Mapping[str, Any]]],
                 main_setup: str | None, main_records: Sequence[Mapping[str, Any]] = ()) -> Table | None:
    """Every run under each setup it was recorded with (e.g. 1 and 2 GPUs, same scale): wall-clock, speedup over
    the same setup's baseline, accuracy, and wall-clock against the run under the main tables' setup (the one of
    the same variant, seed and card among `main_records`, that setup's complete records, where there is one)."""
    if len(by_setup) < 2:
        return None
    main = by_setup.get(main_setup or "", {})
    setups = sorted(by_setup, key=lambda s: s != main_setup)  # the main setup first, then newest first
    rows = []
    for run in suite.runs:
        for setup in setups:
            record = by_setup[setup].get(run.variant)
            if record is None:
                continue
            numbers = run_numbers(record)
            ref = record if setup == main_setup else _same_run_under_main(record, main.get(run.variant),
                                                                            main_records)
            rows.append({"variant": run.variant, "setup": setup, "device": device_of(record),
                         "iterations": numbers["iterations"], "train_s": numbers["train_s"],
                         "speedup": versus_baseline(numbers, suite_baseline(record, suite, by_setup[setup]))["speedup"],
                         "top1": numbers["top1"], "map": numbers["map"],
                         "vs_main": ratio(run_numbers(ref)["train_s"], numbers["train_s"]) if ref else None,
                         "shape_checks": record.get("shape_checks") if int(record.get("world_size") or 1) > 1
                         else None, "commit": provenance_of(record)["commit"]})
    metric = (Column("map", "mAP", "pct") if any(r["map"] is not None for r in rows) else
              Column("top1", "top-1", "pct"))
    columns = (Column("variant", "run"), Column("setup", "setup"), Column("device", "device"),
               Column("iterations", "iterations", "int"), Column("train_s", "train time", "seconds"),
               Column("speedup", "speedup (same setup)", "ratio"), metric,
               Column("vs_main", f"faster than on {main_setup}", "ratio"),
               Column("shape_checks", "shape checks", "int"), Column("commit", "commit", "commit"))
    notes = ("Speedup: against the 1.0× baseline run of the same setup. Faster than on the main setup: against "
             "that setup's run of the same variant, seed and card (blank where it has none on that card). Shape "
             "checks: iterations at which every rank confirmed the same mini-batch shape (multi-process runs). "
             "Setups run on different commits compare only as well as those match (commit column).",)
    return Table("setups", "The runs under each setup (processes, step mode)", columns, tuple(rows), notes)
