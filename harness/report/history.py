"""A suite's earlier settings at one scale, from the records kept aside under results/<suite>/<scale>/<setting>/:
what each setting differed in, what its runs found against their baseline (the same verdict rules as the report's),
and why it was left (the folder's ABOUT.md, a sentence or two of decision, no measurements). Pure, but for
`load_kept`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.records import read_run_record
from harness.report import stats
from harness.report.baselines import is_plain_baseline
from harness.report.comparison import accuracy_comparison
from harness.report.run_numbers import run_numbers

# Settings that differ between any two records and say nothing about the setting.
IGNORED = ("seed", "suite", "variant", "output_dir", "resume", "data.cache")


@dataclass(frozen=True)
class KeptSetting:
    name: str  # the folder, relative to the scale's
    records: tuple[Mapping[str, Any], ...]
    about: str  # why the setting was left, from the folder's ABOUT.md ('' without one)


def load_kept(scale_dir: Path) -> list[KeptSetting]:
    """Every folder below `scale_dir` that holds run records (at any depth), with its ABOUT.md."""
    kept = []
    for folder in sorted(p for p in scale_dir.rglob("*") if p.is_dir()):
        records = [r for r, _ in (read_run_record(p) for p in sorted(folder.glob("*.json"))) if r is not None]
        if records:
            about = folder / "ABOUT.md"
            kept.append(KeptSetting(str(folder.relative_to(scale_dir)), tuple(records),
                                    about.read_text(encoding="utf-8").strip() if about.is_file() else ""))
    return kept


def _flat(spec: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in spec.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flat(value, f"{name}."))
        else:
            out[name] = value
    return out


def _shown(key: str, value: Any) -> str:
    if key == "data.root" and isinstance(value, str):
        return Path(value).name  # the generated data's settings are in its folder's name, not its place
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return "[" + ", ".join(_shown(key, v) for v in value) + "]"
    return str(value)


def setting_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """'key: old → new' for every setting of the old baseline's spec that the current one has otherwise."""
    a, b = _flat(old), _flat(new)
    changes = []
    for key in sorted(set(a) | set(b)):
        if key in IGNORED or (key.startswith("train.") and key not in ("train.step", "train.precise_bn")):
            continue
        before, after = _shown(key, a.get(key)), _shown(key, b.get(key))
        if before != after:
            changes.append(f"{key}: {before} → {after}")
    return changes


def _runs(records: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    by_variant: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        if r.get("status") == "complete":
            by_variant.setdefault(str(r.get("variant")), []).append(r)
    return by_variant


def setting_line(kept: KeptSetting, current_baseline: Mapping[str, Any] | None, margin: float,
                 combine: Any) -> str:
    """One kept setting in a sentence: its records, what differed, its baseline's accuracy and its runs' verdicts
    against it. `combine` merges one variant's records over seeds (report.inputs.combine_seeds)."""
    runs = {variant: combine(rs) for variant, rs in _runs(kept.records).items()}
    base = next((r for r in runs.values() if is_plain_baseline(r)), None)
    head = f"{kept.name}/: {len(kept.records)} record(s) of {len(runs)} run(s)"
    if base is None:
        return head + ", no 1.0× baseline among them." + (f" Why left: {kept.about}" if kept.about else "")
    changes = (setting_changes(base.get("spec") or {}, current_baseline.get("spec") or {})
               if current_baseline is not None else [])
    b = run_numbers(base)
    metric = "top1" if b["top1"] is not None else "map"
    words: Counter = Counter()
    deltas = []
    for variant, record in runs.items():
        if record is base:
            continue
        compared = accuracy_comparison(run_numbers(record), b, metric, margin)
        if compared[f"{metric}_verdict"]:
            words[compared[f"{metric}_verdict"]] += 1
            deltas.append((variant, compared[f"{metric}_delta"]))
    label = "top-1" if metric == "top1" else "mAP"
    parts = [head]
    if changes:
        parts.append("settings then (→ now): " + "; ".join(changes))
    parts.append(f"its baseline {b[metric]:.1f}% {label} over {b['seeds']} run(s)")
    if deltas:
        listed = ", ".join(f"{v} {d:+.1f}" for v, d in deltas)
        verdicts = ", ".join(f"{words[w]} {w}" for w in stats.VERDICTS if words[w])
        parts.append(f"against it ({verdicts} at δ = {margin:g}): {listed} points")
    line = "; ".join(parts) + "."
    return line + (f" Why left: {kept.about}" if kept.about else "")
