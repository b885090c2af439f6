"""Tables as a smoke-scale report shows them: runs of seconds, whose wall-clock speedups fixed costs and noise
decide, lead with the iteration and FLOP ratios and label the speedup not indicative."""

from __future__ import annotations

from harness.report.table_model import Column, Table

SMOKE_SPEEDUP_LABEL = "wall-clock speedup (not indicative at smoke scale)"
SMOKE_NOTE = ("Smoke scale: the × fewer iters and × fewer FLOPs ratios are what multigrid saves here. Wall-clock "
              "speedups are not indicative at this size: runs take seconds, so fixed per-run costs (start-up, "
              "loading, Python) and machine noise dominate them, and they can land far from the iteration ratio in "
              "either direction. Proxy and paper scales measure speedup.")


def smoke_view(table: Table) -> Table:
    """`table` as a smoke-scale report shows it: the FLOP ratio shown right after the iteration ratio (the
    headline), every wall-clock speedup column after them and labelled not indicative, and a note saying why.
    A table without a measured speedup is returned as it is; the rows (and so the CSV) are unchanged."""
    if not any(c.key == "speedup" for c in table.columns):
        return table
    columns: list[Column] = []
    for c in table.columns:
        if c.key == "flops_ratio":
            continue
        if c.key == "speedup":
            c = Column(c.key, SMOKE_SPEEDUP_LABEL, c.kind, c.paper, c.show)
        columns.append(c)
        if c.key == "iteration_ratio":
            columns.append(Column("flops_ratio", "× fewer FLOPs", "ratio"))
    ratios = [i for i, c in enumerate(columns) if c.key in ("iteration_ratio", "flops_ratio")]
    speed = next(i for i, c in enumerate(columns) if c.key == "speedup")
    if ratios and speed < max(ratios):  # wall-clock after the ratios
        columns.insert(max(ratios), columns.pop(speed))
    return Table(table.id, table.title, tuple(columns), table.rows, (SMOKE_NOTE, *table.notes))
