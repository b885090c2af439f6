"""The one row of a named record that a finding of a generated page reads (harness.report.performance_page).

A selector names a file and the fields of the row it wants (a throughput row's model, mode and batch; a suite
profile's run or shape; a loader path's shape; a BN benchmark log's mode and group count) and checks the record was
made on the card the finding names. No row, or several, is an EvidenceError naming the file and the selector, so a
changed record fails the page's test instead of silently changing the finding; `claim` fails the same way where a
record no longer shows what a finding says of its numbers. Every file a selector reads is cited by the row built.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from harness.io import read_json_object, unreadable_reason
from harness.paths import CHECKOUT
from harness.provenance import provenance_of
from harness.records import RecordError, read_suite_profile, read_throughput_record
from harness.train.choice_evidence import NUMERICS_TABLE, profiled_step_ms

NUMERICS = f"results/{NUMERICS_TABLE}"
ROW_DEFAULTS = {"pad_stem_channels": 0, "plain_bn_impl": "cudnn"}  # throughput rows that lack (or null) the field
RECORD_DEFAULTS = {"step": "eager", "sub_batch_bn": "auto"}  # suite profiles made before the field existed
# `harness bn-bench` prints a header per activation shape and one line per BN mode.
_LAYER_HEADER = re.compile(r"one BN layer, forward \+ backward, \S+ per process, (?P<gpu>.+) × \d+")
_LAYER_TIME = re.compile(r"  (?:sub-batch (?P<mode>\w+) k=(?P<groups>\d+)|plain)\s+(?P<ms>\d+\.\d+) ms")


class EvidenceError(ValueError):
    """A record that no longer holds the one row a finding reads, or no longer shows what the finding says."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem} (update the finding in harness/report/performance_page.py)")
        self.path, self.problem = path, problem


def claim(holds: bool, path: str, finding: str) -> None:
    """Fail where the record in `path` no longer shows `finding`."""
    if not holds:
        raise EvidenceError(path, f"no longer shows that {finding}")


def short_card(gpu: str) -> str:
    """A GPU as findings name it: "NVIDIA H100 80GB HBM3" -> "H100"."""
    return gpu.removeprefix("NVIDIA ").split(" ")[0]


