"""gpu-bench-export: a gpu_bench run as Prometheus metrics, for node_exporter's textfile collector or a
Pushgateway; with --check-errored, a check that could not judge its node. All or nothing: every check comes
first, then the push, then the file (atomically)."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path
from typing import Sequence

from .common import EXIT_OK, ArgumentParser, positive_float, run
from ..reading.errors import InputError
from ..fleet.expectations import load_expectations
from ..fleet.gate import judge, judge_again
from ..reading.load import load_file
from ..reading.multigpu import first_gpu_facts_note

PROG = "gpu-bench-export"


def build_parser() -> ArgumentParser:
    p = ArgumentParser(
        prog=PROG,
        description="Write a gpu_bench run as Prometheus metrics: figures in base units with dcgm-exporter's GPU "
        "labels and the case's axes, the gate verdict (with the later measurements the gate kept beside the run, "
        "RESULTS.retryN.json), and the time of the last successful run. --out writes "
        "DIR/gpu_bench_PRESET.prom for node_exporter's textfile collector (a temporary file, then a rename); "
        "--pushgateway pushes the same. Credentials come from the environment (docs/fleet.md), never from "
        "the command line.",
    )
    p.add_argument("results", metavar="RESULTS.json", nargs="?", help="gpu_bench --benchmark_out file")
    p.add_argument("--check-errored", metavar="WHY",
                   help="instead of a run: the check could not judge this node (a tool missing, no results, a "
                   "timeout; WHY is for the message only). Writes the verdict errored, gpu_bench_check_errored 1 "
                   "and keeps the last success; needs --preset")
    p.add_argument("--preset", help="with --check-errored: the preset the check ran")
    p.add_argument("--host", help="with --check-errored: the Hostname label (default this machine's host name, "
                   "as gpu_bench writes it)")
    p.add_argument("--format", choices=("prometheus",), default="prometheus",
                   help="the exposition format (prometheus: the text format node_exporter and Pushgateway read)")
    p.add_argument("--out", metavar="DIR", help="node_exporter's --collector.textfile.directory (created if missing)")
    p.add_argument("--pushgateway", metavar="URL", help="http(s)://HOST:PORT of a Pushgateway")
    p.add_argument("--job", default="gpu_bench", help="the Pushgateway job (default gpu_bench); the group is "
                   "instance=HOST, preset=PRESET")
    p.add_argument("--timeout", type=positive_float, default=10.0, metavar="S",
                   help="seconds to wait for the Pushgateway (default 10)")
    p.add_argument("--expect", metavar="FILE", help="expectations for the verdict (default: the shipped file)")
    return p


def _main(argv: Sequence[str] | None) -> int:
    from ..fleet import prometheus as prom

    args = build_parser().parse_args(argv)
    if not args.out and not args.pushgateway:
        raise InputError("give --out DIR, --pushgateway URL, or both")
    if args.timeout <= 0:
        raise InputError("--timeout must be more than 0 seconds")
    if args.check_errored is not None:
        if args.results or args.expect:
            raise InputError("--check-errored publishes that the check could not judge the node: give no "
                             "RESULTS.json and no --expect with it")
        if not args.preset:
            raise InputError("--check-errored needs --preset, the preset the check ran")
        host, preset = args.host or socket.gethostname(), args.preset
        word = "ERRORED (the check could not judge the node)"
    else:
        if not args.results:
            raise InputError("give RESULTS.json, or --check-errored WHY")
        if args.preset or args.host:
            raise InputError("--preset and --host go with --check-errored; a run's own are in its file")
        expect = load_expectations(args.expect)
        f = load_file(args.results, require_figures=False)
        verdict = judge(f, expect)
        _judge_kept_measurements(verdict, f)
        note = first_gpu_facts_note([f])
        if note:
            print(f"{PROG}: note: {note}", file=sys.stderr)
        (host, preset), word = prom.run_node(f), verdict.word
    target = _folder(args.out, preset) if args.out else None
    if args.pushgateway:
        from ..fleet.pushgateway import checked_url, credentials_from_env

        creds = credentials_from_env()
        url = checked_url(args.pushgateway, creds)
    previous = prom.previous_success(target, host, preset) if target else None
    if args.check_errored is not None:
        registry = prom.check_errored_registry(host, preset, previous)
    else:
        registry = prom.registry_for(f, verdict, previous)
    if args.pushgateway:
        from ..fleet.pushgateway import push

        group = prom.grouping_key(host, preset)
        try:
            push(url, args.job, registry, group, creds, args.timeout)
        except InputError as e:
            raise InputError(f"{e}; {target} was not written" if target else str(e)) from None
        print(f"pushed to {url}: job {args.job}, instance {group['instance']}, preset {group['preset']}; "
              f"gate {word}")
    if target:
        try:
            prom.write_textfile(target.parent, preset, registry)
        except OSError as e:
            raise InputError(f"--out {target.parent}: cannot write {target.name} ({e.strerror or e}); "
                             "the old file is left as it was") from None
        print(f"wrote {target}; gate {word}")
    return EXIT_OK


def _judge_kept_measurements(verdict, f) -> None:
    """The later measurements gpu-bench-gate kept beside the run (RESULTS.retryN.json), judged as the gate
    judged them, so that the exported verdict is the gate's."""
    from ..fleet.measure_again import kept_retries

    for n, path in enumerate(kept_retries(f.path), 2):
        if not verdict.to_measure_again:
            return
        try:
            why = judge_again(verdict, f, load_file(path, require_figures=False), n)
        except InputError as e:
            why = str(e)
        if why:
            print(f"{PROG}: note: {path} is not used: {why}", file=sys.stderr)
            return


def _folder(folder: str, preset: str) -> Path:
    """The textfile to write, once the folder is known to take it."""
    from ..fleet.prometheus import textfile_name

    d = Path(folder)
    if not d.exists():
        try:
            d.mkdir(parents=True)
        except OSError as e:
            raise InputError(f"--out {d}: cannot create it ({e.strerror or e})") from None
    if not d.is_dir():
        raise InputError(f"--out {d}: not a folder")
    if not os.access(d, os.W_OK | os.X_OK):
        raise InputError(f"--out {d}: cannot write there (permission denied); the old file is left as it was")
    return d / textfile_name(preset)


def main(argv: Sequence[str] | None = None) -> int:
    return run(PROG, _main, argv)


if __name__ == "__main__":
    sys.exit(main())
