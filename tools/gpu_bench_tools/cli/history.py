"""gpu-bench-history: nightly tracking in SQLite or PostgreSQL (ingest, check, trend, runs)."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Sequence

from ..history import dburl, history, check as history_check, render as history_render
from .common import EXIT_OK, EXIT_REGRESSION, ArgumentParser, positive_int, probability, run
from ..reading.load import InputError

PROG = "gpu-bench-history"


def floor_pct(text: str) -> float:
    """--threshold: a percentage above 0 (a floor of 0 would report any difference from nights that never
    varied)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (0.0 < v < math.inf):
        raise argparse.ArgumentTypeError(f"must be a percentage above 0, not {text}")
    return v


def build_parser() -> ArgumentParser:
    default_db = history.default_db_path()
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", default=argparse.SUPPRESS, metavar="PATH|URL",
                        help=f"an SQLite file, or postgresql://USER@HOST/DB with the password in ~/.pgpass or a "
                        f"service file, never here (default ${dburl.ENV}, else {default_db})")
    p = ArgumentParser(prog=PROG, description="Keep gpu_bench runs in an SQLite or PostgreSQL database and flag "
                       "regressions of the newest run of each machine against its recent past.", parents=[common])
    sub = p.add_subparsers(dest="command", required=True, parser_class=ArgumentParser)

    s = sub.add_parser("ingest", parents=[common], help="add runs; a file already there adds nothing")
    s.add_argument("files", nargs="+", metavar="FILE.json")

    s = sub.add_parser("check", parents=[common],
                       help="newest run of each machine against the earlier runs of its configuration")
    s.add_argument("--window", type=positive_int, default=10,
                   help="earlier runs of the same configuration to look at (default 10)")
    s.add_argument("--threshold", type=floor_pct, default=history_check.DEFAULT_THRESHOLD_PCT, metavar="PCT",
                   help="the floor: the smallest change in percent worth reporting, however steady a case's nights "
                   f"(default {history_check.DEFAULT_THRESHOLD_PCT:g}); a change must also lie beyond the case's "
                   "own interval; exit 1 on a regression")
    s.add_argument("--metric", help="judge every case on this counter (default: its family's headline)")
    s.add_argument("--case", metavar="REGEX", help="only cases whose name matches")
    s.add_argument("--alpha", type=probability, default=history_check.DEFAULT_ALPHA,
                   help="the chance that a night with no change lies outside its case's interval, between 0 "
                   f"and 1 (default {history_check.DEFAULT_ALPHA:g})")

    s = sub.add_parser("trend", parents=[common], help="plot selected cases over time per machine")
    s.add_argument("--case", required=True, metavar="REGEX", help="cases whose name matches (re.search)")
    s.add_argument("--out", required=True, metavar="DIR")
    s.add_argument("--metric", help="counter to plot (default: its family's headline)")
    s.add_argument("--machine", metavar="TEXT", help="only machines whose label or fingerprint contains TEXT")
    s.add_argument("--format", default="png", help="comma-separated: png, svg, pdf (default png)")
    s.add_argument("--max-cases", type=positive_int, default=50)

    sub.add_parser("runs", parents=[common], help="list machines and their runs")
    return p


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    db = dburl.from_args(getattr(args, "db", None), history.default_db_path())
    if args.command == "ingest":
        res = history.ingest(db, args.files)
        for path, label, when in res.added:
            print(f"added    {path}  ({label}, {when})")
        for path in res.already:
            print(f"present  {path}  (already in the database, nothing added)")
        print(f"{len(res.added)} run(s) added, {len(res.already)} already present, {res.rows} rows; "
              f"database {dburl.parse(db).shown}")
        for note in res.notes:
            print(f"{PROG}: note: {note}", file=sys.stderr)
        return EXIT_OK
    if args.command == "check":
        rep = history_check.check(db, window=args.window, threshold_pct=args.threshold, metric=args.metric,
                            case_regex=args.case, alpha=args.alpha)
        sys.stdout.write(history_render.render_check(rep))
        bad = rep.failures()
        if bad:
            print(f"{PROG}: {len(bad)} regression(s) or newly failing case(s) beyond {args.threshold:g}%",
                  file=sys.stderr)
            return EXIT_REGRESSION
        return EXIT_OK
    if args.command == "trend":
        formats = tuple(x.strip().lower() for x in args.format.split(",") if x.strip())
        if not formats or any(f not in ("png", "svg", "pdf") for f in formats):
            raise InputError(f"--format: use png, svg or pdf, not {args.format!r}")
        paths = history_render.trend(db, args.case, args.out, metric=args.metric, machine_filter=args.machine,
                              formats=formats, max_cases=args.max_cases)
        for p in paths:
            print(p)
        return EXIT_OK
    sys.stdout.write(history_render.list_runs(db))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
