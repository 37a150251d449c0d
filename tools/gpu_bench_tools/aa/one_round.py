"""One round a side: every round of run k against every round of run k+1, judged as gpu-bench-compare
judges files of one round, against the between-run floors."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Sequence

from ..compare.verdicts import verdict
from ..reading.multigpu import short_gpu_name
from ..reading.results import BenchmarkFile
from ..stats import floors as floors_module
from ..stats.floors import Floors
from ..stats.rounds import MIN_EFFECT_ONE_ROUND_PCT, spread_group
from .agreement import OneRound
from .figures import is_detection_copy, round_times


def one_round_comparisons(files: list[BenchmarkFile], floors: Floors, slowdowns: Sequence[float] = ()) -> OneRound:
    """Every round of run k against every round of run k+1, as gpu-bench-compare judges two files of one
    round: called when the change is at least compare's minimum effect for one round a side and
    beyond the floor of the case's spread group on the runs' GPU model. With `slowdowns`, the same for the
    pinned and registered copies of 1 MiB and more with the later round made that much slower: how many are
    called slower."""
    shipped = Path(floors.path).resolve() == floors_module.default_path().resolve()
    name = "the shipped floors" if shipped else Path(floors.path).name
    gpu = short_gpu_name(files[0].fact("gpu.name") or "") if files else ""
    out = OneRound(f"{name}, {floors.table_for(gpu)}")
    out.slowed = {float(pct): [0, 0] for pct in slowdowns}
    unfloored: set[str] = set()
    for a, b in zip(files, files[1:]):
        for key, case in a.cases.items():
            if key not in b.cases:
                continue
            ra, rb = round_times(a, key), round_times(b, key)
            if not ra or not rb:
                continue
            group = spread_group(key, a.spread_axes(case.family))
            half = floors.half_width_pct(case.family, case.axis("mem"), group, gpu)
            if half is None:
                unfloored.add(case.family)
                continue
            detection = is_detection_copy(a, case)
            for x, y in itertools.product(ra, rb):
                if x > 0 and y > 0:
                    # compare's own rule for an untested pair: the speed of run k+1's round over run k's.
                    out.compared += 1
                    out.called += verdict(x / y, None, 0.05, MIN_EFFECT_ONE_ROUND_PCT, half) in ("faster", "slower")
                    if detection:
                        for pct, counts in out.slowed.items():
                            slower = x / (y * (1 + pct / 100.0))
                            counts[0] += verdict(slower, None, 0.05, MIN_EFFECT_ONE_ROUND_PCT, half) == "slower"
                            counts[1] += 1
    out.unfloored = sorted(unfloored)
    return out
