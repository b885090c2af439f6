"""A suite's runs timed on different GPU models, put on one card's time scale.

Wall-clock speedup compares two runs on the same card. When a suite's runs were recorded on two GPU models (the
seeds of the verdict on one, further runs later on another), each card that also ran the suite's 1.0× baseline
gets a factor: the reference card's mean baseline time over this card's. A run's time times that factor is its
time in reference-card seconds, and its speedup (the reference baseline's time over the scaled time) equals its
baseline time over its own time on its own card: the ratio stays a same-card measurement, only the seconds shown
are converted. A seed on a card without a baseline record of its own has no time to compare: where other seeds of
the same run are timed, its accuracy still counts (a seed scores the same way on any card) and its training time is
left empty; a run with no timed seed at all cannot be compared and is left out.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from harness.provenance import provenance_of
from harness.results import seeds_key

CPU = "CPU"


def gpu_of(record: Mapping[str, Any]) -> str:
    """The record's GPU model, or 'CPU' for a run without one."""
    if ((record.get("spec") or {}).get("train") or {}).get("device") == "cpu":
        return CPU
    return str(provenance_of(record)["hardware"].get("gpu") or CPU)


def _train_s(record: Mapping[str, Any]) -> float | None:
    """The record's train time; None where it measured none (absent, 0, or not finite in an edited record), which
    would otherwise divide the times of other cards' runs by zero."""
    value = (record.get("measured") or {}).get("train_s")
    return float(value) if isinstance(value, (int, float)) and 0 < value < math.inf else None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def on_one_card(records: Sequence[Mapping[str, Any]], is_baseline: Callable[[Mapping[str, Any]], bool],
                group: Callable[[Mapping[str, Any]], Hashable]) -> tuple[list[Mapping[str, Any]], list[str]]:
    """`records` (one scale and setup) with every time on the reference card's scale: the card that ran most of
    them. `is_baseline` tells the 1.0× baseline runs, `group` which baseline a run is compared with (recipe,
    model, clip shape). Returns (records, notes); a converted record keeps its own seconds under
    `time_scale.train_s` beside the card and factor (None: no same-card baseline, so no time in `measured`)."""
    cards = Counter(gpu_of(r) for r in records)
    if len(cards) < 2:
        return list(records), []
    reference = cards.most_common(1)[0][0]
    base_s: dict[tuple[str, Hashable], float] = {}
    base_n: dict[tuple[str, Hashable], int] = {}
    for card in cards:
        for key in {group(r) for r in records}:
            times = [t for r in records if gpu_of(r) == card and group(r) == key and is_baseline(r)
                     and (t := _train_s(r)) is not None]
            if times:
                base_s[card, key], base_n[card, key] = _mean(times), len(times)
    out, notes, factors, basis = [], [], {}, {}
    for r in records:
        card, key = gpu_of(r), group(r)
        if card == reference:
            out.append(r)
            continue
        comparable = (card, key) in base_s and (reference, key) in base_s and _train_s(r) is not None
        factor = base_s[reference, key] / base_s[card, key] if comparable else None
        if comparable:
            factors[card] = factor
            basis[card] = (base_n[reference, key], base_n[card, key])
        measured = {**(r.get("measured") or {}), "train_s": _train_s(r) * factor if comparable else None}
        out.append({**r, "measured": measured,
                    "time_scale": {"gpu": card, "to_gpu": reference, "factor": factor, "train_s": _train_s(r)}})
    def run_of(r: Mapping[str, Any]) -> tuple[Any, str]:  # the seeds of one run share its variant and settings
        return r.get("variant"), seeds_key(r.get("spec") or {})

    timed = {run_of(r) for r in out if _train_s(r) is not None}
    for r in [r for r in out if _train_s(r) is None and "time_scale" in r]:
        where = (f"{r.get('_source', r.get('run_id'))}: run on {gpu_of(r)}, which has no 1.0× baseline record of "
                 f"its own to compare its time with (the other runs are on {reference})")
        if run_of(r) in timed:
            notes.append(f"{where}: its accuracy counts among the run's seeds, its training time is left out")
        else:
            out.remove(r)
            notes.append(f"{where}, and no seed of the run is timed on a card with one: left out")
    for card, factor in sorted(factors.items()):
        count = sum(1 for r in out if gpu_of(r) == card)
        on_reference, on_card = basis[card]
        notes.append(f"{count} run(s) trained on {card}: their times are shown in {reference} seconds, scaled by "
                     f"{factor:.3f}, the ratio of the 1.0× baseline's mean time on {reference} ({on_reference} "
                     f"run(s)) to that on {card} ({on_card} run(s)). So each speedup is its own card's (baseline "
                     f"time over run time on {card}).")
    return out, notes
