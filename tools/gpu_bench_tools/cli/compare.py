"""gpu-bench-compare: the same cases side by side across files, with verdicts against the first."""

from __future__ import annotations

import re
import sys
from typing import Sequence

from ..compare.cells import ROUNDS_NEEDED, merge_runs, one_round_side
from ..compare.verdicts import compare
from ..stats.rounds import MIN_EFFECT_ONE_ROUND_PCT, MIN_EFFECT_PCT
from ..compare import render
from ..compare.render import cut
from .common import (EXIT_OK, EXIT_REGRESSION, ArgumentParser, positive_float, positive_int, probability, run,
                   want_colour)
from ..reading.load import InputError, load_files

PROG = "gpu-bench-compare"


def build_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog=PROG,
        description="Compare gpu_bench JSON files case by case against the first file, on each family's "
        "headline figure (from its descriptor; GB/s or time in older files). A case is faster or slower when "
        "the change is at least --min-effect, larger than the noise of both sides (each file's noise_pct: the "
        "interval its next run falls in; for a file of one round, at least its family's between-run floor) and "
        "significant: Welch's t-test on the rounds where both sides have several (gpu_bench's default), else a "
        "Mann-Whitney U test on the case's samples.",
    )
    p.add_argument("files", nargs="+", metavar="FILE.json",
                   help="the first file (or the first --per-side files) is the baseline")
    p.add_argument("--per-side", type=positive_int, default=1, metavar="N",
                   help="each side is N runs of the same command, given one after the other (e.g. three runs of "
                   "each machine: --per-side 3 a1 a2 a3 b1 b2 b3); a case is then judged on every run's rounds")
    p.add_argument("--one-round", action="store_true",
                   help="judge a side of one round (gpu_bench --rounds=1, or a file from before rounds) on the "
                   "between-run floors rather than refusing it; those floors are wide, so only large changes show")
    p.add_argument("--floors", metavar="FILE", help="between-run floors for --one-round (TOML, as "
                   "gpu-bench-aa report --floor or gpu-bench-aa floors writes it; default: the one shipped with the "
                   "tools)")
    p.add_argument("--metric", help="compare this counter (gbps, time, host_blocked_us, ...) for every case")
    p.add_argument("--filter", metavar="REGEX", help="only cases whose name matches REGEX (re.search)")
    p.add_argument("--format", choices=("table", "markdown", "csv", "json"), default="table")
    p.add_argument("--fail-on-regression", type=positive_float, metavar="PCT",
                   help="exit 1 when a case is slower than in the first file by more than PCT percent, beyond "
                   "the noise of both sides, and the test (or, for one round a side, the floor) says it is real: its "
                   "p-value adjusted over every case compared (Benjamini-Hochberg) below --alpha")
    p.add_argument("--alpha", type=probability, default=0.05,
                   help="significance level, between 0 and 1 (default 0.05)")
    p.add_argument("--min-effect", type=positive_float, default=None, metavar="PCT",
                   help=f"smallest change in percent called faster or slower (default {MIN_EFFECT_PCT:g} "
                   f"where both sides have rounds, {MIN_EFFECT_ONE_ROUND_PCT:g} where a side has one)")
    p.add_argument("--color", "--colour", dest="colour", choices=("auto", "always", "never"), default="auto")
    return p


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    n = args.per_side
    got = len(args.files)
    if n == 1 and got < 2:
        raise InputError(f"give at least two files to compare, the first the baseline; got {got}")
    if got % n or got < 2 * n:
        raise InputError(f"--per-side {n} takes {n} files a side, so a multiple of {n}, at least {2 * n} (the first "
                         f"{n} are the baseline); got {got}")
    if args.filter:
        re.compile(args.filter)
    from ..stats.floors import load_floors

    floors = load_floors(args.floors)
    loaded = load_files(args.files)
    files = [merge_runs(loaded[k:k + n]) for k in range(0, len(loaded), n)]
    if not args.one_round:
        for f in files:
            if one_round_side(f):
                raise InputError(
                    f"{f.path} ran each case in one round, whose spread says nothing of the next process's, so "
                    f"no change within the between-run floors can be called; compare needs at least "
                    f"{ROUNDS_NEEDED} rounds a side (gpu_bench's default --rounds={ROUNDS_NEEDED}, "
                    f"or --per-side {ROUNDS_NEEDED} with as many runs of one round), or --one-round to "
                    "judge on the floors anyway")
    result = compare(files, metric=args.metric, case_filter=args.filter, alpha=args.alpha,
                             min_effect_pct=args.min_effect, floors=floors)
    if args.metric and not result.rows:
        have = sorted({k for f in files for c in f.cases.values() for s in c.samples for k in s.counters})
        raise InputError(f"no case has a {args.metric!r} counter; counters in these files: "
                         + (", ".join(["time", "cpu_time"] + have)))
    if args.filter and not result.rows and not result.only_in:
        raise InputError(f"no case matches --filter {args.filter!r}")
    if args.format == "table":
        out = render.render_table(result, colour=want_colour(args.colour))
    elif args.format == "markdown":
        out = render.render_markdown(result)
    elif args.format == "csv":
        out = render.render_csv(result)
    else:
        out = render.render_json(result)
    sys.stdout.write(out)
    sys.stdout.flush()
    if args.format != "table":
        for w in result.warnings:
            print(f"{PROG}: warning: {w}", file=sys.stderr)
    if args.fail_on_regression is not None:
        pct = args.fail_on_regression
        bad = result.regressions(pct)
        chance = [x for x in result.slower_beyond(pct) if x not in bad]
        if chance:
            print(f"{PROG}: note: {len(chance)} case(s) called slower by more than {pct:g}% are not counted as "
                  f"regressions: over every case compared, their p-values are what chance gives (Benjamini-Hochberg "
                  f"q >= {args.alpha:g}): {_slower_list(chance)}", file=sys.stderr)
        if bad:
            print(f"{PROG}: {len(bad)} regression(s) beyond {pct:g}%:", file=sys.stderr)
            shown, more = cut(bad, 20)
            for row, i in shown:
                v = row.versus[i]
                if v.p_value is None:
                    why = f"beyond the floor of {v.noise_pct:.1f}%"
                else:
                    why = f"p={v.p_value:.2g}" + (f", q={v.q_value:.2g} over every case" if v.q_value is not None else "")
                print(f"  [{i + 1}] {row.key}: {v.slowdown_pct:.1f}% slower ({why})", file=sys.stderr)
            if more:
                print(f"  {more}", file=sys.stderr)
            return EXIT_REGRESSION
    return EXIT_OK


def _slower_list(found) -> str:
    """The first three of (row, file index), each with how much slower and its p and q."""
    shown = [f"[{i + 1}] {row.key} {row.versus[i].slowdown_pct:.1f}% (p={row.versus[i].p_value:.2g}, "
             f"q={row.versus[i].q_value:.2g})" for row, i in found[:3]]
    return "; ".join(shown) + (f"; and {len(found) - 3} more" if len(found) > 3 else "")


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
