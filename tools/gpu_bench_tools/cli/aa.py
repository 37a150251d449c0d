"""gpu-bench-aa: the same gpu_bench run several times on one machine, and how far the runs agree."""

from __future__ import annotations

import os
import sys
from typing import Sequence

from ..reading.errors import InputError
from .common import EXIT_OK, EXIT_REGRESSION, ArgumentParser, positive_float, positive_int, run

PROG = "gpu-bench-aa"

# A broad subset of the default matrix that one process measures in about a minute on an H100: every
# host-memory kind that crosses the link at four sizes, device copies, the small-copy latency, a slice of
# Overlap and the host-side families whole.
BROAD_FILTER = (
    "^(Transfer/dir:(h2d|d2h|bidir)/mem:pinned/bytes:(65536|1048576|16777216|268435456)/"
    "|Transfer/dir:(h2d|d2h)/mem:(registered|pageable|write_combined)/bytes:(65536|1048576|268435456)/"
    "|Transfer/dir:d2d/mem:device/cache:cold/bytes:(1048576|268435456)/"
    "|SmallCopy/dir:(h2d|d2h)/mem:pinned/bytes:4/"
    "|Overlap/schedule:(serial|depth_first|breadth_first)/mem:pinned/streams:(1|8)/bytes:(16777216|67108864)/work:1/sync:end/"
    "|Events/|Launch/|SyncPlacement/|Streams/)"
)


def build_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog=PROG,
        description="A/A runs: the same gpu_bench command in several processes on one machine, one after the "
        "other, and a report of how far they agree (docs/methodology.md). 'run' makes the runs; 'report' reads "
        "them: each case's spread between runs, how often a run's interval holds the next run's figure, how "
        "many cases gpu-bench-compare calls different between runs that should be the same (with rounds, and "
        "with one round a side against the between-run floors), with --slowdown how many it catches when "
        "one side is made slower, and per family how many of its cases it catches 5% and 10% slower. 'floors' merges several machines' floors into the file compare reads. 'models' "
        "judges the candidate models of a case's interval on A/A sets. 'spans' reads runs made with --samples=on: how "
        "far a case's median moves with the span of time its samples cover. 'drift' reads a series of runs: whether "
        "each case's time moves with when its run started (a host link that does not hold still).",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="{run,report,floors,models,spans,drift}")
    r = sub.add_parser("run", help="run gpu_bench RUNS times, each writing OUT/run_NN.json")
    r.add_argument("--runs", type=positive_int, default=6, help="how many processes (default 6)")
    r.add_argument("--out", required=True, metavar="DIR", help="folder for the runs' JSON and stderr")
    r.add_argument("--exe", default=os.path.join("build", "gpu_bench"), help="gpu_bench (default build/gpu_bench)")
    r.add_argument("--broad", action="store_true",
                   help="run the named broad subset (85 cases; the filter is in gpu-bench-aa's source)")
    r.add_argument("args", nargs="*", metavar="-- GPU_BENCH_ARG",
                   help="gpu_bench's own flags, after --, the same for every run")
    rep = sub.add_parser("report", help="how far the runs agree")
    rep.add_argument("files", nargs="+", metavar="RUN.json", help="two or more runs of the same command")
    rep.add_argument("--slowdown", type=positive_float, action="append", default=[], metavar="PCT",
                     help="also compare each pair with every figure of its second run made PCT percent slower "
                     "(repeatable)")
    rep.add_argument("--fail-on-regression", type=positive_float, default=5.0, metavar="PCT",
                     help="the threshold the --slowdown pairs are gated on (default 5)")
    rep.add_argument("--json", metavar="FILE", help="also write the report as JSON")
    rep.add_argument("--floor", metavar="FILE", help="also write the between-run floors the runs show (TOML), "
                     "for gpu-bench-compare's one-round files")
    rep.add_argument("--floors", metavar="FILE", help="the between-run floors to test on the runs' rounds (TOML; "
                     "default: the ones shipped with gpu-bench-compare)")
    rep.add_argument("--tick-floor-only", action="store_true",
                     help="first re-derive each case's noise_pct and detectable_pct from its rounds with the timer's "
                     "tick as the only floor (a candidate: gpu_bench also floors on its last round's own interval)")
    rep.add_argument("--check", action="store_true",
                     help="exit 1 unless coverage is at least 90%%, compare calls at most 5%% of cases different, "
                     "and the floors call at most 5%% of one-round comparisons different and miss no family")
    fl = sub.add_parser("floors", help="each floor the larger over several machines' A/A reports, as TOML")
    fl.add_argument("reports", nargs="+", metavar="REPORT.json",
                    help="reports gpu-bench-aa report --json wrote, each of one machine's runs")
    fl.add_argument("--out", required=True, metavar="FILE", help="the floors file to write (TOML)")
    fl.add_argument("--measured-on", metavar="TEXT", help="where the floors were measured, as compare will quote "
                    "it (default: each report's GPU, number of runs and gpu_bench revision)")
    mo = sub.add_parser("models", help="candidate models of a case's interval, judged on A/A sets")
    mo.add_argument("sets", nargs="+", metavar="DIR",
                    help="folders, each of one A/A set: its *.json and *.json.gz files in name order are consecutive "
                    "runs (a run on another GPU than most of them, by gpu.uuid, is left out)")
    mo.add_argument("--without-extra-rounds", action="store_true",
                    help="judge each case on its rounds as if it had taken no extra rounds: the first "
                    "gpu_bench.link_rounds - 1 and the last (what --link_max_rounds bought, set against the same runs)")
    mo.add_argument("--centers", action="store_true",
                    help="instead of the models, how far each center of a copy's rounds (a quarter trimmed, the "
                    "median, the fastest half, the fastest) moves between consecutive runs")
    sp = sub.add_parser("spans", help="how far a case's median moves with the span of time its samples cover")
    sp.add_argument("files", nargs="+", metavar="RUN.json",
                    help="runs of one command made with --samples=on (a long --benchmark_min_time, so that each "
                    "case's samples cover the longest span)")
    sp.add_argument("--span", type=positive_float, action="append", default=[], metavar="S",
                    help="a window's span in seconds (repeatable; default 0.01 0.03 0.1 0.2 0.4 0.7 1.4)")
    dr = sub.add_parser("drift", help="whether each case's time moves with when its run started")
    dr.add_argument("files", nargs="+", metavar="RUN.json",
                    help="six or more runs of one command on one machine, in any order (each run's start is its "
                    "host.uptime_s, else its date)")
    dr.add_argument("--window", type=positive_float, metavar="S",
                    help="instead of the trend, each case's median per window of S seconds of starts and whether "
                    "the windows differ (Kruskal-Wallis): finds slow phases that come and go")
    return p


