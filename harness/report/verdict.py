"""Pure functions from a suite's runs table to its answer: has the baseline converged, does each run keep the
baseline's accuracy (within the noise of seeds and validation videos), at what measured speedup against the
compute-only bound of `harness profile`, and does multigrid lift the time-vs-accuracy curve (the paper's Figure 3:
at equal training time, above the baselines)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from harness.provenance import provenance_of
from harness.report import comparison, stats
from harness.report.comparison_columns import verdict_note
from harness.report.table_model import Column, Table
from harness.report.tables import OK

CONVERGED_GAIN = 3.0  # points of top-1 that doubling the epochs may still gain at a converged setting


def baseline_curve(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The plain baseline's runs at several epoch settings (Figure 3's 'baseline' method), by epochs."""
    points = [r for r in rows if r.get("status") == OK and r.get("kind") == "baseline"
              and r.get("method") == "baseline" and r.get("epochs") and r.get("top1") is not None]
    return sorted(points, key=lambda r: r["epochs"])


def _doubling(r: Mapping[str, Any], half: Mapping[str, Any]) -> tuple[stats.Difference, str]:
    """What doubling `half`'s epochs to `r`'s gained (Welch over the seeds of each) and how it meets the rule."""
    gain = stats.welch_difference(r.get("top1_values") or [r["top1"]], half.get("top1_values") or [half["top1"]])
    if gain.upper is not None and gain.upper <= CONVERGED_GAIN:
        rule = "≤ 3: shown"
    elif gain.lower is not None and gain.lower > CONVERGED_GAIN:
        rule = "> 3: shown"
    elif gain.delta <= CONVERGED_GAIN:
        rule = "≤ 3 by the point estimate only"
    else:
        rule = "> 3 by the point estimate only"
    return gain, rule.replace("3", f"{CONVERGED_GAIN:g}")


def convergence_table(rows: Sequence[Mapping[str, Any]]) -> Table | None:
    """Baseline top-1 (validation and training) against epochs, with what each doubling gained (Welch's interval
    over the seeds of both settings) and whether that meets the convergence rule; None with fewer than two
    settings."""
    curve = baseline_curve(rows)
    if len(curve) < 2:
        return None
    by_epochs = {r["epochs"]: r for r in curve}
    out = []
    for r in curve:
        half = by_epochs.get(r["epochs"] / 2)
        gain, rule = _doubling(r, half) if half is not None else (None, "")
        out.append({"epochs": r["epochs"], "variant": r["variant"], "top1": r["top1"], "top1_std": r.get("top1_std"),
                    "seeds": r.get("seeds"), "train_top1": r.get("train_top1"),
                    "gap": None if r.get("train_top1") is None else r["train_top1"] - r["top1"],
                    "gain": None if gain is None else gain.delta,
                    "gain_interval": None if gain is None else gain.half_width,
                    "gain_upper": None if gain is None else gain.upper, "rule": rule,
                    "train_s": r.get("train_s")})
    columns = (Column("epochs", "epochs", "int"), Column("variant", "run"), Column("top1", "val top-1", "pct"),
               Column("top1_std", "± std", "pct"), Column("seeds", "seeds", "int"),
               Column("train_top1", "train top-1", "pct"), Column("gap", "train − val", "pct"),
               Column("gain", "gain over half the epochs", "pct"), Column("gain_interval", "± 95%", "pct"),
               Column("gain_upper", "one-sided 95% upper bound", "pct"),
               Column("rule", f"doubling gains ≤ {CONVERGED_GAIN:g} points"),
               Column("train_s", "train time", "seconds"))
    return Table("convergence", "Convergence of the baseline: top-1 against epochs", columns, tuple(out),
                 (convergence_sentence(rows),))


