"""The provenance table: where each number came from (record file, run id, commit, date, versions, device,
precision), and a record's hardware in words as every table names it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.provenance import provenance_of
from harness.report.table_model import Column, Table
from harness.suite import SuiteDef


def device_of(record: Mapping[str, Any]) -> str:
    """The hardware of a record in words, e.g. '8× NVIDIA H100 (80 GiB)' or '2-core CPU (Intel Xeon)'."""
    hw = provenance_of(record)["hardware"]
    if hw.get("gpu") and (record.get("spec") or {}).get("train", {}).get("device") != "cpu":
        mem = f", {hw['gpu_memory_gib']} GiB" if hw.get("gpu_memory_gib") else ""
        return f"{record.get('world_size', 1)}× {hw['gpu']}{mem}"
    return f"{hw.get('cpu_count', '?')}-core CPU ({hw.get('cpu', 'unknown')})"


def provenance_table(suite: SuiteDef, chosen: Mapping[str, Mapping[str, Any]]) -> Table:
    """Where each number came from: record file, run id, commit, date, versions, device, precision."""
    out = []
    for run in suite.runs:
        record = chosen.get(run.variant)
        if record is None:
            continue
        prov = provenance_of(record)
        versions = prov["versions"]
        bad = (record.get("bad_videos") or {}).get("bad_videos")
        out.append({"variant": run.variant, "source": record.get("_source", ""), "run_id": record.get("run_id"),
                    "commit": prov["commit"], "date": prov["date"], "device": device_of(record),
                    "precision": record.get("precision"), "python": versions.get("python"),
                    "torch": versions.get("torch"), "data": ((record.get("spec") or {}).get("data") or {}).get("name"),
                    "model": ((record.get("spec") or {}).get("model") or {}).get("name"), "bad_videos": bad})
    columns = (Column("variant", "run"), Column("source", "record file"), Column("run_id", "run id"),
               Column("commit", "commit", "commit"), Column("date", "date"), Column("device", "device"),
               Column("precision", "precision"), Column("python", "python", show=False), Column("torch", "torch"),
               Column("data", "data"), Column("model", "model"), Column("bad_videos", "bad videos", "int"))
    return Table("provenance", "Provenance", columns, tuple(out))
