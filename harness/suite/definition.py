"""Suites: the runs of suites/experiments/NAME.yaml (recipe plus overrides, each tied to rows of the paper's tables),
read and checked so that a suite edited by hand fails naming its file and key, not in a traceback."""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.config import recipes
from harness.io import unreadable_reason
from harness.paths import suites_dir
from harness.spec import SpecError, did_you_mean
from harness.suite.yaml_file import read_named_mapping

RUN_KEYS = {"recipe", "overrides", "match_iterations_of", "requires", "paper", "figure"}
SUITE_KEYS = {"description", "tables", "runs"}


@dataclass(frozen=True)
class RunDef:
    """One run of a suite as its YAML declares it."""

    variant: str
    recipe: str
    overrides: tuple[str, ...] = ()
    match_iterations_of: str | None = None
    requires: tuple[str, ...] = ()
    paper: tuple[tuple[str, str], ...] = ()  # (table, row) pairs of paper_results.csv
    figure: Mapping[str, Any] = field(default_factory=dict)  # {"method": ..., "epochs": ...} for Figure 3


@dataclass(frozen=True)
class SuiteDef:
    """A suite: its description, the paper tables it re-creates and its runs (in YAML order)."""

    name: str
    description: str
    tables: tuple[str, ...]
    runs: tuple[RunDef, ...]
    # Points of top-1 (or mAP) a run may lose and still keep the baseline's accuracy: declared with the suite,
    # before its runs are looked at.
    margin: float = 1.0

    def run(self, variant: str) -> RunDef | None:
        return next((r for r in self.runs if r.variant == variant), None)

    def require_variants(self, variants, what: str) -> None:
        """SpecError naming the first of `variants` (from `what`, e.g. '--only') that this suite lacks."""
        names = [r.variant for r in self.runs]
        unknown = [v for v in variants if v not in names]
        if unknown:
            raise SpecError(f"{what}: suite {self.name} has no variant {unknown[0]!r}."
                            f"{did_you_mean(unknown[0], names)} Its variants: {', '.join(names)}.")


def _require_suite_shape(data: Mapping[str, Any], where: str) -> None:
    """SpecError naming `where` (the suite's file) where the parsed YAML is not shaped as a suite: a file edited by
    hand would otherwise end `reproduce` or `report` in a traceback."""
    runs = data.get("runs") or {}
    if not isinstance(runs, Mapping):
        raise SpecError(f"{where}: 'runs' must be a mapping of run names to runs (baseline: {{recipe: NAME, "
                        f"overrides: [...]}}), got {runs!r}.")
    if not isinstance(data.get("tables") or [], list):
        raise SpecError(f"{where}: 'tables' must be a list of the paper's tables, e.g. [\"1a\"], got "
                        f"{data['tables']!r}.")
    margin = data.get("margin", 1.0)
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 < margin < 100:
        raise SpecError(f"{where}: 'margin' must be the points of accuracy a run may lose and still count as "
                        f"keeping the baseline's (a number above 0, e.g. 1.0), got {margin!r}.")
    for variant, run in runs.items():
        if not isinstance(run, Mapping):
            raise SpecError(f"{where}: run '{variant}' must be a mapping of keys (recipe:, overrides:, ...), got "
                            f"{run!r}.")
        for key, example in (("overrides", "[solver.max_epoch=120]"), ("requires", "[model.pretrained]")):
            if not isinstance(run.get(key) or [], list):
                raise SpecError(f"{where}: run '{variant}': '{key}' must be a list, e.g. {example}, got "
                                f"{run[key]!r}.")
        paper = run.get("paper") or []
        if not isinstance(paper, list) or not all(isinstance(r, list) and len(r) == 2 for r in paper):
            raise SpecError(f"{where}: run '{variant}': 'paper' must be a list of [table, row] pairs, e.g. "
                            f"[[\"1a\", \"baseline\"]], got {paper!r}.")
        if not isinstance(run.get("figure") or {}, Mapping):
            raise SpecError(f"{where}: run '{variant}': 'figure' must be a mapping (method:, epochs:), got "
                            f"{run['figure']!r}.")


def suite_from_mapping(name: str, data: Mapping[str, Any], path: Path | None = None) -> SuiteDef:
    """A SuiteDef from the parsed YAML of suites/experiments/NAME.yaml (`path`, named in errors)."""
    _require_suite_shape(data, str(path) if path else f"suite '{name}'")
    runs = []
    for variant, run in (data.get("runs") or {}).items():
        runs.append(RunDef(
            variant=str(variant), recipe=str(run.get("recipe", "")),
            overrides=tuple(str(o) for o in run.get("overrides") or ()),
            match_iterations_of=run.get("match_iterations_of"),
            requires=tuple(str(k) for k in run.get("requires") or ()),
            paper=tuple((str(t), str(r)) for t, r in run.get("paper") or ()),
            figure=dict(run.get("figure") or {})))
    return SuiteDef(name, str(data.get("description") or name), tuple(str(t) for t in data.get("tables") or ()),
                    tuple(runs), float(data.get("margin", 1.0)))



def list_suites() -> list[str]:
    return sorted(p.stem for p in (suites_dir() / "experiments").glob("*.yaml"))



def paper_rows(path: Path | None = None) -> list[dict[str, str]]:
    """The paper's tables (suites/paper/paper_results.csv), one dict per row, in the paper's order."""
    path = path or suites_dir() / "paper" / "paper_results.csv"
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as err:
        raise SpecError(f"{path} {unreadable_reason(path, err)}") from None


def load_suite(name: str) -> SuiteDef:
    """Read and check suites/experiments/NAME.yaml: keys, recipes, references and paper rows."""
    path, data = read_named_mapping("suite", suites_dir() / "experiments", list_suites(), name, SUITE_KEYS)
    suite = suite_from_mapping(name, data, path)
    known_rows = {(r["table"], r["row"]) for r in paper_rows()}
    for variant, run in (data.get("runs") or {}).items():
        where = f"{path}: run '{variant}'"
        bad = set(run) - RUN_KEYS
        if bad:
            raise SpecError(f"{where}: unknown key(s) {sorted(bad)}.{did_you_mean(sorted(bad)[0], RUN_KEYS)}")
        if run.get("recipe") not in recipes():
            raise SpecError(f"{where}: unknown recipe '{run.get('recipe')}'."
                            f"{did_you_mean(str(run.get('recipe')), recipes())}")
        for row in run.get("paper", []):
            if tuple(row) not in known_rows:
                raise SpecError(f"{where}: paper row {list(row)} is not in suites/paper/paper_results.csv.")
    variants = [r.variant for r in suite.runs]
    for run in suite.runs:
        if run.match_iterations_of and run.match_iterations_of not in variants:
            raise SpecError(f"{path}: run '{run.variant}' matches iterations of unknown run "
                            f"'{run.match_iterations_of}'.{did_you_mean(run.match_iterations_of, variants)}")
    return suite