def convergence_sentence(rows: Sequence[Mapping[str, Any]]) -> str:
    """Which epoch setting the rule 'doubling the epochs gains at most 3 points' picks, from the runs made, with
    the uncertainty of each doubling: shown where the one-sided 95% upper bound of the gain is ≤ 3 points."""
    curve = baseline_curve(rows)
    by_epochs = {r["epochs"]: r for r in curve}
    doublings = [(r["epochs"] / 2, r["epochs"], *_doubling(r, by_epochs[r["epochs"] / 2]))
                 for r in curve if r["epochs"] / 2 in by_epochs]
    if not doublings:
        return "No two baseline runs an epoch doubling apart: convergence cannot be judged yet."

    def gained(a: float, b: float, gain: stats.Difference) -> str:
        spread = (f" ± {gain.half_width:.1f}" if gain.has_interval else
                  f", {gain.n_run} v {gain.n_base} seeds: no interval")
        return f"{a:g}→{b:g} epochs {gain.delta:+.1f}{spread}"

    steps = "; ".join(gained(a, b, g) for a, b, g, _ in doublings)
    rule = f"≤ {CONVERGED_GAIN:g} points"
    shown = [a for a, _, g, _ in doublings if g.upper is not None and g.upper <= CONVERGED_GAIN]
    point = [a for a, _, g, _ in doublings if g.delta <= CONVERGED_GAIN]
    head = f"Doubling the baseline's epochs gains {steps} points of validation top-1 (95% intervals). "
    if shown:
        return head + (f"The smallest setting whose doubling is shown to gain {rule} (one-sided 95% upper bound) is "
                       f"{min(shown):g} epochs.")
    if point:
        return head + (f"The smallest setting whose doubling gains {rule} is {min(point):g} epochs, by the point "
                       f"estimate only: no doubling is shown to gain {rule} at the one-sided 95% bound, so "
                       f"convergence at {min(point):g} epochs is not yet shown (more seeds of both settings would "
                       f"show it or not).")
    longest = max(b for _, b, _, _ in doublings)
    return head + (f"No setting run so far meets the {rule} rule; the converged setting is {longest:g} epochs or "
                   f"more ({longest:g}→{2 * longest:g} not run).")


def _profile_gpu(profile: Mapping[str, Any]) -> str | None:
    return provenance_of(profile)["hardware"].get("gpu")


def _profile_speedups(profiles: Sequence[Mapping[str, Any]], scale: str | None,
                      gpu: str | None = None) -> tuple[dict[str, float], str | None]:
    """variant → compute-only predicted speedup, from a `harness profile --suite` record at the runs' scale (one
    of the runs' card `gpu` where there is one), and the card the profile ran on."""
    at_scale = [p for p in profiles if p.get("scale") == scale]
    for profile in sorted(at_scale, key=lambda p: _profile_gpu(p) != gpu):
        return {str(r["variant"]): float(r["predicted_speedup"]) for r in profile.get("runs", [])
                if r.get("predicted_speedup")}, _profile_gpu(profile)
    return {}, None


def _seed_points(row: Mapping[str, Any], metric: str = "top1") -> list[tuple[float, float]]:
    """A row's seeds as (training seconds, accuracy), the seeds without a time (another card's) left out."""
    times = row.get("train_s_values") or [row.get("train_s")]
    scores = row.get(f"{metric}_values") or [row.get(metric)]
    return [(float(t), float(a)) for t, a in zip(times, scores)
            if isinstance(t, (int, float)) and t > 0 and isinstance(a, (int, float))]


def equal_accuracy(row: Mapping[str, Any], curve: Sequence[Mapping[str, Any]]) -> stats.EqualAccuracy | None:
    """The baseline's time to this run's top-1 on its time–accuracy curve over the run's time, bootstrapped over
    seeds (None where the curve has fewer than two timed lengths)."""
    points = [p for p in (_seed_points(r) for r in curve) if p]
    ours = _seed_points(row)
    return stats.equal_accuracy_speedup(points, ours) if len(points) >= 2 and ours else None


def equal_accuracy_text(result: stats.EqualAccuracy | None) -> str:
    """'2.10× [1.80, 2.60]', '≤ 0.90× […]' or '∞ (never reached)'."""
    if result is None:
        return ""
    if result.bound == "never":
        return "∞: no baseline run reaches it"

    def x(v: float) -> str:
        return "∞" if v == float("inf") else f"{v:.2f}"

    prefix = "≤ " if result.bound == "at most" else ""
    return f"{prefix}{result.value:.2f}× [{x(result.low)}, {x(result.high)}]"


