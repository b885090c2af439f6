"""What a report is made of: the suite definition, the paper's rows and the run records.

Parsing is pure (`suite_from_mapping`, `select_records`); the `load_*` functions are the I/O edge.
The report parses suite YAML with `harness.suite.suite_from_mapping` but skips the runner's checks, so
that it renders whatever records exist, even for a suite whose recipes no longer compose.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.paths import suites_dir
from harness.provenance import provenance_of
from harness.records import incomplete_reason, read_run_record
from harness.report.baselines import baseline_key, is_plain_baseline
from harness.report.cards import gpu_of, on_one_card
from harness.report.provenance_table import device_of
from harness.results import seeds_key
from harness.spec import SpecError, did_you_mean
from harness.suite import SuiteDef, read_yaml_mapping, suite_from_mapping


def _suite_folder(root: Path | None) -> Path:
    return (root or suites_dir()) / "experiments"


def suite_names(root: Path | None = None) -> list[str]:
    return sorted(p.stem for p in _suite_folder(root).glob("*.yaml"))


def load_suite_def(name: str, root: Path | None = None) -> SuiteDef:
    """Read suites/experiments/NAME.yaml."""
    path = _suite_folder(root) / f"{name}.yaml"
    if not path.is_file():
        names = suite_names(root)
        raise SpecError(f"Unknown suite '{name}'.{did_you_mean(name, names)} Suites: {', '.join(names)}.")
    return suite_from_mapping(name, read_yaml_mapping(path), path)


def load_records(folder: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Every record in `folder` (results/<suite>/) and its per-scale folders, each with its path relative to
    `folder` under '_source'; and the problems met (files left out, each named). Folders below a scale's hold
    records kept aside (runs of earlier settings, e.g. results/<suite>/proxy/epochs10_val400/) and are not read."""
    records, problems = [], []
    for path in sorted([*Path(folder).glob("*.json"), *Path(folder).glob("*/*.json")]):
        name = str(path.relative_to(folder))
        record, problem = read_run_record(path)
        if record is None:
            problems.append(f"{name}: {problem}, left out")
            continue
        records.append({**record, "_source": name})
    return records, problems


def record_scale(record: Mapping[str, Any]) -> str:
    return str((record.get("spec") or {}).get("scale") or "unknown")


class NoSuchSetup(ValueError):
    """No complete records of a suite ran on the GPU count asked for."""


def _world(record: Mapping[str, Any]) -> int:
    return int(record.get("world_size") or 1)


def record_setup(record: Mapping[str, Any]) -> str:
    """How a record's run executed, beyond its scale: processes, step mode and, where not the default, how
    sub-batch BN computed its groups and plain BN's kernels (timings differ between them)."""
    world = _world(record)
    step = str((record.get("step") or {}).get("mode") or "eager")
    train = (record.get("spec") or {}).get("train") or {}
    impl, plain = train.get("sub_batch_bn") or "auto", train.get("plain_bn_impl") or "cudnn"
    setup = f"{world} GPU{'s' if world > 1 else ''}, {step} steps"
    setup += "" if impl == "auto" else f", sub-batch BN {impl}"
    return setup + ("" if plain == "cudnn" else f", plain BN {plain}")


def _usable(suite: SuiteDef, records: Iterable[Mapping[str, Any]], notes: list[str]) -> list[Mapping[str, Any]]:
    """Complete records of the suite's variants, newest first (the others noted)."""
    complete = []
    for r in records:
        if (why := incomplete_reason(r)) is not None:  # reproduce's rule too: such a run is redone
            notes.append(f"{r.get('_source', r.get('run_id'))}: {why}, left out")
        elif suite.run(str(r.get("variant"))) is None:
            notes.append(f"{r.get('_source', r.get('run_id'))}: variant {r.get('variant')!r} is not in the suite, "
                         f"left out")
        else:
            complete.append(r)
    return sorted(complete, key=lambda r: provenance_of(r)["date"] or "", reverse=True)


