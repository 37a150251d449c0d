"""Does a pair's host-driven move follow how soon after its host's start run 1 began? Every pair of
calibration.py (run 1 of a call starts a minute or two after its machine), with host.uptime_s in both runs.

Usage: python3 uptime.py (from this folder; scipy, as the tools). Writes uptime.txt's text to standard output."""
import math
import statistics

from scipy.stats import spearmanr

from calibration import HOST_DRIVEN, family, pairs


def uptime_min(context):
    try:
        return float(str(context.get("host.uptime_s")).split()[0]) / 60
    except ValueError:
        return math.nan


rows = []
for name, k, moves, (earlier, later) in pairs():
    host_driven = [m for n, m, _ in moves if any(family(n).startswith(h) for h in HOST_DRIVEN)]
    rows.append((name, k, uptime_min(earlier), uptime_min(later), statistics.median(host_driven)))
print("pair, the host's age at each run's start (min), the host-driven cases' median move (+ slower in the later run)")
for name, k, a, b, move in rows:
    print(f"  {name:30s} pair {k}: {a:5.1f} -> {b:5.1f} min, {move:+.2f}%")
known = [r for r in rows if not math.isnan(r[2])]
rho, p = spearmanr([r[2] for r in known], [r[4] for r in known])
print(f"Spearman's rho of the earlier run's age and the move: {rho:+.2f} (p {p:.2g}, {len(known)} pairs)")
slower = sum(r[4] > 0 for r in known)
print(f"the later run slower in {slower} of {len(known)} pairs, faster in {len(known) - slower}")
