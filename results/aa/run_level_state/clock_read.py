"""Does a run's level follow the host's clock read at its start (host.clock_read_ns, the parent process's)?

For every committed run with that key, per GPU with four runs or more: Spearman's rank correlation between
host.clock_read_ns and a case's figure. Usage: python3 clock_read.py (from this folder; needs scipy, as the
tools do). Writes the table to standard output (clock_read.txt)."""
import collections
import glob
import gzip
import json

from scipy.stats import spearmanr

CASES = ["Events/op:record/timing:off", "Events/op:query/timing:off", "Transfer/dir:h2d/mem:pageable/bytes:1048576",
         "HostBlocking/mem:pageable/bytes:1048576/mode:sync_copy", "SyncPlacement/op:add/sync:after"]

runs = collections.defaultdict(list)  # GPU -> (clock read, {case: figure})
for path in sorted(glob.glob("../**/*.json.gz", recursive=True)):
    if "report" in path:
        continue
    try:
        with gzip.open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        continue
    if not isinstance(doc, dict) or "host.clock_read_ns" not in doc.get("context", {}):
        continue
    figures = {}
    for b in doc.get("benchmarks", []):
        for case in CASES:
            if b.get("run_type") == "iteration" and b["name"].startswith(case + "/"):
                figures[case] = b["real_time"]
    runs[doc["context"].get("gpu.uuid", "")[:12]].append((float(doc["context"]["host.clock_read_ns"]), figures))

print(f"{'case':<58} {'GPU':<13} {'runs':>4} {'Spearman':>8}")
for case in CASES:
    for gpu, rows in sorted(runs.items()):
        pairs = [(clock, figures[case]) for clock, figures in rows if case in figures]
        if len(pairs) >= 4:
            rho = spearmanr([c for c, _ in pairs], [v for _, v in pairs]).statistic
            print(f"{case:<58} {gpu:<13} {len(pairs):>4} {rho:>8.2f}")
