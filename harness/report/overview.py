"""Every paper table in one place: per paper row, the paper's speedup, ours predicted at paper scale on a GPU, ours
measured at the reports' scale, and the accuracy difference to the row's baseline.

Pure: `overview_rows` reads a suite's report tables and profile records; `overview_markdown` prints the rows of
all suites (reports/overview.md, which the README's results section reproduces).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.provenance import provenance_of
from harness.report.tables import OK, TABLE_TITLES, Table, fmt

# the trainer's fastest measured step mode first
STEP_PREFERENCE = ("compile_graphs", "cuda_graphs", "compile", "eager")


def predicted_speedups(profiles: Sequence[Mapping[str, Any]]) -> tuple[dict[str, float], str | None, str | None]:
    """variant → predicted paper-scale speedup from the paper-scale `harness profile --suite` record of the
    fastest step mode, with that record's card and step mode. Only records of the trainer's default sub-batch BN
    (train.sub_batch_bn=auto) count: the others say what another setting would give."""
    at_paper = [p for p in profiles if p.get("scale", "paper") == "paper" and p.get("sub_batch_bn", "auto") == "auto"]
    if not at_paper:
        return {}, None, None
    profile = min(at_paper, key=lambda p: STEP_PREFERENCE.index(p.get("step", "eager"))
                  if p.get("step", "eager") in STEP_PREFERENCE else len(STEP_PREFERENCE))
    gpu = provenance_of(profile)["hardware"].get("gpu") or profile.get("device") or "?"
    speedups = {str(r["variant"]): float(r["predicted_speedup"]) for r in profile.get("runs", [])
                if r.get("predicted_speedup")}
    return speedups, gpu, profile.get("step", "eager")


def overview_rows(suite: str, scale: str | None, tables: Sequence[Table],
                  profiles: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per row of the paper's tables that `suite` covers (its report's `tables`)."""
    predicted, predicted_gpu, predicted_step = predicted_speedups(profiles)
    rows = []
    for table in tables:
        if table.id not in TABLE_TITLES:
            continue
        for r in table.rows:
            if not r.get("variant"):
                continue  # a paper row this suite has no run for
            measured = r.get("status") == OK
            metric = "map" if r.get("paper_map") is not None or r.get("map") is not None else "top1"
            rows.append({"suite": suite, "table": table.id, "paper_row": r.get("paper_row"),
                         "variant": r.get("variant"), "metric": metric,
                         "paper_speedup": r.get("paper_speedup"), "paper_delta": r.get(f"paper_{metric}_delta"),
                         "predicted_speedup": predicted.get(str(r.get("variant"))), "predicted_gpu": predicted_gpu,
                         "predicted_step": predicted_step,
                         "scale": scale if measured else None,
                         "speedup": r.get("speedup") if measured else None,
                         "accuracy": r.get(metric) if measured else None,
                         "delta": r.get(f"{metric}_delta") if measured else None,
                         "interval": r.get(f"{metric}_delta_interval") if measured else None,
                         "seeds": r.get("seeds") if measured else None})
    return rows


def _filled(row: Mapping[str, Any]) -> tuple[bool, bool]:
    return row.get("speedup") is not None, row.get("predicted_speedup") is not None


def in_paper_order(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The rows in the paper's table order, one per paper row: where several suites cover a row (Table 1a's
    baseline and default run are also Figure 3's), the one with a measured, else a predicted, speedup."""
    order = list(TABLE_TITLES)
    best: dict[tuple[str, str], Mapping[str, Any]] = {}
    for r in rows:
        key = (str(r["table"]), str(r["paper_row"]))
        if key not in best or _filled(r) > _filled(best[key]):
            best[key] = r
    return sorted(best.values(), key=lambda r: order.index(r["table"]) if r["table"] in order else len(order))


def _predicted(row: Mapping[str, Any]) -> str:
    """The predicted speedup with the step mode it was timed with (suites were profiled with different modes)."""
    if row.get("predicted_speedup") is None:
        return ""
    mode = str(row.get("predicted_step"))
    return f"{fmt(row['predicted_speedup'], 'ratio')} ({mode.replace('cuda_graphs', 'CUDA graphs')})"


def _cell(value: Any, kind: str) -> str:
    return "" if value is None else fmt(value, kind)


def _delta(delta: float, interval: float | None, seeds: int) -> str:
    """'-2.1 ± 4.0 (3)': the difference, its 95% interval where it has one, and the run's seeds."""
    within = "" if interval is None else f" ± {interval:.1f}"
    return f"{delta:+.1f}{within} ({seeds})"


HEADER = ("table", "paper row", "our run", "paper speedup", "predicted speedup (paper scale)", "measured speedup",
          "Δ accuracy vs baseline ± 95% (seeds)", "paper Δ")


def overview_cells(rows: Sequence[Mapping[str, Any]]) -> tuple[list[list[str]], str]:
    """All suites' overview rows as printed cells (in HEADER's order), and a note on where each column comes from."""
    cells = []
    for r in in_paper_order(rows):
        delta = "" if r.get("delta") is None else _delta(r["delta"], r.get("interval"), r.get("seeds") or 1)
        paper_delta = r.get("paper_delta")
        cells.append([str(r["table"]), str(r["paper_row"]), str(r["variant"]), _cell(r.get("paper_speedup"), "ratio"),
                      _predicted(r), _cell(r.get("speedup"), "ratio"), delta,
                      "" if paper_delta is None else f"{paper_delta:+.1f}"])
    gpus = sorted({str(r["predicted_gpu"]) for r in rows if r.get("predicted_gpu")})
    scales = sorted({str(r["scale"]) for r in rows if r.get("scale")})
    predicted = (f"`harness profile` of the paper's recipe and shapes on one {' / '.join(gpus)} with the step mode "
                 f"in brackets, the fastest profiled for the suite (results/profile/)" if gpus
                 else "empty: no `harness profile` record of the paper's shapes beside these results")
    note = (f"Predicted: {predicted}. Measured: "
            f"our runs at {' / '.join(scales) or 'no'} scale, against the row's 1.0× baseline run; Δ accuracy in "
            f"points of top-1 (mAP for Charades), mean over the seeds in brackets, ± 1.96 standard errors of the "
            f"difference (over seeds where a side has several, else from its validation videos; none for one mAP "
            f"score): a run whose Δ lies above minus that keeps the baseline's accuracy. Paper Δ: the paper's accuracy "
            f"minus its baseline row's (same model, pre-training, clip length and crop). Empty: not run yet.")
    return cells, note


def overview_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """All suites' overview rows as one Markdown table with its note (reports/overview.md)."""
    cells, note = overview_cells(rows)
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(["# Every paper table in one place", "", *lines, "", note]) + "\n"
