"""How the report writes a figure: its interval, a percentage, what is not repeatable or varies with the
machine, and the legends that say so; text escaped for HTML, paths relative to the project."""

from __future__ import annotations

import html
import math
import os
from pathlib import Path

from ..compare.render import fmt_num
from ..reading.families import MACHINE_VARIANCE_PCT
from ..reading.load import Case


# What a figure's "± h" means, said once under the tables that show one.
PLUS_MINUS_LEGEND = ("± is the interval the next independent run's figure falls in at least 90% of the time "
                     "(noise_pct)")
DETECTS_LEGEND = ("detects N%: the smallest change gpu-bench-compare calls between two runs like these "
                  "(detectable_pct; a smaller change reads as the same, whatever it is)")
# What a figure whose interval reaches zero is written as, said once under the tables that show one.
NOT_REPEATABLE = "not repeatable"
NOT_REPEATABLE_LEGEND = (f"{NOT_REPEATABLE}: the figure's interval is wider than the figure itself, so the next run "
                         "may measure anything from nothing to twice as much")
# What a figure whose spread is the machine's own is written with, in place of its interval, and what that means.
VARIES_WITH = "varies with"
VARIES_LEGEND = (f"{VARIES_WITH} ...: the case's spread between processes passes {MACHINE_VARIANCE_PCT:g}% and is "
                 "the machine's own, which its family's descriptor names and gpu_bench cannot remove")


def _e(s: object) -> str:
    return html.escape(str(s), quote=True)


def project_paths(text: str) -> str:
    """`text` with the absolute paths a note may hold made short: the tools' own files (the shipped floors)
    as the project names them, tools/gpu_bench_tools/..., wherever the package is installed; any other
    under the working directory relative to it, as the input files are given."""
    package = Path(__file__).parent.parent
    for root in dict.fromkeys((str(package), str(package.resolve()))):
        text = text.replace(root + os.sep, "tools/gpu_bench_tools/")
    return text.replace(os.getcwd() + os.sep, "")


def noise_half_width(case: Case, value: float | None) -> float | None:
    """The half-width of the interval gpu_bench wrote around the case's headline (noise_pct), in the unit of
    `value`; None where the file has no noise_pct for the case."""
    pct = case.written_noise_pct()
    if pct is None or value is None or not math.isfinite(value):
        return None
    return abs(value) * pct / 100.0


def significant(v: float, digits: int = 2) -> str:
    """v to `digits` significant digits in fixed point: 310, 0.0042, 9700 (never 3.1e+02)."""
    if v == 0 or not math.isfinite(v):
        return fmt_num(v)
    decimals = digits - 1 - math.floor(math.log10(abs(v)))
    return f"{round(v, decimals):.{max(decimals, 0)}f}"


def fmt_pct(p: float) -> str:
    """A percentage to two significant digits, in fixed point: '1.2%', '48%', '9700%'."""
    return significant(p) + "%"


def repeatable(value: float, half: float | None) -> bool:
    """Whether a figure's interval leaves it above zero: one that reaches zero says nothing of the next run."""
    return half is None or not math.isfinite(half) or not math.isfinite(value) or half < abs(value)


def fmt_interval(value: float, half: float | None) -> str:
    """'52.34 ± 0.26': the half-width to two significant digits and the value to the same decimal place,
    so that no digit is shown that the interval says is noise; fmt_num's digits where there is no half-width.
    A figure whose interval is wider than itself reads '310, not repeatable' (two significant digits): rounded
    to the interval's place, it would read 0."""
    if half is None or not math.isfinite(half) or not math.isfinite(value):
        return fmt_num(value)
    if half == 0:
        return f"{fmt_num(value)} ± 0"
    if not repeatable(value, half):
        return f"{significant(value)}, {NOT_REPEATABLE}"
    half = float(f"{half:.1e}")  # rounded first: 0.000999 is 0.0010, two digits, not 0.00100
    decimals = 1 - math.floor(math.log10(half))
    if decimals > 6:  # fixed point would be mostly zeros
        return f"{fmt_num(value)} ± {half:.2g}"
    places = max(decimals, 0)
    return f"{round(value, decimals):.{places}f} ± {round(half, decimals):.{places}f}"


def fmt_varying(value: float, unit: str, cause: str, where: str = "") -> str:
    """A figure whose spread is the machine's own, with its cause in place of its interval, after `where` it is:
    '2.1 us at sync: none, varies with the host CPU's state, ...' (two significant digits)."""
    return f"{significant(value)}{' ' + unit if unit else ''}{where}, {VARIES_WITH} {cause}"


def fmt_figure(value: float, half: float | None, unit: str) -> str:
    """A headline figure with its unit: '52.34 ± 0.26 GB/s', '310 us, not repeatable', '47.67 GB/s'."""
    text = fmt_interval(value, half)
    if not repeatable(value, half):
        return text.replace(",", f" {unit},", 1) if unit else text
    return f"{text} {unit}" if unit else text
