"""MkDocs hook: the generated reports travel with the site, under reports/, so the docs link to them."""

import shutil
from pathlib import Path


def on_post_build(config, **kwargs):
    reports = Path(config["config_file_path"]).parent / "reports"
    if reports.is_dir():
        shutil.copytree(reports, Path(config["site_dir"]) / "reports", dirs_exist_ok=True)