def verdict_table(rows: Sequence[Mapping[str, Any]], baseline: Mapping[str, Any] | None,
                  profiles: Sequence[Mapping[str, Any]] = (), scale: str | None = None,
                  gpu: str | None = None, run_gpus: Mapping[str, Sequence[str]] | None = None,
                  margin: float = stats.DEFAULT_MARGIN) -> Table | None:
    """Every run against its 1.0× baseline (the row's `baseline_variant`: the baseline of its recipe, model,
    pre-training, clip length and crop; else `baseline`, the suite's): the accuracy difference with Welch's 95%
    interval and its verdict word at the margin (report.comparison), the measured speedup with its range over
    same-card seed pairs, the speedup at equal accuracy where the suite has the baseline at several lengths, and
    the compute-only bound `harness profile` predicts for the same shapes (on the runs' card `gpu` where a profile
    from it exists). Scored in top-1, or in mAP where the baseline has no top-1 (Charades)."""
    metric = "top1" if baseline is not None and baseline.get("top1") is not None else "map"
    if baseline is None or baseline.get(metric) is None:
        return None
    label = "top-1" if metric == "top1" else "mAP"
    bound, bound_gpu = _profile_speedups(profiles, scale, gpu)
    by_variant = {r.get("variant"): r for r in rows if r.get("status") == OK}
    curve = baseline_curve(rows) if metric == "top1" else []
    out = []
    for r in rows:
        # A runs-table row names its own baseline (None: no record of it, so no comparison); other rows take the
        # suite's.
        own = by_variant.get(r["baseline_variant"]) if "baseline_variant" in r else baseline
        if (r.get("status") != OK or r.get(metric) is None or own is None or own.get(metric) is None
                or r.get("variant") == own["variant"]):  # a baseline is not judged against itself
            continue
        compared = comparison.accuracy_comparison(r, own, metric, margin)
        speed = comparison.speedup_interval(r, own)
        predicted = bound.get(str(r.get("variant")))
        equal = equal_accuracy(r, curve) if len(curve) >= 2 and r.get("method") != "baseline" else None
        out.append({"variant": r["variant"], "epochs_x": r.get("epochs_x"), "seeds": r.get("seeds"),
                    "margin": margin, "score": r[metric], "delta": compared[f"{metric}_delta"],
                    "interval": compared[f"{metric}_delta_interval"], "df": compared[f"{metric}_delta_df"],
                    "lower": compared[f"{metric}_delta_lower"], "compared": compared[f"{metric}_compared"],
                    "verdict": compared[f"{metric}_verdict"], "seeds_needed": compared[f"{metric}_seeds_needed"],
                    "sampling_interval": compared[f"{metric}_sampling_interval"],
                    "cards": compared[f"{metric}_cards"], "against": own["variant"],
                    "speedup": r.get("speedup"), "speedup_range": speed["speedup_range"],
                    "speedup_low": speed["speedup_low"], "speedup_high": speed["speedup_high"],
                    "equal_accuracy": None if equal is None else equal.value,
                    "equal_accuracy_text": equal_accuracy_text(equal),
                    "bound": predicted,
                    "of_bound": None if not (predicted and r.get("speedup")) else r["speedup"] / predicted,
                    "gpus": ", ".join(sorted(set((run_gpus or {}).get(str(r["variant"]), ()))))})
    columns = (Column("variant", "run"), Column("epochs_x", "epochs ×", "float"), Column("seeds", "seeds", "int"),
               Column("score", label, "pct"),
               *((Column("against", "baseline"),) if len({r["against"] for r in out}) > 1 else ()),
               Column("delta", f"Δ {label} vs baseline", "pct"), Column("interval", "± 95%", "pct"),
               Column("df", "df", "float"), Column("lower", "one-sided 95% lower bound", "pct"),
               Column("compared", "compared"), Column("verdict", f"verdict (δ = {margin:g})"),
               Column("seeds_needed", "seeds/arm to decide", "int"),
               Column("sampling_interval", "± 95% from videos (1 seed)", "pct"), Column("cards", "cards"),
               Column("speedup", "measured speedup", "ratio"), Column("speedup_range", "speedup 95% (seed pairs)"),
               *((Column("equal_accuracy_text", "speedup at equal accuracy [95%]"),)
                 if any(r["equal_accuracy_text"] for r in out) else ()),
               Column("bound", "compute-only bound", "ratio"), Column("of_bound", "measured / bound", "share"),
               *((Column("gpus", "trained on"),) if len({g for gs in (run_gpus or {}).values() for g in gs}) > 1
                 else ()))
    named = {r["against"] for r in out}
    if len(named) > 1:
        against = ("Each run against the 1.0× baseline of its recipe, model, pre-training, clip length and crop "
                   "(column baseline)")
    else:
        only = by_variant.get(next(iter(named)), baseline) if named else baseline
        against = f"Against {only['variant']} ({only[metric]:.1f}% {label}, {only.get('seeds') or 1} seed(s))"
    equal_note = (" Speedup at equal accuracy: the time the plain baseline needs to reach this run's top-1 on its "
                  "time–accuracy curve (its runs at several epoch settings, linear between their mean points) over "
                  "this run's time, as time-to-result benchmarks compare (AlgoPerf, MLPerf); ≤ where even its "
                  "shortest run reaches it, ∞ where none does; the 95% range is the 2.5–97.5 percentiles of "
                  "2,000 bootstrap resamples of every point's seeds." if any(r["equal_accuracy_text"] for r in out)
                  else "")
    notes = (f"{against}. {verdict_note(margin)}{equal_note} Compute-only bound: the speedup `harness "
             "profile` predicts from timed steps of the same shapes on random clips (no data, no graph capture), on "
             "the GPU of the profile record" + (f" ({bound_gpu})" if bound_gpu else "") + "."
             + _cards_note(out, bound_gpu, gpu),)
    return Table("verdict", "Verdict per run: accuracy kept, at what speedup", columns, tuple(out), notes)