def _models(dirs: Sequence[str], without_extra_rounds: bool = False, centers: bool = False) -> int:
    import glob

    from ..aa import models
    from ..reading.load import load_files

    sets = []
    for d in dirs:
        paths = sorted(glob.glob(os.path.join(d, "*.json")) + glob.glob(os.path.join(d, "*.json.gz")))
        files = load_files(paths)
        uuids = [f.fact("gpu.uuid") for f in files]
        uuid = max(set(uuids), key=uuids.count) if uuids else None  # the GPU most of the runs ran on
        same = [f for f in files if f.fact("gpu.uuid") == uuid]
        if len(same) < 2:
            print(f"gpu-bench-aa: {d}: left out: fewer than two runs of one GPU (*.json, *.json.gz)", file=sys.stderr)
            continue
        if without_extra_rounds:
            for f in same:
                models.drop_extra_rounds(f)
        sets.append((f"{d} ({len(same)} runs{', extra rounds dropped' if without_extra_rounds else ''})", same))
    if not sets:
        raise InputError("no folder holds two runs of one GPU")
    if centers:
        sys.stdout.write(models.render_centers([(label, models.center_agreement(files)) for label, files in sets]))
        return EXIT_OK
    results = models.judge_sets(sets, progress=lambda label: print(f"gpu-bench-aa: {label}", file=sys.stderr))
    sys.stdout.write(models.render(results))
    return EXIT_OK


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "run":
        from ..aa.run import run_all

        extra = list(args.args)
        if args.broad:
            extra = [f"--benchmark_filter={BROAD_FILTER}", *extra]
        results = run_all(args.exe, extra, args.runs, args.out)
        return EXIT_OK if all(r.returncode == 0 for r in results) else EXIT_REGRESSION
    if args.command == "models":
        return _models(args.sets, args.without_extra_rounds, args.centers)
    if args.command == "spans":
        from ..aa import spans
        from ..reading.load import load_files

        spreads = spans.spans_of_files(load_files(args.files), args.span or spans.DEFAULT_SPANS_S)
        sys.stdout.write(spans.render(spreads))
        return EXIT_OK
    if args.command == "drift":
        from ..aa import drift
        from ..reading.load import load_files

        files = load_files(args.files)
        if args.window is not None:
            sys.stdout.write(drift.render_windows(args.window, *drift.windows_of_files(files, args.window)))
        else:
            sys.stdout.write(drift.render(*drift.drift_of_files(files)))
        return EXIT_OK
    from ..aa import report_files

    if args.command == "floors":
        merged = report_files.merge_floors(args.reports, args.out, args.measured_on)
        sys.stdout.write(f"{args.out}: {len(merged)} floors, each the larger over {len(args.reports)} report(s)\n")
        return EXIT_OK
    from ..aa.altered import tick_floor_only
    from ..aa.analysis import report
    from ..aa.render import render
    from ..reading.load import load_files
    from ..stats.floors import load_floors

    floors = load_floors(args.floors)
    files = load_files(args.files)
    if args.tick_floor_only:
        files = [tick_floor_only(f) for f in files]
    agreement = report(files, slowdowns=args.slowdown, gate_pct=args.fail_on_regression, floors=floors)
    sys.stdout.write(render(agreement))
    if args.json:
        report_files.write_json(agreement, args.json)
    if args.floor:
        report_files.write_floor(agreement, args.floor)
    if args.check and not agreement.meets_targets():
        return EXIT_REGRESSION
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
