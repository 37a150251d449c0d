"""Between-run floors: how far one run's figure may lie from the next on the same machine, per family, for
files whose cases ran in one round (gpu_bench --rounds=1, or files written before rounds). Such a file's
noise_pct describes its own process only; gpu-bench-compare widens every verdict on it to the floor.

The file (TOML) is what `gpu-bench-aa report --floor FILE` writes: under [floor_pct], per family (`Transfer`)
and per family and memory kind (`"Transfer/mem:pinned"`), the 90th percentile over its cases of the relative
standard deviation (percent) of one round's figure between processes. Two one-round runs then differ by more than 1.96 * sqrt(2) of it about one time in twenty.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from ..reading.errors import InputError

DEFAULT_FILE = "between_run_floor.toml"
# Two independent runs' difference has sqrt(2) times one run's deviation; 1.96 of those hold 95% of it.
SPREAD_TO_HALF_WIDTH = 1.96 * math.sqrt(2.0)


@dataclass(frozen=True)
class Floors:
    path: str
    sd_pct: dict[str, float]
    source: str

    def half_width_pct(self, family: str, mem: str | None = None) -> float | None:
        """The half-width (percent) a one-round comparison of a case of `family` (and memory kind `mem`) is
        widened to: the family and memory kind's floor where the file has one, else the family's; None if
        neither is known."""
        sd = self.sd_pct.get(f"{family}/mem:{mem}") if mem else None
        if sd is None:
            sd = self.sd_pct.get(family)
        return None if sd is None else SPREAD_TO_HALF_WIDTH * sd


def default_path() -> Path:
    return Path(__file__).with_name(DEFAULT_FILE)


def load_floors(path: str | os.PathLike | None = None) -> Floors:
    from ..reading.reading import read_toml

    p = Path(path) if path is not None else default_path()
    doc = read_toml(p, "a floors file")
    table = doc.get("floor_pct")
    if not isinstance(table, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in table.values()):
        raise InputError(f"{p}: not a floors file (no [floor_pct] table of non-negative numbers)")
    return Floors(str(p), {str(k): float(v) for k, v in table.items()}, str(doc.get("measured_on", "")))
