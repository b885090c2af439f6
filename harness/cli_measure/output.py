"""What the measurement commands share: the record to --out (checked before measuring) or printed as --json, and
the notes and cells of their FLOPs columns."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def require_out(args: argparse.Namespace) -> None:
    """Refuse an --out that could not be written before the measurement it would lose."""
    if args.out:
        from harness.io import require_writable_file

        require_writable_file(Path(args.out), "--out")


def save_or_print_json(record: dict, args: argparse.Namespace) -> bool:
    """Write `record` to --out if given; with --json print it and return True (the caller then prints no table)."""
    if args.out:
        from harness.io import write_json_atomic

        write_json_atomic(Path(args.out), record)
    if getattr(args, "json", False):
        print(json.dumps(record))
        return True
    return False


FLOPS_FOOTNOTE = ("TFLOP/s: training FLOPs = 2 × 3 × fvcore's forward multiply-adds a clip, × clips/s; MFU: of the "
                  "card's dense bf16 peak (NVIDIA's datasheets); of mm: of the bf16 matmul timed on the device")


def percent(share: float | None) -> str:
    """`share` as a percentage cell of a table, "-" where it is unknown."""
    return "-" if share is None else f"{share:.1%}"


def peak_note(rows: list[dict]) -> str:
    """`; peak N TFLOP/s (datasheet)` where the shapes' MFU knows the card's peak."""
    peak = next((r["mfu"]["peak_tflop_s"] for r in rows if r.get("mfu") and r["mfu"]["peak_tflop_s"]), None)
    return f"; dense bf16 peak {peak:.0f} TFLOP/s (datasheet)" if peak else ""

