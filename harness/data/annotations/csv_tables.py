"""CSV annotation files (Kinetics' official CSVs, Charades'), as rows with the lines an editor shows them on."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from harness.data.annotation_records import first_line, read_text


def delimiter(header_line: str) -> str:
    """The delimiter of a CSV file from its header line: a comma, unless the header holds none but semicolons (what
    Excel writes where the comma is the decimal mark) or tabs (a spreadsheet's "text, tab separated")."""
    if "," not in header_line:
        for other in (";", "\t"):
            if other in header_line:
                return other
    return ","


def csv_rows(csv_file: Path) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """Header and (line number, row) pairs of a CSV file, line numbers 1-based as an editor shows them."""
    with io.StringIO(read_text(csv_file), newline="") as f:
        reader = csv.DictReader(f, delimiter=delimiter(first_line(csv_file)))
        header = [h.strip() for h in (reader.fieldnames or [])]
        reader.fieldnames = header
        rows, start = [], reader.line_num + 1
        for row in reader:
            rows.append((start, row))
            start = reader.line_num + 1
    return header, rows
