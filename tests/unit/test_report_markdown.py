"""tables.md shows record strings as text: HTML in them (an edited CPU name, variant or file name) is escaped."""

from __future__ import annotations

import json

from harness.cli import main

from .report_records import results_folder

EVIL = "<script>alert(1)</script>"


def test_html_in_a_records_strings_is_escaped_in_tables_md(tmp_path, capsys):
    results = results_folder(tmp_path / "results")
    path = results / "smoke" / "smoke" / "baseline.json"
    record = json.loads(path.read_text())
    record["hardware"]["cpu"] = f"{EVIL} & co"
    path.write_text(json.dumps(record))
    assert main(["report", "--suite", "smoke", "--results", str(results), "--out", str(tmp_path / "reports")]) == 0
    markdown = (tmp_path / "reports" / "smoke" / "tables.md").read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in markdown
    assert "<script" not in markdown and "</" not in markdown
    csv = (tmp_path / "reports" / "smoke" / "tables.csv").read_text()
    assert f"{EVIL} & co" in csv  # the CSV keeps the data as it is
