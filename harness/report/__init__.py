"""Reports: the paper's tables, Figures 2 and 3 and the data-wait shares from run records, as one HTML page.

Pure functions from records to tables and figures (`build_report`); files only in `write_report`.
"""

from harness.report.build import build_index, build_report, report_summary, runs_text, write_index, write_report
from harness.report.inputs import load_records, load_suite_def
from harness.report.tables import Table, build_tables, tables_csv, tables_markdown
from harness.suite import RunDef, SuiteDef, suite_from_mapping
from harness.suite import paper_rows as load_paper_rows

__all__ = ["RunDef", "SuiteDef", "Table", "build_index", "build_report", "build_tables", "load_paper_rows",
           "load_records", "load_suite_def", "report_summary", "runs_text", "suite_from_mapping", "tables_csv",
           "tables_markdown", "write_index", "write_report"]
