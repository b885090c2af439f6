"""Every paper table in one place: per paper row, the paper's speedup, ours predicted at paper scale on a GPU, ours
measured at the reports' scale, and the accuracy difference to the row's baseline.

Pure: `overview_rows` reads a suite's report tables and profile records; `overview_markdown` prints the rows of
all suites (reports/overview.md, which the README's results section reproduces).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.provenance import provenance_of
from harness.report import stats
from harness.report.table_model import Table, fmt
from harness.report.tables import OK, TABLE_TITLES

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


def overview_rows(suite: str, scale: str | None, tables: Sequence[Table], profiles: Sequence[Mapping[str, Any]],
                  margin: float = stats.DEFAULT_MARGIN) -> list[dict[str, Any]]:
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
            rows.append({"suite": suite, "margin": margin, "table": table.id, "paper_row": r.get("paper_row"),
                         "variant": r.get("variant"), "metric": metric,
                         "paper_speedup": r.get("paper_speedup"), "paper_delta": r.get(f"paper_{metric}_delta"),
                         "predicted_speedup": predicted.get(str(r.get("variant"))), "predicted_gpu": predicted_gpu,
                         "predicted_step": predicted_step,
                         "scale": scale if measured else None,
                         "speedup": r.get("speedup") if measured else None,
                         "accuracy": r.get(metric) if measured else None,
                         "delta": r.get(f"{metric}_delta") if measured else None,
                         "interval": r.get(f"{metric}_delta_interval") if measured else None,
                         "df": r.get(f"{metric}_delta_df") if measured else None,
                         "verdict": r.get(f"{metric}_verdict") if measured else None,
                         "seeds_needed": r.get(f"{metric}_seeds_needed") if measured else None,
                         "compared": r.get(f"{metric}_compared") if measured else None,
                         "cards": r.get(f"{metric}_cards") if measured else None,
                         "speedup_range": r.get("speedup_range") if measured else None,
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


def _delta(row: Mapping[str, Any]) -> str:
    """'−1.2 ± 2.3 (4 v 4)': the difference, its Welch 95% interval where it has one, and the runs compared."""
    if row.get("delta") is None:
        return ""
    within = "" if row.get("interval") is None else f" ± {row['interval']:.1f}"
    compared = row.get("compared") or f"{row.get('seeds') or 1} v ?"
    return f"{row['delta']:+.1f}{within} ({compared})"


def _verdict(row: Mapping[str, Any]) -> str:
    """The verdict word, with the seeds per arm that would decide an inconclusive one, and a card caveat."""
    word = row.get("verdict") or ""
    if word == "inconclusive" and row.get("seeds_needed"):
        needed = row["seeds_needed"]
        word += f" (~{needed} seeds/arm would decide)" if needed <= stats.MAX_SEEDS else " (hundreds of seeds/arm)"
    if row.get("cards") and "compared on" in str(row["cards"]):
        word += "; one card"
    return word


HEADER = ("table", "paper row", "our run", "paper speedup", "predicted speedup (paper scale)", "measured speedup",
          "speedup 95% (seed pairs)", "Δ accuracy ± 95% (runs compared)", "verdict", "paper Δ")


def overview_cells(rows: Sequence[Mapping[str, Any]]) -> tuple[list[list[str]], str]:
    """All suites' overview rows as printed cells (in HEADER's order), and a note on where each column comes from."""
    margins = sorted({float(r.get("margin") or stats.DEFAULT_MARGIN) for r in rows if r.get("verdict")})
    margin = " / ".join(f"{m:g}" for m in margins) or f"{stats.DEFAULT_MARGIN:g}"
    cells = []
    for r in in_paper_order(rows):
        paper_delta = r.get("paper_delta")
        cells.append([str(r["table"]), str(r["paper_row"]), str(r["variant"]), _cell(r.get("paper_speedup"), "ratio"),
                      _predicted(r), _cell(r.get("speedup"), "ratio"), r.get("speedup_range") or "", _delta(r),
                      _verdict(r), "" if paper_delta is None else f"{paper_delta:+.1f}"])
    gpus = sorted({str(r["predicted_gpu"]) for r in rows if r.get("predicted_gpu")})
    scales = sorted({str(r["scale"]) for r in rows if r.get("scale")})
    predicted = (f"`harness profile` of the paper's recipe and shapes on one {' / '.join(gpus)} with the step mode "
                 f"in brackets, the fastest profiled for the suite (results/profile/)" if gpus
                 else "empty: no `harness profile` record of the paper's shapes beside these results")
    note = (f"Predicted: {predicted}. Measured: our runs at {' / '.join(scales) or 'no'} scale, against the row's "
            f"1.0× baseline run; speedup 95%: over the seeds both arms ran on one card. Δ accuracy in points of "
            f"top-1 (mAP for Charades), the run's mean minus the baseline's, ± the half-width of Welch's 95% "
            f"t-interval; in brackets the runs compared (run v baseline; 'on CARD' where the arms' cards differ and "
            f"one card is compared). Verdict at the margin δ = {margin} point(s) each suite declares: within δ "
            f"where the one-sided 95% lower bound of Δ is above −δ, better where it is above 0, worse where the "
            f"upper bound is below −δ, else inconclusive (a side of one seed has no interval). Paper Δ: the "
            f"paper's accuracy minus its baseline row's (same model, pre-training, clip length and crop). Empty: "
            f"not run yet.")
    return cells, note


def overview_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """All suites' overview rows as one Markdown table with its note (reports/overview.md)."""
    cells, note = overview_cells(rows)
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(["# Every paper table in one place", "", *lines, "", note]) + "\n"
