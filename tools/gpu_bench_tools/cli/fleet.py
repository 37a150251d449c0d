"""gpu-bench-fleet: the GPUs that lie outside their cohort, from each node's newest run (files or a history)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Sequence

from ..history import dburl
from .common import EXIT_OK, EXIT_REGRESSION, ArgumentParser, positive_float, positive_int, run
from ..reading.errors import InputError

PROG = "gpu-bench-fleet"
EXIT_NOT_JUDGED = 3  # nothing flagged and no problem, but of a cohort nothing could be judged


def _score(text: str) -> float:
    v = positive_float(text)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, not {text}")
    return v


def _share(text: str) -> float:
    v = positive_float(text)
    if not 0 < v <= 100:
        raise argparse.ArgumentTypeError(f"must be a percentage above 0, not {text}")
    return v


def _cohort(text: str) -> int:
    v = positive_int(text)
    if v < 3:
        raise argparse.ArgumentTypeError(f"must be 3 or more (a spread needs a few GPUs), not {text}")
    return v


def build_parser() -> ArgumentParser:
    from ..fleet.cohorts import MAX_SHARE, MIN_CASES, MIN_COHORT, MIN_EFFECT_PCT, SCORE

    p = ArgumentParser(prog=PROG, description="Group GPUs by model, host link and node shape and flag, for each "
                       "case's headline, the GPUs well outside their cohort; rank the worst. Exit 1 when a GPU is "
                       "flagged or a node's result is missing, unreadable, stale or has failed cases; else 3 when "
                       "nothing of a cohort could be judged (no case held by --min-cohort GPUs); 2 for bad usage.")
    p.add_argument("files", nargs="*", metavar="FILE.json",
                   help="one gpu_bench result per node; a path that does not exist is reported as a missing result")
    p.add_argument("--db", metavar="PATH|URL", help="judge the newest run of each machine in this history database "
                   f"instead (with no FILE and no --db: ${dburl.ENV}); never a URL with a password")
    p.add_argument("--format", choices=("table", "csv", "html", "json"), default="table")
    p.add_argument("--out", metavar="FILE", help="write there (whole or not at all) instead of to stdout")
    p.add_argument("--score", type=_score, default=SCORE,
                   help="robust score a GPU must reach: distance from the cohort's median over its MAD "
                   f"(default {SCORE:g})")
    p.add_argument("--min-effect", type=positive_float, default=MIN_EFFECT_PCT, metavar="PCT",
                   help=f"and how much worse than the median it must be, in percent (default {MIN_EFFECT_PCT:g})")
    p.add_argument("--min-cases", type=positive_int, default=MIN_CASES, metavar="N",
                   help=f"outlying case figures that flag a GPU; fewer are listed as lone outliers "
                   f"(default {MIN_CASES})")
    p.add_argument("--max-share", type=_share, default=MAX_SHARE * 100, metavar="PCT",
                   help="a case with more of a cohort's GPUs outside than this is reported as crowded, not per GPU "
                   f"(default {MAX_SHARE * 100:g})")
    p.add_argument("--min-cohort", type=_cohort, default=MIN_COHORT, metavar="N",
                   help=f"GPUs a cohort needs to be judged (default {MIN_COHORT})")
    p.add_argument("--split-driver", action="store_true", help="cohorts also by driver version")
    p.add_argument("--both-sides", action="store_true", help="flag GPUs far better than their cohort too")
    p.add_argument("--expect", metavar="FILE", help="host names, one a line ('-': standard input): each one "
                   "without a result is reported missing")
    p.add_argument("--max-age", type=_score, metavar="HOURS", help="a node whose newest result is older is "
                   "reported stale and not judged")
    p.add_argument("--limit", type=positive_int, default=100, help="rows of each list in the table (default 100)")
    p.add_argument("--jobs", type=positive_int, help="processes reading the files (default: CPUs, at most 8)")
    return p


def _expected(path: str | None) -> list[str]:
    if not path:
        return []
    if path == "-":
        text = sys.stdin.read()
    else:
        try:
            text = Path(path).read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"--expect {path}: cannot read ({getattr(e, 'strerror', None) or e})") from None
    return [ln.split("#", 1)[0].strip() for ln in text.splitlines() if ln.split("#", 1)[0].strip()]


def _write(path: str, text: str) -> None:
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent if str(target.parent) else ".")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    from ..fleet import cohorts, node_runs
    from ..fleet.render import RENDERERS

    if args.files and args.db:
        raise InputError("give result files or --db, not both")
    expect = _expected(args.expect)
    if args.files:
        inputs = node_runs.read_files(args.files, args.jobs)
    else:
        db = dburl.from_args(args.db, None)
        if not db:
            raise InputError(f"nothing to judge: give result files, or --db PATH|URL, or set {dburl.ENV}")
        inputs = node_runs.read_database(db)
    rep = cohorts.analyse(inputs, score=args.score, min_effect_pct=args.min_effect, min_cohort=args.min_cohort,
                        min_cases=args.min_cases, max_share=args.max_share / 100.0, split_driver=args.split_driver,
                        both_sides=args.both_sides, expect=expect, max_age_h=args.max_age)
    render = RENDERERS[args.format]
    text = render(rep, args.limit) if args.format == "table" else render(rep)
    if args.out:
        _write(args.out, text)
    else:
        sys.stdout.write(text)
    sys.stdout.flush()
    if args.format != "table" or args.out:
        for n in rep.notes:
            print(f"{PROG}: note: {n}", file=sys.stderr)
    if rep.failed:
        from ..fleet.render import summary

        print(f"{PROG}: {summary(rep)}", file=sys.stderr)
        return EXIT_REGRESSION
    if rep.unjudged:
        from ..fleet.render import not_judged

        print(f"{PROG}: {not_judged(rep)}", file=sys.stderr)
        return EXIT_NOT_JUDGED
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