def records_by_setup(suite: SuiteDef, records: Iterable[Mapping[str, Any]],
                     scale: str) -> dict[str, dict[str, Mapping[str, Any]]]:
    """The newest complete record of every variant at `scale`, per setup (processes and step mode); setups in
    order of their newest record."""
    out: dict[str, dict[str, Mapping[str, Any]]] = {}
    for r in _usable(suite, records, []):
        if record_scale(r) == scale:
            out.setdefault(record_setup(r), {}).setdefault(str(r["variant"]), r)
    return out


def records_of_setup(suite: SuiteDef, records: Iterable[Mapping[str, Any]], scale: str,
                     setup: str | None) -> list[Mapping[str, Any]]:
    """Every complete record at `scale` run under `setup` (all seeds), newest first."""
    return [r for r in _usable(suite, records, []) if record_scale(r) == scale and record_setup(r) == setup]


def select_records(suite: SuiteDef, records: Iterable[Mapping[str, Any]], scale: str | None = None,
                   gpus: int | None = None) -> tuple[str | None, dict[str, Mapping[str, Any]], list[str]]:
    """Every complete run of each variant, its seeds and reruns combined (`combine_seeds`): of one scale
    (`scale`, else the newest record's) and one setup (processes and step mode: of those on `gpus` GPUs if given,
    the one with the most variants recorded, of those the newest), of the settings of the variant's newest.
    Raises NoSuchSetup when no setup ran on `gpus` GPUs.

    Mixing scales or setups would turn speedups into nonsense, so records of other scales or setups are left
    out of the main tables (and said so; `records_by_setup` feeds the table that compares setups).
    Returns (scale, {variant: record}, notes).
    """
    notes: list[str] = []
    complete = _usable(suite, records, notes)
    if scale is None and complete:
        scale = record_scale(complete[0])
    setups = records_by_setup(suite, complete, scale) if scale else {}
    newest_first = list(setups)
    if gpus is not None:
        newest_first = [s for s in newest_first if _world(next(iter(setups[s].values()))) == gpus]
        if not newest_first:
            raise NoSuchSetup(f"{suite.name}: no complete records run on {gpus} GPU(s) at {scale} scale; "
                             f"recorded setups: {', '.join(setups) or 'none'}")
    setup = max(newest_first, key=lambda s: (len(setups[s]), -newest_first.index(s)), default=None)
    # A variant's records of older settings are told apart before the cards are: the reason they are left out is
    # their settings, whatever card they ran on.
    newest_settings: dict[str, str] = {}
    shown, older = [], []
    for r in complete:
        if record_scale(r) == scale and record_setup(r) == setup:
            key = seeds_key(r.get("spec") or {})
            (shown if newest_settings.setdefault(str(r["variant"]), key) == key else older).append(r)
    in_setup, card_notes = on_one_card(shown, is_plain_baseline, baseline_key)
    notes.extend(card_notes)
    complete = [*in_setup, *older, *(r for r in complete if record_scale(r) != scale or record_setup(r) != setup)]
    by_run: dict[str, list[Mapping[str, Any]]] = {}  # per variant, every complete run of its newest settings
    settings: dict[str, str] = {}  # per variant, its newest record's settings: only its seeds are averaged
    other: dict[str, int] = {}
    other_setup: dict[str, int] = {}
    for r in complete:
        if record_scale(r) != scale:
            other[record_scale(r)] = other.get(record_scale(r), 0) + 1
        elif record_setup(r) != setup:
            other_setup[record_setup(r)] = other_setup.get(record_setup(r), 0) + 1
        elif (key := seeds_key(r.get("spec") or {})) != settings.setdefault(str(r["variant"]), key):
            notes.append(f"{r.get('_source', r.get('run_id'))}: a record of {r['variant']!r} with other settings "
                         f"than its newest (e.g. other pre-trained weights), left out")
        elif any(_same_record(r, other) for other in by_run.setdefault(str(r["variant"]), [])):
            notes.append(f"{r.get('_source', r.get('run_id'))}: a copy of another record of {r['variant']!r} "
                         f"(same run id, seed, date and results), counted once")
        else:
            if any(_seed(other) == _seed(r) for other in by_run[str(r["variant"])]):
                notes.append(f"{r.get('_source', r.get('run_id'))}: a rerun of {r['variant']!r} seed {_seed(r)}, "
                             f"counted as another run")
            by_run[str(r["variant"])].append(r)
    chosen = {variant: combine_seeds(runs) for variant, runs in by_run.items()}
    for name, count in sorted(other.items()):
        notes.append(f"{count} record(s) at {name} scale left out (this report shows {scale} scale; "
                     f"use --scale {name} for those)")
    why = f"chosen with --gpus {gpus}" if gpus is not None else "the setup with the most runs"
    for name, count in sorted(other_setup.items()):
        notes.append(f"{count} record(s) run with {name} are compared in the setups table only (the other tables "
                     f"show {setup}, {why}; --gpus N picks another)")
    return scale, chosen, notes


