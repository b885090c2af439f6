"""`harness report --suite NAME`: write reports/NAME/index.html (and tables.csv, tables.md) from results/NAME/."""

from __future__ import annotations

import argparse

from harness.cli_args import COUNT, path


def cmd_report(args: argparse.Namespace) -> int:
    from harness.report.inputs import NoSuchSetup, suite_names
    from harness.report.write import NoRecords, write_report
    from harness.spec import SpecError

    every = args.suite == ["all"]
    names = suite_names() if every else args.suite
    written = 0
    for name in names:
        try:
            path = write_report(name, args.results, args.out, args.scale, args.gpus, force=args.force)
        except NoSuchSetup as err:  # nothing recorded on --gpus N
            raise SystemExit(f"harness report: {err}") from None
        except NoRecords:
            if not every:
                raise
            print(f"no report for {name}: no run records of it yet")  # 'all' reports the suites that have some
            continue
        print(f"report: {path}")
        written += 1
        if args.screenshot:
            from harness.report.browser import find_chromium, screenshot

            if find_chromium() is None:
                print("no screenshot: Chromium is not installed (tests/integration/install_chromium.sh)")
            else:
                screenshot(path, path.parent / "screenshot.png")
                print(f"screenshot: {path.parent / 'screenshot.png'}")
    if not written:  # --suite all over a folder of no suite's records: as much an error as one suite's
        raise SpecError(f"{args.results or 'results/ of this checkout'} holds no run record of any suite. Run a "
                        f"suite first (harness reproduce --suite NAME) or pass the --results folder that holds the "
                        f"records; no report was written.")
    return 0


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the `report` subcommand to the `harness` parser's subparsers."""
    parser = subparsers.add_parser(
        "report", help="write a suite's HTML report (paper tables with our numbers, Figures 2 and 3)",
        description="Build reports/SUITE/index.html, a single self-contained page with the paper's tables beside "
                    "our measured numbers, Figures 2 and 3 and the data-wait shares, from the run records in "
                    "results/SUITE/; also tables.csv and tables.md, and reports/index.html linking every report.")
    parser.add_argument("--suite", action="append", required=True, metavar="NAME",
                        help="suite name (repeatable; 'all' for every suite)")
    parser.add_argument("--results", type=path, default=None, metavar="DIR",
                        help="folder of run records (default: results/ of this checkout)")
    parser.add_argument("--out", type=path, default=None, metavar="DIR",
                        help="folder of reports (default: reports/ of this checkout)")
    parser.add_argument("--scale", choices=("smoke", "proxy", "paper"), default=None,
                        help="report the records of this scale (default: the scale of the newest record)")
    parser.add_argument("--gpus", type=COUNT, default=None, metavar="N",
                        help="tables of the runs made on N GPUs (default: the setup with the most runs; records "
                             "of other setups still appear in the setups table)")
    parser.add_argument("--force", action="store_true",
                        help="replace a report built from more run records than --results holds (refused otherwise)")
    parser.add_argument("--screenshot", action="store_true",
                        help="also save SUITE/screenshot.png of the report rendered by headless Chromium")
    parser.set_defaults(func=cmd_report)
    return parser
