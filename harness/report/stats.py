"""The statistics of a verdict, pure: a difference of mean accuracies over seeds with Welch's t-interval, the word
a declared margin gives it, the seeds per arm that would decide an open comparison, and speedups with intervals
(per-seed same-card ratios; time to the same accuracy on the baseline's time–accuracy curve).

Conventions. Intervals are 95%. "Keeps the baseline's accuracy" is a non-inferiority claim at a margin δ declared
before looking (CONSORT's extension for non-inferiority trials, Piaggio et al., JAMA 2012): it holds when the
one-sided 95% lower bound of the difference (the lower end of the two-sided 90% interval, as in TOST) lies above
−δ. A side with one seed has no spread to estimate, so its comparison has no seed interval and stays open.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

LEVEL = 0.95
DEFAULT_MARGIN = 1.0  # points of top-1 (or mAP): the loss a user would still call "the same accuracy"
MAX_SEEDS = 200  # seeds per arm beyond which "would decide it" is reported as more than this

BETTER, WITHIN, WORSE, INCONCLUSIVE = "better", "within δ", "worse", "inconclusive"
VERDICTS = (BETTER, WITHIN, WORSE, INCONCLUSIVE)


@dataclass(frozen=True)
class Difference:
    """A run's mean minus its baseline's over seeds. `half_width` is the two-sided 95% Welch interval's, `df` its
    Welch–Satterthwaite degrees of freedom, `lower`/`upper` the one-sided 95% bounds; all None where a side has
    fewer than two seeds."""

    delta: float
    n_run: int
    n_base: int
    half_width: float | None = None
    df: float | None = None
    lower: float | None = None
    upper: float | None = None

    @property
    def has_interval(self) -> bool:
        return self.half_width is not None


def _half_width(se: float, df: float, level: float) -> float:
    """Half-width of the two-sided `level` t-interval."""
    return float(stats.t.ppf(0.5 + level / 2, df)) * se


def combination_interval(terms: Sequence[tuple[float, Sequence[float]]]) -> Difference:
    """Σ cᵢ·mean(xᵢ) over independent samples with its t-interval: variance Σ cᵢ²·sᵢ²/nᵢ, degrees of freedom by
    Welch–Satterthwaite (Welch's interval is the case 1·run − 1·base; a point against a baseline curve
    interpolated between two of its runs is another). No interval where a sample with a weight has one value."""
    terms = [(float(c), [float(v) for v in xs]) for c, xs in terms if c != 0]
    value = float(sum(c * np.mean(xs) for c, xs in terms))
    counts = [len(xs) for _, xs in terms]
    n_first, n_rest = (counts[0], min(counts[1:])) if len(counts) > 1 else (counts[0], counts[0])
    if min(counts) < 2:
        return Difference(value, n_first, n_rest)
    parts = [c * c * np.var(xs, ddof=1) / len(xs) for c, xs in terms]
    se = math.sqrt(sum(parts))
    if se == 0.0:  # identical scores within each sample: no spread, the value is exact
        return Difference(value, n_first, n_rest, 0.0, math.inf, value, value)
    df = float(sum(parts) ** 2 / sum(v * v / (len(xs) - 1) for v, (_, xs) in zip(parts, terms)))
    one_sided = _half_width(se, df, 1 - 2 * (1 - LEVEL))  # the one-sided 95% bound is the 90% interval's end
    return Difference(value, n_first, n_rest, _half_width(se, df, LEVEL), df, value - one_sided, value + one_sided)


def welch_difference(run: Sequence[float], base: Sequence[float]) -> Difference:
    """mean(run) − mean(base) with Welch's t-interval: unequal variances, Welch–Satterthwaite degrees of freedom,
    the t quantile from SciPy."""
    return combination_interval([(1.0, run), (-1.0, base)])


def verdict_word(diff: Difference, margin: float = DEFAULT_MARGIN) -> str:
    """better (lower bound above 0), within δ (above −δ), worse (upper bound below −δ), else inconclusive."""
    if diff.lower is None or diff.upper is None:
        return INCONCLUSIVE
    if diff.lower > 0:
        return BETTER
    if diff.lower > -margin:
        return WITHIN
    if diff.upper < -margin:
        return WORSE
    return INCONCLUSIVE


def seeds_to_decide(diff: Difference, std_run: float | None, std_base: float | None,
                    margin: float = DEFAULT_MARGIN) -> int | None:
    """Seeds per arm (the same number in both) at which, with the spreads observed and the difference as it is,
    the one-sided 95% bound would clear −δ on the difference's side of it: n ≈ 2·(t·s/h)², iterated since t
    depends on n. An arm of one seed borrows the other's spread; None where neither has one or the difference
    sits on −δ itself."""
    spreads = [s for s in (std_run, std_base) if s is not None and math.isfinite(s)]
    if not spreads:
        return None
    s_run = std_run if std_run is not None else spreads[0]
    s_base = std_base if std_base is not None else spreads[0]
    distance = abs(diff.delta + margin)
    if distance == 0:
        return None
    variance = s_run ** 2 + s_base ** 2
    if variance == 0:
        return 2
    for n in range(2, MAX_SEEDS + 1):
        df = variance ** 2 / ((s_run ** 4 + s_base ** 4) / (n - 1)) if s_run and s_base else n - 1
        if float(stats.t.ppf(LEVEL, df)) * math.sqrt(variance / n) < distance:
            return n
    return MAX_SEEDS + 1


def binomial_interval(top1_run: float, videos_run: int | None, top1_base: float,
                      videos_base: int | None) -> float | None:
    """Half-width of the 95% interval of a difference of two single top-1 scores from their validation videos
    alone (binomial, normal approximation): the sampling of videos, not the spread over seeds."""
    if not videos_run or not videos_base:
        return None

    def var(p: float, n: int) -> float:
        p = min(max(p / 100, 0.0), 1.0)
        return p * (1 - p) / n

    return 100 * float(stats.norm.ppf(0.5 + LEVEL / 2)) * math.sqrt(var(top1_run, int(videos_run))
                                                                   + var(top1_base, int(videos_base)))


@dataclass(frozen=True)
class Ratio:
    """A speedup: geometric mean of per-seed ratios, with its 95% t-interval on the log scale over `pairs`
    (None with fewer than two)."""

    value: float
    pairs: int
    low: float | None = None
    high: float | None = None


def paired_ratio(ratios: Sequence[float]) -> Ratio | None:
    """Per-seed same-card speedups (baseline time over run time) as one ratio with its interval."""
    logs = [math.log(r) for r in ratios if r > 0 and math.isfinite(r)]
    if not logs:
        return None
    mean = float(np.mean(logs))
    if len(logs) < 2:
        return Ratio(math.exp(mean), 1)
    half = float(stats.t.ppf(0.5 + LEVEL / 2, len(logs) - 1)) * float(np.std(logs, ddof=1)) / math.sqrt(len(logs))
    return Ratio(math.exp(mean), len(logs), math.exp(mean - half), math.exp(mean + half))


def same_card_ratios(run: Mapping[str, Sequence], base: Mapping[str, Sequence]) -> list[float]:
    """Baseline time over run time for every seed both arms ran on the same card. Each side maps `seeds`,
    `train_s` and `gpus` to lists aligned by run; reruns of one seed on one card are averaged first."""
    def by_seed_card(side: Mapping[str, Sequence]) -> dict[tuple, float]:
        times: dict[tuple, list[float]] = {}
        for seed, seconds, gpu in zip(side.get("seeds") or (), side.get("train_s") or (), side.get("gpus") or ()):
            if isinstance(seconds, (int, float)) and 0 < seconds < math.inf:
                times.setdefault((seed, gpu), []).append(float(seconds))
        return {key: float(np.mean(v)) for key, v in times.items()}

    run_t, base_t = by_seed_card(run), by_seed_card(base)
    return [base_t[key] / run_t[key] for key in sorted(run_t, key=str) if key in base_t]


def time_to_accuracy(curve: Sequence[tuple[float, float]], target: float) -> tuple[float, str]:
    """Seconds the baseline needs to reach `target` on its time–accuracy curve ((seconds, accuracy) points in
    order of time, linear between them; the first crossing counts), with how far that is known: "" (reached
    between two runs), "at most" (the shortest run already reaches it: no faster run was made) or "never" (no
    run reaches it; inf)."""
    points = sorted(curve)
    if points[0][1] >= target:
        return points[0][0], "at most"
    for (t0, a0), (t1, a1) in itertools.pairwise(points):
        if a0 < target <= a1:
            return t0 + (t1 - t0) * (target - a0) / (a1 - a0), ""
    return math.inf, "never"


@dataclass(frozen=True)
class EqualAccuracy:
    """Speedup at equal accuracy: the baseline's time to the run's accuracy over the run's time (`bound`: "at
    most" or "never" as `time_to_accuracy` says; "never" is inf), with the 2.5 and 97.5 percentiles of a
    bootstrap over seeds."""

    value: float
    bound: str
    low: float
    high: float
    resamples: int


Seed = tuple[float, float]  # one seed's (training seconds, accuracy)


def equal_accuracy_speedup(curve: Sequence[Sequence[Seed]], run: Sequence[Seed],
                           resamples: int = 2000) -> EqualAccuracy | None:
    """`curve`: per baseline length its seeds; `run`: the run's seeds. Each sample's seeds are resampled with
    replacement (a point of one seed stays fixed), its times and accuracies together; the generator's seed is
    fixed so a report's bytes are reproducible. SciPy's `bootstrap` needs two observations per sample, which most
    curve points lack."""
    curve = [list(point) for point in curve if point]
    if len(curve) < 2 or not run:
        return None

    def speedup(points: Sequence[Seed], ours: Seed) -> tuple[float, str]:
        seconds, bound = time_to_accuracy(points, ours[1])
        return seconds / ours[0], bound

    def mean(seeds: Sequence[Seed]) -> Seed:
        return float(np.mean([s[0] for s in seeds])), float(np.mean([s[1] for s in seeds]))

    value, bound = speedup([mean(p) for p in curve], mean(run))
    rng = np.random.default_rng(0)

    def resample(seeds: Sequence[Seed]) -> Seed:
        return mean([seeds[i] for i in rng.integers(0, len(seeds), len(seeds))])

    draws = [speedup([resample(p) for p in curve], resample(run))[0] for _ in range(resamples)]
    # an order statistic, not an interpolation: draws may be inf (never reached)
    low, high = np.percentile(draws, [100 * (1 - LEVEL) / 2, 100 * (1 + LEVEL) / 2], method="inverted_cdf")
    return EqualAccuracy(value, bound, float(low), float(high), resamples)
