"""Smoke-scale reports lead with the iteration and FLOP ratios and mark wall-clock speedup not indicative."""

from __future__ import annotations

from .report_records import PAPER, SUITE, make_record


def test_smoke_scale_leads_with_the_ratios_and_marks_wall_clock_speedup_not_indicative():
    """Seconds-long smoke runs are dominated by fixed costs and noise: their wall-clock speedup misleads."""
    from harness.report.page import build_report, runs_text
    from harness.report.smoke_view import SMOKE_SPEEDUP_LABEL

    def records(scale):
        return [make_record("baseline", kind="baseline", train_s=100.0, iterations=64, gflops=8.0, scale=scale),
                make_record("multigrid", train_s=4.0, iterations=20, gflops=2.0, scale=scale)]

    header, _, mg = runs_text(SUITE, records("smoke")).splitlines()[1:4]
    labels = ["× fewer iters", "× fewer FLOPs", "wall-clock speedup*"]
    assert all(label in header for label in labels)
    assert [header.index(label) for label in labels] == sorted(header.index(label) for label in labels)
    assert "3.20×" in mg and "4.00×" in mg and "25.00×" in mg  # iterations, FLOPs, then the wall-clock ratio
    assert "not indicative" in runs_text(SUITE, records("smoke"))
    html, tables = build_report(SUITE, records("smoke"), PAPER)
    assert SMOKE_SPEEDUP_LABEL in html and "speedups are meaningful" not in html
    for table in (t for t in tables if t.id in ("1a", "runs")):
        keys = [c.key for c in table.columns if c.show]
        assert keys.index("iteration_ratio") < keys.index("flops_ratio") < keys.index("speedup")
        assert table.notes[0].startswith("Smoke scale:")
    # Proxy (and paper) scale: unchanged.
    text = runs_text(SUITE, records("proxy"))
    assert "not indicative" not in text and "× fewer FLOPs" not in text.splitlines()[1]
    html, tables = build_report(SUITE, records("proxy"), PAPER)
    assert SMOKE_SPEEDUP_LABEL not in html and "not indicative" not in html
    table_1a = next(t for t in tables if t.id == "1a")
    assert next(c for c in table_1a.columns if c.key == "speedup").label == "speedup"
