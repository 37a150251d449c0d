"""gpu-bench-history: nightly tracking in SQLite or PostgreSQL (ingest, check-errored, check, trend, runs)."""

from __future__ import annotations

import argparse
import dataclasses
import math
import socket
import sys
from typing import Sequence

from ..history import dburl, series, check as history_check, render as history_render
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
    default_db = series.default_db_path()
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", default=argparse.SUPPRESS, metavar="PATH|URL",
                        help=f"an SQLite file, or postgresql://USER@HOST/DB with the password in ~/.pgpass or a "
                        f"service file, never here (default ${dburl.ENV}, else {default_db})")
    p = ArgumentParser(prog=PROG, description="Keep gpu_bench runs in an SQLite or PostgreSQL database and flag "
                       "regressions of the newest run of each machine against its recent past.", parents=[common])
    sub = p.add_subparsers(dest="command", required=True, parser_class=ArgumentParser)

    s = sub.add_parser("ingest", parents=[common], help="add runs; a file already there adds nothing")
    s.add_argument("files", nargs="+", metavar="FILE.json")

    s = sub.add_parser("check-errored", parents=[common],
                       help="keep a check that could not judge its node (a tool missing, no results, a timeout): "
                       "there is no run to ingest; 'runs' lists them")
    s.add_argument("why", metavar="WHY", help="why the check could not judge the node (one line)")
    s.add_argument("--preset", required=True, help="the preset the check ran")
    s.add_argument("--host", help="the node (default this machine's host name, as gpu_bench writes it)")

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

    s = sub.add_parser("replay", help="check runs of one machine as consecutive nights, each from the third on "
                       "against the nights before it, at several thresholds (an A/A test of check); a database of "
                       "its own, never --db")
    s.add_argument("files", nargs="+", metavar="RUN.json", help="runs of one machine and configuration, in night order")
    s.add_argument("--thresholds", type=pct_list, default=REPLAY_THRESHOLDS, metavar="PCT,PCT,...",
                   help="the thresholds to check at (default " + ",".join(f"{t:g}" for t in REPLAY_THRESHOLDS) + ")")
    s.add_argument("--alpha", type=probability, default=history_check.DEFAULT_ALPHA,
                   help=f"as check's (default {history_check.DEFAULT_ALPHA:g})")
    s.add_argument("--window", type=positive_int, default=10, help="as check's (default 10)")
    step = s.add_mutually_exclusive_group()
    step.add_argument("--plant", type=floor_pct, metavar="PCT",
                      help="then a night made from each run in turn with its stable copies (Transfer, pinned and "
                      "registered, 1 MiB and more) PCT percent slower, each against all the runs")
    step.add_argument("--step", metavar="RUN.json",
                      help="then this run as the night after them; its stable copies count as found where called "
                      "slower")
    return p


REPLAY_THRESHOLDS = (0.5, 1.0, 1.5, 2.0, 3.0, 5.0)


def pct_list(text: str) -> list[float]:
    """--thresholds: percentages above 0, separated by commas."""
    return [floor_pct(t.strip()) for t in text.split(",")] if text.strip() else [floor_pct(text)]


def _replay(args) -> int:
    from ..aa.altered import slowed
    from ..aa.figures import is_detection_copy
    from ..history import replay
    from ..reading.load import load_file

    files = [load_file(p) for p in args.files]
    # The stable copies: those at the host link's throughput, where the A/A harness plants its slowdowns.
    stable = {k for k, c in files[0].cases.items() if is_detection_copy(files[0], c)}
    steps, what = [], ""
    if args.plant is not None:
        for f in files:
            slow = slowed(f, args.plant)
            cases = {k: slow.cases[k] if k in stable else c for k, c in f.cases.items()}
            steps.append(dataclasses.replace(f, cases=cases, path=f"{f.path} ({len(stable)} stable copies "
                                                                   f"+{args.plant:g}%)"))
        what = f"each run again with its {len(stable)} stable copies {args.plant:g}% slower"
    elif args.step:
        steps, what = [load_file(args.step)], f"{args.step}"
    rep = replay.replay(files, args.thresholds, alpha=args.alpha, window=args.window, step_nights=steps,
                        stepped=stable.__contains__, step_what=what)
    sys.stdout.write(replay.render(rep))
    return EXIT_OK


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    db = dburl.from_args(getattr(args, "db", None), series.default_db_path())
    if args.command == "ingest":
        res = series.ingest(db, args.files)
        for path, label, when in res.added:
            print(f"added    {path}  ({label}, {when})")
        for path in res.already:
            print(f"present  {path}  (already in the database, nothing added)")
        print(f"{len(res.added)} run(s) added, {len(res.already)} already present, {res.rows} rows; "
              f"database {dburl.parse(db).shown}")
        for note in res.notes:
            print(f"{PROG}: note: {note}", file=sys.stderr)
        return EXIT_OK
    if args.command == "check-errored":
        host = args.host or socket.gethostname()
        when = series.record_check_error(db, host, args.preset, args.why)
        print(f"kept {host} {args.preset} ERRORED at {when}; database {dburl.parse(db).shown}")
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
    if args.command == "replay":
        return _replay(args)
    sys.stdout.write(history_render.list_runs(db))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
