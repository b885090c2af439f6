"""Reports: the paper's tables, Figures 2 and 3 and the data-wait shares from run records, as one HTML page.

Pure functions from records to tables and figures (`page.build_report`, the tables of `tables` and
`measurements`); the files are read and written in `write` (`write_report`, `write_index`).
"""
