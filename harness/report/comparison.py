"""One run against its baseline, from the two rows' per-seed numbers: the accuracy difference with its Welch
interval and verdict word at the margin, the seeds that would decide it, and the speedup over same-card seed pairs.

Accuracy is compared on one card: where the two arms' seeds ran on different mixes of GPU models (other cards, or
other shares of them), only the seeds of the card both arms ran most on are compared (the card would otherwise be
confounded with the method), and the row says which seeds were left out and what all of them give.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from harness.report import stats


def _per_seed(row: Mapping[str, Any], metric: str) -> list[tuple[Any, str, float]]:
    """(seed, card, score) of every seed of a row that has the score."""
    values = row.get(f"{metric}_values") or ([row[metric]] if row.get(metric) is not None else [])
    seeds = row.get("seed_list") or [None] * len(values)
    cards = row.get("gpu_list") or [""] * len(values)
    return [(s, str(c), float(v)) for s, c, v in zip(seeds, cards, values) if isinstance(v, (int, float))]


def _cards_text(counts: Counter) -> str:
    return ", ".join(f"{card} ×{n}" for card, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _one_card(run: list[tuple[Any, str, float]], base: list[tuple[Any, str, float]]) -> tuple[str | None, str]:
    """The card to compare on (None: all seeds, the arms' cards being the same mix) and a note on the cards."""
    run_cards, base_cards = Counter(c for _, c, _ in run), Counter(c for _, c, _ in base)
    same_mix = set(run_cards) == set(base_cards) and all(
        run_cards[c] * len(base) == base_cards[c] * len(run) for c in run_cards)  # each card's share alike
    if same_mix:
        return None, "" if len(run_cards) < 2 else f"both arms on {_cards_text(run_cards)}"
    shared = [c for c in run_cards if c in base_cards]
    if not shared:
        return None, (f"no card in common (run: {_cards_text(run_cards)}; baseline: {_cards_text(base_cards)}): "
                      f"card and method confounded")
    card = max(shared, key=lambda c: (min(run_cards[c], base_cards[c]), c))
    return card, (f"cards mixed (run: {_cards_text(run_cards)}; baseline: {_cards_text(base_cards)}): "
                  f"compared on {card} alone")


def _std(values: Sequence[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    return (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5


def accuracy_comparison(row: Mapping[str, Any], base: Mapping[str, Any], metric: str,
                        margin: float = stats.DEFAULT_MARGIN) -> dict[str, Any]:
    """`{metric}_…` fields of `row` against `base`: delta, interval (95% Welch half-width; None with a side of one
    seed), df, lower (one-sided 95% bound), verdict, seeds_needed (per arm, for an inconclusive one),
    sampling_interval (top-1 of one seed a side: the 95% half-width from the validation videos alone), compared
    ('3 v 3 on H200'), cards (a note where the arms' cards differ)."""
    key = f"{metric}_"
    run_seeds, base_seeds = _per_seed(row, metric), _per_seed(base, metric)
    if not run_seeds or not base_seeds:
        return {f"{key}{k}": None for k in ("delta", "delta_interval", "delta_df", "delta_lower", "verdict",
                                             "seeds_needed", "sampling_interval", "compared", "cards")}
    card, cards_note = _one_card(run_seeds, base_seeds)
    run_v = [v for _, c, v in run_seeds if card is None or c == card]
    base_v = [v for _, c, v in base_seeds if card is None or c == card]
    diff = stats.welch_difference(run_v, base_v)
    if card is not None:
        everything = stats.welch_difference([v for *_, v in run_seeds], [v for *_, v in base_seeds])
        cards_note += f"; all seeds: {_difference_text(everything)}"
    word = stats.verdict_word(diff, margin)
    sampling = None
    if metric == "top1" and not diff.has_interval and diff.n_run == 1 and diff.n_base == 1:
        sampling = stats.binomial_interval(run_v[0], row.get("videos"), base_v[0], base.get("videos"))
    needed = (stats.seeds_to_decide(diff, _std(run_v), _std(base_v), margin) if word == stats.INCONCLUSIVE
              else None)
    where = f" on {card}" if card else ""
    return {f"{key}delta": diff.delta, f"{key}delta_interval": diff.half_width, f"{key}delta_df": diff.df,
            f"{key}delta_lower": diff.lower, f"{key}verdict": word, f"{key}seeds_needed": needed,
            f"{key}sampling_interval": sampling, f"{key}compared": f"{diff.n_run} v {diff.n_base}{where}",
            f"{key}cards": cards_note}


def _difference_text(diff: stats.Difference) -> str:
    if not diff.has_interval:
        return f"{diff.delta:+.2f} ({diff.n_run} v {diff.n_base} seeds, no interval)"
    return f"{diff.delta:+.2f} ± {diff.half_width:.2f} (df {diff.df:.1f}, {diff.n_run} v {diff.n_base} seeds)"


def speedup_interval(row: Mapping[str, Any], base: Mapping[str, Any]) -> dict[str, Any]:
    """The geometric mean of the per-seed same-card speedups with its 95% interval, and how many pairs."""
    def side(r: Mapping[str, Any]) -> dict[str, Any]:
        return {"seeds": r.get("seed_list") or [], "train_s": r.get("train_s_values") or [],
                "gpus": r.get("gpu_list") or []}

    ratio = stats.paired_ratio(stats.same_card_ratios(side(row), side(base)))
    if ratio is None:
        return {"speedup_pairs": None, "speedup_paired": None, "speedup_low": None, "speedup_high": None,
                "speedup_range": None}
    text = (f"{ratio.value:.2f}× (1 pair)" if ratio.low is None else
            f"{ratio.low:.2f}–{ratio.high:.2f}× ({ratio.pairs} pairs)")
    return {"speedup_pairs": ratio.pairs, "speedup_paired": ratio.value, "speedup_low": ratio.low,
            "speedup_high": ratio.high, "speedup_range": text}
