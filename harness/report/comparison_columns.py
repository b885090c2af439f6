"""How the tables show runs over seeds against their baseline: the accuracy difference, interval, verdict and
speedup range columns, and the notes that say what means, ± and the verdict words stand for."""

from __future__ import annotations

from harness.report.table_model import Column

SEEDS_NOTE = ("Runs over several seeds (initialisation and data order; the same videos): accuracy and train time "
              "are means over the runs, ± std the sample standard deviation of the accuracy, seeds how many runs "
              "(every complete run counts: a rerun of a seed, which GPU kernels train a little differently, is "
              "another run). Speedup divides mean train times; its 95% range is over the seeds both arms ran on one "
              "card (geometric mean of per-seed ratios, t-interval on their logarithms). Train top-1: the final "
              "model scored on training videos as the validation videos are (empty where the run did not score "
              "them).")


def verdict_note(margin: float) -> str:
    """How a difference becomes a verdict word, with the margin the report was built with."""
    return (f"Δ: this run's mean accuracy minus its baseline's, ± the half-width of Welch's 95% t-interval "
            f"(unequal variances, Welch–Satterthwaite degrees of freedom: df; scipy.stats), over the seeds compared "
            f"(compared: runs of this run v of the baseline, on one card where the arms' cards differ). Verdict at "
            f"the declared margin δ = {margin:g} point(s): better where the one-sided 95% lower bound of Δ is above "
            f"0; within δ where it is above −δ (non-inferior: the baseline's accuracy kept within δ); worse where "
            f"the one-sided 95% upper bound is below −δ; else inconclusive, with the seeds per arm that would "
            f"decide it at the spread observed. A side with one seed has no spread, so no interval: inconclusive "
            f"(a top-1 of one seed a side shows, apart, the 95% half-width from its validation videos alone, "
            f"which leaves out the spread over seeds).")


def comparison_columns(metric: str, margin: float, full: bool = True) -> list[Column]:
    """The accuracy comparison and speedup range columns (not `full`: the detail in the CSV only)."""
    label = "mAP" if metric == "map" else "top-1"
    return [Column(f"{metric}_delta", f"Δ {label}", "pct"), Column(f"{metric}_delta_interval", "± 95%", "pct"),
            Column(f"{metric}_delta_df", "df", "float", show=full),
            Column(f"{metric}_compared", "compared", show=full),
            Column(f"{metric}_verdict", f"verdict (δ = {margin:g})"),
            Column(f"{metric}_seeds_needed", "seeds/arm to decide", "int", show=full),
            Column(f"{metric}_sampling_interval", "± 95% from videos (1 seed)", "pct", show=full),
            Column(f"{metric}_cards", "cards", show=full),
            Column("speedup_range", "speedup 95% (seed pairs)")]