def verdict_sentences(table: Table | None) -> list[str]:
    """The verdict table in a sentence: how many runs each word covers against their baselines, and which."""
    if table is None or not table.rows:
        return []
    by_word: dict[str, list[str]] = {}
    for r in table.rows:
        by_word.setdefault(str(r["verdict"]), []).append(str(r["variant"]))
    parts = [f"{len(by_word[w])} {w} ({', '.join(by_word[w])})" for w in stats.VERDICTS if w in by_word]
    return [f"Against their baselines at the margin δ = {table.rows[0]['margin']:g} point(s): " + "; ".join(parts)
            + "."]


def _cards_note(rows: Sequence[Mapping[str, Any]], bound_gpu: str | None, gpu: str | None) -> str:
    """Which measured / bound ratios compare two cards: every run's where the runs' cards are not named per row,
    else the rows trained (also) on another card than the profile's."""
    if not bound_gpu:
        return ""
    if any(r.get("gpus") for r in rows):
        other = [str(r["variant"]) for r in rows if r.get("gpus") and r["gpus"] != bound_gpu]
        return (f" Measured / bound compares two cards for {', '.join(other)} (trained on another card than the "
                f"profile's)." if other else "")
    return (f" The runs ran on {gpu}: measured / bound compares two cards until a profile on the runs' card is "
            f"recorded." if gpu and bound_gpu != gpu else "")


def _above_curve(curve: Sequence[Mapping[str, Any]], row: Mapping[str, Any]) -> stats.Difference | None:
    """The row's top-1 minus the baseline curve's at the row's training time (linear between the two baseline runs
    around it), with its interval over the seeds of the row and of both runs; None outside the curve's times."""
    points = sorted((r for r in curve if r.get("train_s")), key=lambda r: float(r["train_s"]))
    seconds = float(row["train_s"])
    for left, right in itertools.pairwise(points):
        x0, x1 = float(left["train_s"]), float(right["train_s"])
        if x0 <= seconds <= x1:
            w = (seconds - x0) / (x1 - x0)
            return stats.combination_interval([(1.0, _scores(row)), (-(1 - w), _scores(left)), (-w, _scores(right))])
    return None


def _scores(row: Mapping[str, Any]) -> list[float]:
    return list(row.get("top1_values") or [row["top1"]])


