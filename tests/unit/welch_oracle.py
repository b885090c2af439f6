"""Welch's interval re-stated from its definition, for checking the report's comparisons against."""

from __future__ import annotations

import math


def welch(a, b):
    """Welch's interval written out from its definition, independently of the harness."""
    from statistics import mean, variance

    from scipy.stats import t
    va, vb = variance(a) / len(a), variance(b) / len(b)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return mean(a) - mean(b), t.ppf(0.975, df) * math.sqrt(va + vb), df