def _same_record(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Two files of one run (a record copied), not two runs."""
    def identity(r: Mapping[str, Any]) -> tuple:
        return (r.get("run_id"), _seed(r), provenance_of(r)["date"], (r.get("measured") or {}).get("train_s"),
                (r.get("final") or {}).get("top1"), (r.get("final") or {}).get("map"))

    return identity(a) == identity(b)


def _seed(record: Mapping[str, Any]) -> int:
    return int((record.get("spec") or {}).get("seed") or 0)


def _mean_std(values: Sequence[float]) -> tuple[float, float | None]:
    """Mean and sample standard deviation (None for one value)."""
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, None
    return mean, (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5


SEED_METRICS = ("top1", "top5", "map", "train_top1", "train_top5")


def combine_seeds(records: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """One run's records over seeds (same settings, other initialisation and data order) as one record: the
    mean accuracy and training time in `final` and `measured`, and under `seeds` the seeds, each seed's values
    and the standard deviations. The training time is the mean over the seeds that have one (a seed run on a card
    without a baseline of its own has none, see report.cards). Everything else (plan, per-phase numbers,
    provenance) is the lowest timed seed's."""
    records = sorted(records, key=_seed)
    first = min(records, key=lambda r: (not isinstance((r.get("measured") or {}).get("train_s"), (int, float)),
                                        _seed(r)))
    seeds: dict[str, Any] = {"n": len(records), "seeds": [_seed(r) for r in records],
                             "gpus": [gpu_of(r) for r in records],
                             "devices": sorted({device_of(r) for r in records}),
                             "commits": sorted({str(provenance_of(r)["commit"]) for r in records}),
                             "dates": sorted(provenance_of(r)["date"] or "" for r in records)}
    final, measured = dict(first.get("final") or {}), dict(first.get("measured") or {})
    for key in SEED_METRICS:
        values = [(r.get("final") or {}).get(key) for r in records]
        if all(isinstance(v, (int, float)) for v in values):
            final[key], seeds[f"{key}_std"] = _mean_std(values)
            seeds[key] = values
    times = [(r.get("measured") or {}).get("train_s") for r in records]
    timed = [v for v in times if isinstance(v, (int, float))]
    if timed:
        measured["train_s"], seeds["train_s_std"] = _mean_std(timed)
        seeds["train_s"] = times
    return {**first, "final": final, "measured": measured, "seeds": seeds,
            "_source": ", ".join(str(r.get("_source", r.get("run_id"))) for r in records)}


def ordered(suite: SuiteDef, chosen: Mapping[str, Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """The chosen records in the suite's run order."""
    return [chosen[r.variant] for r in suite.runs if r.variant in chosen]
