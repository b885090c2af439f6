"""The statistics behind a verdict (harness.report.stats) against independent computations and cases whose answer
is known."""

from __future__ import annotations

import math

import pytest
from scipy import stats as scipy_stats

from harness.report import stats


@pytest.mark.parametrize(("run", "base"), [([72.6, 70.1, 74.0, 73.7], [73.8, 74.2, 73.1, 74.1]),
                                           ([80.0, 84.0], [90.0, 92.0, 94.0]), ([1.0, 2.0, 4.0], [1.5, 1.6])])
def test_welchs_interval_is_scipys_welch_t_test_interval(run, base):
    diff = stats.welch_difference(run, base)
    result = scipy_stats.ttest_ind(run, base, equal_var=False)
    ci = result.confidence_interval(0.95)
    assert diff.df == pytest.approx(result.df)
    assert diff.delta - diff.half_width == pytest.approx(ci.low)
    assert diff.delta + diff.half_width == pytest.approx(ci.high)
    one_sided = scipy_stats.ttest_ind(run, base, equal_var=False, alternative="greater").confidence_interval(0.95)
    assert diff.lower == pytest.approx(one_sided.low)


def test_one_seed_a_side_has_no_interval():
    diff = stats.welch_difference([70.0], [71.0, 72.0])
    assert diff.delta == pytest.approx(-1.5) and not diff.has_interval and diff.df is None
    assert stats.verdict_word(diff) == stats.INCONCLUSIVE


@pytest.mark.parametrize(("lower", "upper", "margin", "word"), [
    (0.2, 2.0, 1.0, stats.BETTER),          # shown above the baseline
    (-0.5, 0.5, 1.0, stats.WITHIN),         # the lower bound clears −δ
    (-0.9, -0.1, 1.0, stats.WITHIN),        # below the baseline, but shown within the margin
    (-3.0, -1.5, 1.0, stats.WORSE),         # shown to lose more than δ
    (-2.0, 0.5, 1.0, stats.INCONCLUSIVE),   # reaches past −δ: not shown within, not shown worse
    (-1.5, -0.5, 1.0, stats.INCONCLUSIVE),  # below 0 for sure, but not shown beyond −δ
    (-1.5, -0.5, 2.0, stats.WITHIN),        # the same interval at a wider margin
])
def test_verdict_words_follow_the_margin_rule(lower, upper, margin, word):
    diff = stats.Difference((lower + upper) / 2, 4, 4, (upper - lower) / 2, 6.0, lower, upper)
    assert stats.verdict_word(diff, margin) == word


def test_seeds_to_decide_is_the_smallest_count_whose_bound_clears_the_margin():
    diff = stats.welch_difference([72.6, 70.1, 74.0, 73.7], [73.8, 74.2, 73.1, 74.1])
    s_run, s_base = 1.6, 0.5
    n = stats.seeds_to_decide(diff, s_run, s_base)
    distance = abs(diff.delta + 1.0)

    def half(k):
        v = (s_run ** 2 + s_base ** 2) / k
        df = (v ** 2) / ((s_run ** 4 + s_base ** 4) / k ** 2 / (k - 1))
        return scipy_stats.t.ppf(0.95, df) * math.sqrt(v)

    assert half(n) < distance <= half(n - 1)
    # A difference well away from −δ needs few seeds; one on −δ cannot be decided.
    assert stats.seeds_to_decide(stats.Difference(-5.0, 1, 1), 0.5, 0.5) == 2
    assert stats.seeds_to_decide(stats.Difference(-1.0, 3, 3), 1.0, 1.0) is None
    assert stats.seeds_to_decide(stats.Difference(0.0, 1, 1), None, None) is None


def test_paired_ratio_is_a_t_interval_on_the_logarithms():
    ratio = stats.paired_ratio([2.4, 2.5, 2.6])
    logs = [math.log(r) for r in (2.4, 2.5, 2.6)]
    mean = sum(logs) / 3
    sd = math.sqrt(sum((v - mean) ** 2 for v in logs) / 2)
    half = scipy_stats.t.ppf(0.975, 2) * sd / math.sqrt(3)
    assert ratio.value == pytest.approx(math.exp(mean)) and ratio.pairs == 3
    assert ratio.low == pytest.approx(math.exp(mean - half)) and ratio.high == pytest.approx(math.exp(mean + half))
    assert stats.paired_ratio([2.0]).low is None and stats.paired_ratio([]) is None


def test_same_card_ratios_pair_seeds_that_ran_on_one_card():
    run = {"seeds": [0, 1, 2], "train_s": [40.0, 50.0, 30.0], "gpus": ["A", "A", "B"]}
    base = {"seeds": [0, 1, 2], "train_s": [100.0, 110.0, 90.0], "gpus": ["A", "B", "B"]}
    assert stats.same_card_ratios(run, base) == [pytest.approx(2.5), pytest.approx(3.0)]


def test_time_to_accuracy_interpolates_and_says_where_it_is_a_bound():
    curve = [(100.0, 60.0), (200.0, 70.0), (400.0, 75.0)]
    assert stats.time_to_accuracy(curve, 65.0) == (pytest.approx(150.0), "")
    assert stats.time_to_accuracy(curve, 50.0) == (100.0, "at most")
    assert stats.time_to_accuracy(curve, 80.0) == (math.inf, "never")


def test_equal_accuracy_speedup_is_reproducible_and_brackets_its_value():
    curve = [[(100.0, 60.0), (105.0, 61.0)], [(200.0, 70.0), (190.0, 71.0), (210.0, 69.5)]]
    run = [(50.0, 65.0), (52.0, 66.0)]
    a, b = stats.equal_accuracy_speedup(curve, run), stats.equal_accuracy_speedup(curve, run)
    assert a == b and a.low <= a.value <= a.high and a.bound == ""
    assert stats.equal_accuracy_speedup(curve[:1], run) is None