def ordering_sentences(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Figure 3's claim tested per method: is each point above the baseline curve at the same training time? Each
    difference with its 95% interval where every run behind it has several seeds; above or below is 'shown' where
    the one-sided 95% bound clears 0."""
    curve = baseline_curve(rows)
    if len(curve) < 2:
        return []
    methods: dict[str, list[str]] = {}
    above = shown = compared = 0
    for r in rows:
        if r.get("status") != OK or r.get("method") == "baseline" or not r.get("train_s") or r.get("top1") is None:
            continue
        diff = _above_curve(curve, r)
        if diff is None:
            where = "outside the baseline runs' time range"
        else:
            compared += 1
            above += diff.delta > 0
            shown += diff.lower is not None and diff.lower > 0
            spread = f" ± {diff.half_width:.1f} points" if diff.has_interval else " points (one seed: no interval)"
            where = f"{diff.delta:+.1f}{spread}"
        methods.setdefault(str(r["method"]), []).append(f"{r.get('epochs_x', 0):g}× {where}")
    if not compared:
        return []
    holds = ("Figure 3's ordering holds: every" if above == compared else
             f"Figure 3's ordering holds for {above} of {compared}" if above else "Figure 3's ordering fails: no")
    lines = [f"{holds} point of the other methods that falls within the baseline runs' training times lies above "
             f"the baseline curve (top-1 at the same measured training time; {shown} of them shown above at the "
             f"one-sided 95% bound, the others by their point estimate only):"]
    return lines + [f"{method}: {'; '.join(points)}." for method, points in methods.items()]


# Differences smaller than these count as ties when our rows are ordered as the paper's: about the rounding of
# the shown numbers and well inside a seed's spread.
TIE = {"top1": 0.5, "map": 0.5, "speedup": 0.05}


def _order_check(rows: Sequence[Mapping[str, Any]], ours: str, paper: str) -> tuple[int, int, int, int, int] | None:
    """(pairs in the paper's order, of those tied by ours, pairs the paper orders, pairs the paper ties, of those
    tied by ours too) over the rows with both values, by `ours` against `paper`. A tie in the paper is a claim as
    well (Table 4: multigrid at the baseline's accuracy), so a difference of ours there counts against it."""
    have = [r for r in rows if r.get(ours) is not None and r.get(paper) is not None]
    if len(have) < 2:
        return None
    in_order = tied = pairs = paper_ties = ties_kept = 0
    for i, a in enumerate(have):
        for b in have[i + 1:]:
            theirs = float(a[paper]) - float(b[paper])
            mine = float(a[ours]) - float(b[ours])
            if theirs == 0:
                paper_ties += 1
                ties_kept += abs(mine) < TIE[ours]
                continue
            pairs += 1
            if abs(mine) < TIE[ours]:
                tied += 1
            elif (mine > 0) == (theirs > 0):
                in_order += 1
    return in_order, tied, pairs, paper_ties, ties_kept


def _separated_text(rows: Sequence[Mapping[str, Any]], ours: str, paper: str) -> str:
    """For accuracy: how many of the pairs the paper orders are told apart by ours, the 95% Welch interval of
    their difference clear of 0 (pairs of one-seed rows cannot be). Speedups are compared by point estimate."""
    if ours == "speedup":
        return " (by point estimate; each speedup's own 95% range is in the table)"
    have = [r for r in rows if r.get(ours) is not None and r.get(paper) is not None]
    separated = agreeing = 0
    for i, a in enumerate(have):
        for b in have[i + 1:]:
            theirs = float(a[paper]) - float(b[paper])
            if theirs == 0:
                continue
            diff = stats.welch_difference(a.get(f"{ours}_values") or [a[ours]], b.get(f"{ours}_values") or [b[ours]])
            if diff.has_interval and abs(diff.delta) > diff.half_width:
                separated += 1
                agreeing += (diff.delta > 0) == (theirs > 0)
    return (f"; {separated} pair(s) told apart by their 95% Welch interval, {agreeing} of them in the paper's "
            f"order")


def paper_order_sentence(table: Table) -> str | None:
    """Whether a paper table's rows keep the paper's order, in accuracy and in speedup (pairwise: every two rows the
    paper ranks, ranked the same way by ours; a difference under TIE is a tie)."""
    rows = [r for r in table.rows if r.get("status") == OK]
    metric = "map" if any(r.get("paper_map") is not None for r in rows) else "top1"
    parts = []
    for ours, paper, what in ((metric, f"paper_{metric}", "mAP" if metric == "map" else "top-1"),
                              ("speedup", "paper_speedup", "speedup")):
        counted = _order_check(rows, ours, paper)
        if counted is None:
            continue
        in_order, tied, pairs, paper_ties, ties_kept = counted
        against = (pairs - in_order - tied) + (paper_ties - ties_kept)
        verdict_word = ("holds" if against == 0 else "holds in part" if in_order + ties_kept > against
                        else "does not hold")
        fmt_value = (lambda v: f"{float(v):.2f}×") if ours == "speedup" else (lambda v: f"{float(v):.1f}")
        ranked = sorted((r for r in rows if r.get(ours) is not None and r.get(paper) is not None),
                        key=lambda r: float(r[paper]))
        listing = ", ".join(f"{r.get('paper_row')} {fmt_value(r[paper])} / {fmt_value(r[ours])}" for r in ranked)
        unit = "×" if ours == "speedup" else " points"
        counts = ([f"{in_order} of {pairs} pairs of rows in the paper's order" + (f", {tied} tied" if tied else "")
                   + _separated_text(rows, ours, paper)] if pairs else [])
        if paper_ties:
            counts.append(f"{ties_kept} of the {paper_ties} pair(s) the paper ties within {TIE[ours]:g}{unit} here")
        parts.append(f"{what} {verdict_word}: {'; '.join(counts)} (paper / ours, in the paper's order: {listing})")
    if not parts:
        return None
    return f"{table.title.split(':')[0]}: " + "; ".join(parts) + "."
