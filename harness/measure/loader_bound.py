"""Predictions that include the loader: an iteration takes max(step time, time to load its clips).

`harness profile` times the steps on random clips, so by itself it predicts the compute only. Given how fast a
training process's loader delivers clips at each shape (measured by `harness data bench`, or one rate for
every shape), each planned iteration costs max(step time, per-GPU batch / loader clips/s): the loader and the
step overlap (workers prefetch), and whichever is slower sets the pace. Multigrid's coarse shapes consume many
more clips per second than the baseline's, so a loader that keeps up with the baseline can cap multigrid.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.schedule import Plan
from harness.schedule.trained import ShapeKey, iterations_by_shape
from harness.spec import SpecError


@dataclass(frozen=True)
class LoaderRates:
    """Clips/s one training process's loader delivers at each (t, s), or `everywhere` at every shape."""

    source: str  # what the rates come from, for the record
    by_shape: dict[tuple[int, int], float] = field(default_factory=dict)
    everywhere: float | None = None

    def at(self, t: int, s: int) -> float:
        if self.everywhere is not None:
            return self.everywhere
        if (t, s) not in self.by_shape:
            known = ", ".join(f"{t_}x{s_}" for t_, s_ in sorted(self.by_shape)) or "none"
            raise SpecError(f"{self.source} has no loader rate at t={t}, s={s} (it has {known}): run "
                            f"`harness data bench` with the recipe and scale that you profile, or give --data RATE.")
        return self.by_shape[(t, s)]

    def to_dict(self) -> dict[str, Any]:
        if self.everywhere is not None:
            return {"source": self.source, "clips_per_s": self.everywhere}
        return {"source": self.source, "shapes": [{"t": t, "s": s, "clips_per_s": r}
                                                  for (t, s), r in sorted(self.by_shape.items())]}


def _positive(rate: object, where: str) -> float:
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate) or rate <= 0:
        raise SpecError(f"{where}: a loader rate must be a positive number of clips/s, got {rate!r}.")
    return float(rate)


def _shape_rows(rows: object, source: str) -> list[dict[str, Any]]:
    """`rows` (a record's list of shapes), each an object with integer 't' and 's'; SpecError naming `source`
    otherwise (a record edited by hand or of another tool, which would end in a traceback)."""
    if not isinstance(rows, list):
        raise SpecError(f"{source} is not a `harness data bench` record: its 'shapes' is no list. Give the file "
                        f"that `harness data bench --out` wrote, or a rate in clips/s.")
    for r in rows:
        if not isinstance(r, dict) or not all(isinstance(r.get(k), int) and not isinstance(r.get(k), bool)
                                              for k in ("t", "s")):
            raise SpecError(f"{source} is not a `harness data bench` record: the shape {json.dumps(r)[:80]} has no "
                            f"integer 't' and 's'. Give the file that `harness data bench --out` wrote, or a rate "
                            f"in clips/s.")
    return rows


def rates_from_bench(record: dict[str, Any], source: str, path: str | None = None) -> LoaderRates:
    """The loader rates of a `harness data bench` record.

    Records with `paths[]` (one entry per loader path, each with `shapes[].t/s/clips_per_s`) give the path named
    `path` (default: the first). Records with one loader give, per shape, the best `loader_clips_per_s` over the
    worker counts measured, or with `path="cache"` the best `cache_loader_clips_per_s`."""
    if not isinstance(record, dict) or not isinstance(record.get("paths", record.get("shapes")), list):
        raise SpecError(f"{source} is not a `harness data bench` record (no 'paths' or 'shapes' list).")
    if "paths" in record:
        paths = {p["name"]: p for p in record["paths"] if isinstance(p, dict) and isinstance(p.get("name"), str)}
        name = path or next(iter(paths), None)
        if name not in paths:
            raise SpecError(f"{source} has no loader path {name!r}; it has {', '.join(map(str, paths)) or 'none'}. "
                            f"Name one as FILE:PATH.")
        label = f"{source}:{name}"
        rows = [(r["t"], r["s"], r.get("clips_per_s")) for r in _shape_rows(paths[name].get("shapes", []), label)]
    else:
        column = {None: "loader_clips_per_s", "cache": "cache_loader_clips_per_s"}.get(path)
        if column is None:
            raise SpecError(f"{source} measured one loader (and maybe its frame cache): use {source} or "
                            f"{source}:cache, not :{path}.")
        label = source if path is None else f"{source}:{path}"
        rows = []
        for r in _shape_rows(record["shapes"], source):
            by_workers = r.get(column)
            if not isinstance(by_workers, dict) or not by_workers:
                raise SpecError(f"{source} has no '{column}' at t={r.get('t')}, s={r.get('s')}"
                                + (": it was measured without a frame cache." if path == "cache" else "."))
            where = f"{label} at t={r['t']}, s={r['s']}"
            rows.append((r["t"], r["s"], max(_positive(rate, where) for rate in by_workers.values())))
    return LoaderRates(label, {(t, s): _positive(rate, f"{label} at t={t}, s={s}") for t, s, rate in rows})


def load_rates(text: str) -> LoaderRates:
    """`--data` of `harness profile`: a number of clips/s for every shape, or FILE[:PATH] of a data bench record."""
    try:
        rate = float(text)
    except ValueError:
        rate = None
    if rate is not None:
        return LoaderRates(f"{text} clips/s", everywhere=_positive(rate, "--data"))
    file, _, path = text.partition(":") if not Path(text).exists() else (text, "", "")
    try:
        record = json.loads(Path(file).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpecError(f"--data {text}: no such file. Give a `harness data bench --out` record or a rate in "
                        f"clips/s.") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SpecError(f"--data {text}: cannot read {file} as JSON ({e}).") from None
    return rates_from_bench(record, file, path or None)


def require_rates(rates: LoaderRates | None, keys: object) -> None:
    """Raise SpecError unless `rates` (if given) has a rate at every (t, s, ...) in `keys`: before any timing."""
    for t, s, *_ in keys if rates is not None else ():
        rates.at(t, s)


def loader_bound_seconds(plan: Plan, step_ms: dict[ShapeKey, float], rates: LoaderRates) -> float:
    """The plan's wall-clock per GPU when every iteration takes max(step, loading its per-GPU batch)."""
    return sum(n * max(step_ms[key] / 1e3, key[2] / rates.at(key[0], key[1]))
               for key, n in iterations_by_shape(plan).items())


def loader_bound_shapes(plan: Plan, step_ms: dict[ShapeKey, float], rates: LoaderRates) -> list[dict[str, Any]]:
    """Per planned shape: the step's and the loader's time per iteration, and which of them sets the pace."""
    rows = []
    for key, n in sorted(iterations_by_shape(plan).items()):
        t, s, batch, _ = key
        step_s, load_s = step_ms[key] / 1e3, batch / rates.at(t, s)
        rows.append({"t": t, "s": s, "batch": batch, "iterations": n, "step_s": step_s, "load_s": load_s,
                     "bound": "loader" if load_s > step_s else "step"})
    return rows