def one(path: str, items: Iterable[Any], what: str, fields: Mapping[str, Any],
        defaults: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The one item of `items` whose `fields` match (a missing or null field at its default)."""
    defaults = defaults or {}

    def value(item: dict[str, Any], key: str) -> Any:
        return defaults.get(key) if item.get(key) is None else item[key]

    found = [item for item in items if isinstance(item, dict) and all(value(item, k) == v for k, v in fields.items())]
    if len(found) != 1:
        selector = ", ".join(f"{key}={value}" for key, value in fields.items())
        raise EvidenceError(path, f"{len(found) or 'no'} {what} match {selector}, not one")
    return found[0]


class Records:
    """The committed records under `root` (the checkout), read by selectors with paths relative to it. The files
    read since the last `cited()` are the citations it hands over, for the table row being built."""

    def __init__(self, root: Path = CHECKOUT) -> None:
        self.root = Path(root)
        self._cited: list[str] = []

    def cite(self, path: str) -> str:
        if not (self.root / path).is_file():
            raise EvidenceError(path, "no such record")
        if path not in self._cited:
            self._cited.append(path)
        return path

    def cited(self) -> str:
        """The files read since the last call, as the records cell of a table row ("—": none)."""
        text, self._cited = ", ".join(f"`{path}`" for path in self._cited) or "—", []
        return text

    def _read(self, path: str, reader: Callable[[Path], dict[str, Any]] = read_json_object) -> dict[str, Any]:
        self.cite(path)
        try:
            return reader(self.root / path)
        except RecordError as err:
            raise EvidenceError(path, err.problem) from None
        except OSError as err:
            raise EvidenceError(path, unreadable_reason(path, err)) from None
        except ValueError as err:
            raise EvidenceError(path, f"no JSON object: {err}") from None

    def _record(self, path: str, card: str, reader: Callable[[Path], dict[str, Any]] = read_json_object,
                **fields: Any) -> dict[str, Any]:
        """The record in `path`, where it was made on `card` and its top-level `fields` match."""
        record = self._read(path, reader)
        gpu = str(provenance_of(record)["hardware"].get("gpu") or "no GPU")
        if short_card(gpu) != card:
            raise EvidenceError(path, f"made on {gpu}, not an {card}")
        for key, want in fields.items():
            have = record.get(key) or RECORD_DEFAULTS[key]
            if have != want:
                raise EvidenceError(path, f"{key} is {have!r}, not {want!r}")
        return record

    def step(self, path: str, card: str, **fields: Any) -> dict[str, Any]:
        """The row of a `harness throughput` record whose fields match (model, mode, batch, ...); the optional fields
        a selector does not name match their defaults (no stem padding, cuDNN's plain BN)."""
        record = self._record(path, card, read_throughput_record)
        return one(path, record["rows"], "rows", {**ROW_DEFAULTS, **fields}, ROW_DEFAULTS)

    def ms(self, path: str, card: str, **fields: Any) -> float:
        return self.step(path, card, **fields)["ms_per_step"]

    def hours(self, path: str, card: str, variant: str, **record_fields: Any) -> float:
        """A suite profile's predicted GPU-hours of the run `variant` (record fields: step, sub_batch_bn)."""
        record = self._record(path, card, read_suite_profile, **record_fields)
        return one(path, record["runs"], "runs", {"variant": variant})["predicted_gpu_hours"]

    def shape_ms(self, path: str, card: str, step: str, **fields: Any) -> float:
        """A suite profile's median step time at the shape whose fields match (model, t, s, batch, bn_splits)."""
        record = self._record(path, card, read_suite_profile, step=step)
        return one(path, record["shapes"], "shapes", fields)["median_ms"]

    def commit(self, path: str) -> str | None:
        return provenance_of(self._read(path))["commit"]

    def loader(self, path: str, card: str, name: str) -> list[dict[str, Any]]:
        """The shapes (t, s, clips_per_s, workers) of the loader path `name` of a `harness data bench` record."""
        record = self._record(path, card)
        shapes = one(path, record.get("paths") or [], "loader paths", {"name": name}).get("shapes")
        if not isinstance(shapes, list) or not all(isinstance(s, dict) and {"t", "s", "clips_per_s", "workers"}
                                                   <= s.keys() for s in shapes):
            raise EvidenceError(path, f"loader path {name} has no shapes with t, s, clips_per_s and workers")
        return shapes

    def loader_shape(self, path: str, card: str, name: str, t: int, s: int) -> dict[str, Any]:
        return one(path, self.loader(path, card, name), f"shapes of {name}", {"t": t, "s": s})

    def bn_layer_ms(self, path: str, card: str) -> dict[tuple[str, int], float]:
        """(sub-batch mode, groups) -> ms of one BN layer, from a `harness bn-bench` log made on `card`; a line of
        another form than the command prints fails."""
        self.cite(path)
        times: dict[tuple[str, int], float] = {}
        gpus = set()
        for number, line in enumerate((self.root / path).read_text(encoding="utf-8").splitlines(), 1):
            if header := _LAYER_HEADER.fullmatch(line):
                gpus.add(short_card(header["gpu"]))
            elif timing := _LAYER_TIME.fullmatch(line):
                if timing["mode"]:
                    times[(timing["mode"], int(timing["groups"]))] = float(timing["ms"])
            elif line.strip():
                raise EvidenceError(path, f"line {number} is no BN timing: {line!r}")
        if gpus != {card} or not times:
            raise EvidenceError(path, f"no sub-batch timings on one {card} (cards: {', '.join(sorted(gpus))})")
        return times

    def passes(self) -> dict[str, list[str]]:
        """Card -> the fast paths (e.g. "sub_batch_bn=triton") whose numerics test has passed on it."""
        passes = self._read(NUMERICS).get("passes")
        if not isinstance(passes, list) or not all(isinstance(p, dict) and {"path", "card"} <= p.keys()
                                                   for p in passes):
            raise EvidenceError(NUMERICS, "no list of passes, each with its path and card")
        by_card: dict[str, list[str]] = {}
        for entry in passes:
            by_card.setdefault(entry["card"], []).append(entry["path"])
        return dict(sorted(by_card.items()))

    def passed_cards(self, fast_path: str) -> list[str]:
        return [card for card, paths in self.passes().items() if fast_path in paths]

    def profiled_cards(self, cards: Iterable[str], step: str, sub_batch_bn: str) -> list[str]:
        """Those of `cards` whose committed suite profiles (auto's evidence) time steps of `step` and `sub_batch_bn`."""
        return [card for card in cards
                if any(key[:2] == (step, sub_batch_bn) for key in profiled_step_ms(card, self.root / "results"))]

    def holding(self, key: str, value: str) -> list[str]:
        """The committed records (results/**/*.json) that hold `key`: `value` at any depth."""
        def holds(node: Any) -> bool:
            if isinstance(node, dict):
                return node.get(key) == value or any(holds(v) for v in node.values())
            return isinstance(node, list) and any(holds(v) for v in node)

        found = []
        for file in sorted((self.root / "results").rglob("*.json")):
            path = str(file.relative_to(self.root))
            try:
                record = json.loads(file.read_text(encoding="utf-8"))
            except (OSError, ValueError) as err:
                raise EvidenceError(path, f"unreadable: {err}") from None
            if holds(record):
                found.append(path)
        return found
