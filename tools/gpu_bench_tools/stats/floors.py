"""Between-run floors: how far one run's figure may lie from the next on the same machine, for files whose cases
ran in one round (gpu_bench --rounds=1, or files written before rounds). Such a file's noise_pct describes its
own process only; gpu-bench-compare widens every verdict on it to the floor.

The file (TOML) is what `gpu-bench-aa floors` writes: tables of the 90th percentile over a group's cases of the
relative standard deviation (percent) of one round's figure between processes, keyed by the case's spread
group (`"Transfer/dir:d2h/mem:pinned/size:large"`, stats/rounds.py), by family and memory kind
(`"Transfer/mem:pinned"`) and by family (`Transfer`). One table per GPU model the A/A runs measured
(`[machine."H200".floor_pct]`: the GPU models differ, and one model's floors are far wider than another's
need), and `[floor_pct]`, the larger of each over every model, for a GPU the file has no table of. Two
one-round runs then differ by more than 1.96 * sqrt(2) of a floor about one time in twenty.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..reading.errors import InputError

DEFAULT_FILE = "between_run_floor.toml"
# Two independent runs' difference has sqrt(2) times one run's deviation; 1.96 of those hold 95% of it.
SPREAD_TO_HALF_WIDTH = 1.96 * math.sqrt(2.0)


@dataclass(frozen=True)
class Floors:
    path: str
    sd_pct: dict[str, float]  # any machine: the larger over every GPU model measured
    source: str
    machines: dict[str, dict[str, float]] = field(default_factory=dict)  # GPU model -> its own floors

    def half_width_pct(self, family: str, mem: str | None = None, group: str | None = None,
                       gpu: str | None = None) -> float | None:
        """The half-width (percent) a one-round comparison of a case is widened to: from the table of GPU model
        `gpu` where the file has one (else the table of every model), the floor of the case's spread group
        `group`, else of its family and memory kind `mem`, else of its family; None if none is known."""
        table = self.machines.get(gpu, self.sd_pct) if gpu else self.sd_pct
        for key in (group, f"{family}/mem:{mem}" if mem else None, family):
            if key and key in table:
                return SPREAD_TO_HALF_WIDTH * table[key]
        return None

    def table_for(self, gpu: str | None) -> str:
        """Which table a GPU model's comparisons are widened by, in words."""
        return f"the {gpu} floors" if gpu in self.machines else "the floors of every GPU model measured"


def default_path() -> Path:
    return Path(__file__).with_name(DEFAULT_FILE)


def _table(doc: dict, where: str) -> dict[str, float]:
    table = doc.get("floor_pct")
    if not isinstance(table, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in table.values()):
        raise InputError(f"{where}: not a floors file (no [floor_pct] table of non-negative numbers)")
    return {str(k): float(v) for k, v in table.items()}


def load_floors(path: str | os.PathLike | None = None) -> Floors:
    from ..reading.files import read_toml

    p = Path(path) if path is not None else default_path()
    doc = read_toml(p, "a floors file")
    machines = doc.get("machine", {})
    if not isinstance(machines, dict) or not all(isinstance(v, dict) for v in machines.values()):
        raise InputError(f"{p}: [machine.NAME] tables must each hold a [floor_pct] table")
    return Floors(str(p), _table(doc, str(p)), str(doc.get("measured_on", "")),
                  {str(k): _table(v, f"{p} [machine.{k}]") for k, v in machines.items()})
