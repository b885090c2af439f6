"""Rows of the report's tables for the report tests: one found by its fields, and runs-table rows made by hand."""

from __future__ import annotations


def row_where(table, **match):
    """The first row of `table` whose fields have the values in `match`."""
    return next(r for r in table.rows if all(r.get(k) == v for k, v in match.items()))


def runs(*points):
    """Runs-table rows: (method, epochs, epochs_x, top1, train_s), top1 a score or a list of the seeds' scores."""
    rows = []
    for m, e, x, a, t in points:
        scores = list(a) if isinstance(a, (list, tuple)) else [a]
        rows.append({"status": "ok", "kind": "baseline" if m == "baseline" else "multigrid", "method": m,
                     "epochs": e, "epochs_x": x, "variant": f"{m}_{x}", "top1": sum(scores) / len(scores),
                     "top1_values": scores, "train_s": t, "train_s_values": [t] * len(scores),
                     "seed_list": list(range(len(scores))), "gpu_list": ["H200"] * len(scores), "videos": 2000,
                     "seeds": len(scores)})
    return rows
