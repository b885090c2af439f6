"""The overview (harness.report.overview): with no profile records its predicted column says why it is empty."""

from __future__ import annotations

from harness.report.overview import overview_cells


def test_an_overview_without_profiles_says_so():
    """Results with no profile record beside them (a folder of runs of another setting) leave the predicted
    column empty and say why, rather than naming an unknown GPU."""
    row = {"table": "5", "paper_row": "baseline", "variant": "baseline", "scale": "proxy", "speedup": 1.0}
    _, note = overview_cells([row])
    assert "no `harness profile` record" in note and "?" not in note
    _, note = overview_cells([{**row, "predicted_gpu": "Card X", "predicted_speedup": 2.0}])
    assert "on one Card X" in note
