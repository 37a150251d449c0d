"""Rendering a comparison: the terminal table, markdown, CSV and JSON."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import asdict

from ..reading.names import human_bytes
from .record import (CHANGED_VERDICT, CHANGED_VERDICT_KEY, MACHINE_VERDICT, MACHINE_VERDICT_KEY, Cell, Comparison,
                     GroupSummary, Row, Versus)


def fmt_num(v: float | None) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    a = abs(v)
    if a >= 1000:
        return f"{v:.0f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 10:
        return f"{v:.2f}"
    if a >= 1:
        return f"{v:.3f}"
    if a >= 0.01:
        return f"{v:.4f}"
    return f"{v:.3g}"


# The history's and the fleet's texts cut their lists as the comparison's does.
def cut(items: list, limit: int) -> tuple[list, str | None]:
    """The first `limit` items, and the line that says how many were left out (None if none were)."""
    if len(items) <= limit:
        return items, None
    return items[:limit], f"... and {len(items) - limit} more"


def fmt_verdict(v: Versus | None, with_p: bool = False) -> str:
    """The verdict in words: a noisy one whose side varies with the machine's own state says so, with no p."""
    if v is None:
        return ""
    if v.machine_variance:
        return MACHINE_VERDICT
    if v.measured_differently:
        return CHANGED_VERDICT
    s = v.verdict if v.tested or v.verdict not in ("faster", "slower") else v.verdict + "?"
    if with_p and v.p_value is not None:
        s += f" (p={v.p_value:.2g})"
    return s


def fmt_ratio(v: Versus | None) -> str:
    return "-" if v is None or v.ratio is None else f"{v.ratio:.3f}"


def fmt_cell(c: Cell | None) -> str:
    if c is None:
        return "missing"
    if c.center is None:
        return "error" if c.problem and c.problem.startswith("error") else "-"
    s = fmt_num(c.center)
    # A spread that is the machine's own is said by the verdict and the notes, not as a percentage.
    if c.cv_pct is not None and c.cv_pct >= 5.0 and c.machine_cause is None:
        s += f" ±{c.cv_pct:.0f}%"
    return s


def file_lines(cmp: Comparison) -> list[str]:
    return [f"[{i + 1}] {lab}  ({p})" for i, (p, lab) in enumerate(zip(cmp.paths, cmp.labels))]


_GPU_FACT = re.compile(r"GPU (\d+)( .*)?$")
_GPU_PAIR = re.compile(r"GPU (\d+) -> (\d+)$")


def _numbers(ns: list[int]) -> str:
    """'1-3' for a run of numbers, else '0, 2'."""
    return f"{ns[0]}-{ns[-1]}" if len(ns) > 2 and ns == list(range(ns[0], ns[-1] + 1)) else ", ".join(map(str, ns))


def merged_facts(diff: list[tuple[str, list[str]]]) -> list[tuple[str, list[str]]]:
    """The facts that differ, with the GPUs of a node that have the same value of a fact in every file on one
    row ('GPU 1-3 host link'), and so the links of GPU pairs ('12 GPU pairs'), where the first is."""
    groups: dict[tuple, list[int]] = {}
    order: list[tuple] = []
    for n, (label, vals) in enumerate(diff):
        pair, fact = _GPU_PAIR.match(label), _GPU_FACT.match(label)
        key = ("pair", tuple(vals)) if pair else ("gpu", fact.group(2) or "", tuple(vals)) if fact else ("row", n)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(n)
    # A fact's rows stay together where the first GPU's row of it is.
    first_of = {}
    for key in order:
        first_of.setdefault(key[1] if key[0] == "gpu" else key, groups[key][0])
    order.sort(key=lambda k: (first_of[k[1] if k[0] == "gpu" else k], groups[k][0]))
    out = []
    for key in order:
        rows = [diff[n] for n in groups[key]]
        if key[0] == "row" or len(rows) == 1:
            out += rows
        elif key[0] == "pair":
            pairs = [_GPU_PAIR.match(label).groups() for label, _ in rows]
            shown = ", ".join(f"{a}->{b}" for a, b in pairs[:3]) + (", ..." if len(pairs) > 3 else "")
            out.append((f"{len(pairs)} GPU pairs ({shown})", rows[0][1]))
        else:
            gpus = sorted(int(_GPU_FACT.match(label).group(1)) for label, _ in rows)
            out.append((f"GPU {_numbers(gpus)}{key[1]}", rows[0][1]))
    return out


def facts_lines(cmp: Comparison) -> list[str]:
    """What differs between the files' machines, a row per fact."""
    if cmp.context_diff:
        lines = ["What differs between the files:"]
        grid = [["", *[f"[{i + 1}]" for i in range(len(cmp.paths))]]] + [
            [k, *v] for k, v in merged_facts(cmp.context_diff)]
        widths = [max(len(r[j]) for r in grid) for j in range(len(grid[0]))]
        for r in grid:
            lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        return lines
    return ["The machines' facts are the same in every file."] if len(cmp.paths) > 1 else []


def header_lines(cmp: Comparison) -> list[str]:
    return file_lines(cmp) + facts_lines(cmp)


# ---------------------------------------------------------------------------------------------
# the answer: the verdicts per family, memory kind, direction and size band

# The order a group's verdicts are told in, and how each is said.
ANSWER_VERDICTS = ("faster", "slower", "same", "noisy", MACHINE_VERDICT_KEY, CHANGED_VERDICT_KEY, "faster?", "slower?",
                   "error", "missing")


def fmt_speed(v: float) -> str:
    """A speed to two decimals, three where two would read 1.00."""
    s = f"{v:.2f}"
    return f"{v:.3f}" if s == "1.00" else s


def fmt_speeds(speeds: list[float]) -> str:
    """'1.13-1.43x', or '1.02x' where the smallest and largest read the same."""
    vals = sorted(v for v in speeds if math.isfinite(v))
    if not vals:
        return ""
    lo, hi = fmt_speed(vals[0]), fmt_speed(vals[-1])
    return f"{lo}x" if lo == hi else f"{lo}-{hi}x"


def group_label(g: GroupSummary) -> str:
    """'Transfer h2d pinned'; the family alone where it has none of the axes."""
    return " ".join([g.family] + [v for _, v in g.axes])


def group_sizes(g: GroupSummary) -> str:
    """'1 MiB-1 GiB', '256 MiB', or '' for cases without a size."""
    if g.sizes is None:
        return ""
    lo, hi = (human_bytes(n) for n in g.sizes)
    return lo if lo == hi else f"{lo}-{hi}"


def group_parts(g: GroupSummary, i: int) -> list[str]:
    """What file i's verdicts against the first say of the group: each verdict's count and its speeds."""
    parts = []
    for k in ANSWER_VERDICTS:
        speeds = g.speeds[i].get(k)
        if not speeds:
            continue
        n = len(speeds)
        if k in ("faster", "slower"):
            parts.append(f"{n} {k} {fmt_speeds(speeds)}")
        elif k == "same":
            within = max(abs(v - 1.0) * 100.0 for v in speeds if math.isfinite(v))
            parts.append(f"{n} same (within {within:.2g}%)" if within >= 0.01 else f"{n} same (within 0.01%)")
        elif k == "noisy":
            parts.append(f"{n} within the noise ({fmt_speeds(speeds)})")
        elif k == MACHINE_VERDICT_KEY:
            parts.append(f"{n} within {MACHINE_VERDICT} ({fmt_speeds(speeds)})")
        elif k == CHANGED_VERDICT_KEY:
            parts.append(f"{n} {CHANGED_VERDICT} ({fmt_speeds(speeds)})")
        elif k in ("faster?", "slower?"):
            parts.append(f"{n} {k} {fmt_speeds(speeds)} (untested)")
        else:
            parts.append(f"{n} without a figure" if k == "error" else f"{n} missing")
    return parts


def answer_heading(i: int) -> list[str]:
    return [f"How [{i + 1}] compares with [1]: the verdicts of the cases below, per family, memory kind, direction "
            "and size band.",
            f"x is [{i + 1}]'s speed over [1]'s (above 1 is faster); faster and slower are beyond both runs' noise."]


def answer_lines(cmp: Comparison) -> list[str]:
    """The answer first: per group of cases, where file i differs from the first beyond the noise, by how
    much, where it is the same and within what."""
    lines: list[str] = []
    for i in range(1, len(cmp.paths)):
        grid = [[group_label(g), group_sizes(g), f"{g.cases} case{'s' if g.cases > 1 else ''}",
                 "; ".join(group_parts(g, i))] for g in cmp.groups]
        if not grid:
            continue
        widths = [max(len(r[j]) for r in grid) for j in range(3)]
        if lines:
            lines.append("")
        lines += answer_heading(i)
        for r in grid:
            lines.append("  " + "  ".join([r[0].ljust(widths[0]), r[1].ljust(widths[1]), r[2].rjust(widths[2]),
                                           r[3]]).rstrip())
    return lines


def table_columns(cmp: Comparison) -> list[str]:
    cols = ["case", "unit", "[1]"]
    for i in range(2, len(cmp.paths) + 1):
        cols += [f"[{i}]", f"[{i}]/[1]", f"verdict [{i}]"]
    return cols


def row_cells(cmp: Comparison, row: Row, with_p: bool = False) -> list[str]:
    out = [row.key, row.unit, fmt_cell(row.cells[0])]
    for i in range(1, len(cmp.paths)):
        out += [fmt_cell(row.cells[i]), fmt_ratio(row.versus[i]), fmt_verdict(row.versus[i], with_p)]
    return out


_COLOURS = {"faster": "\033[32m", "slower": "\033[31m", "noisy": "\033[33m", "error": "\033[35m"}


def render_table(cmp: Comparison, colour: bool = False) -> str:
    lines = file_lines(cmp)
    answer = answer_lines(cmp)
    if answer:
        lines += [""] + answer
    facts = facts_lines(cmp)
    if facts:
        lines += [""] + facts
    lines.append("")
    cols = table_columns(cmp)
    body = [row_cells(cmp, r) for r in cmp.rows]
    widths = [max(len(c) for c in col) for col in zip(cols, *body)] if body else [len(c) for c in cols]

    def fmt(cells: list[str], paint: bool) -> str:
        parts = []
        for j, (c, w) in enumerate(zip(cells, widths)):
            text = c.ljust(w) if j == 0 else c.rjust(w)
            if paint and cols[j].startswith("verdict"):
                code = _COLOURS.get(c.split(" ")[0].rstrip("?"))
                if code:
                    text = f"{code}{text}\033[0m"
            parts.append(text)
        return "  ".join(parts).rstrip()

    lines.append(fmt(cols, False))
    lines.append("  ".join("-" * w for w in widths))
    lines.extend(fmt(b, colour) for b in body)
    if cmp.only_in:
        lines.append("")
        lines.append(f"Cases not in every file ({len(cmp.only_in)}):")
        for key, present in cmp.only_in[:50]:
            lines.append(f"  {key}  only in " + " ".join(f"[{i + 1}]" for i in present))
        if len(cmp.only_in) > 50:
            lines.append(f"  ... and {len(cmp.only_in) - 50} more")
    problems = [(r.key, i, c.problem) for r in cmp.rows for i, c in enumerate(r.cells) if c and c.problem]
    if problems:
        lines.append("")
        lines.append(f"Cases without a figure ({len(problems)}):")
        for key, i, msg in problems[:50]:
            lines.append(f"  [{i + 1}] {key}: {msg}")
        if len(problems) > 50:
            lines.append(f"  ... and {len(problems) - 50} more")
    if cmp.case_notes:
        lines.append("")
        lines.append(f"Notes on cases ({len(cmp.case_notes)}):")
        for key, i, note in cmp.case_notes[:50]:
            lines.append(f"  [{i + 1}] {key}: {note}")
        if len(cmp.case_notes) > 50:
            lines.append(f"  ... and {len(cmp.case_notes) - 50} more")
    for w in cmp.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines) + "\n"


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|")


def render_markdown(cmp: Comparison) -> str:
    out = []
    out.append("| file | machine | path |")
    out.append("| --- | --- | --- |")
    for i, (p, lab) in enumerate(zip(cmp.paths, cmp.labels)):
        out.append(f"| [{i + 1}] | {_md_escape(lab)} | `{p}` |")
    for i in range(1, len(cmp.paths)):
        if not cmp.groups:
            break
        out.append("")
        out.append(_md_escape(" ".join(answer_heading(i))))
        out.append("")
        out.append("| cases of | sizes | cases | verdicts |")
        out.append("| --- | --- | ---: | --- |")
        for g in cmp.groups:
            out.append(f"| {_md_escape(group_label(g))} | {group_sizes(g)} | {g.cases} | "
                       + _md_escape("; ".join(group_parts(g, i))) + " |")
    if cmp.context_diff:
        out.append("")
        out.append("| fact | " + " | ".join(f"[{i + 1}]" for i in range(len(cmp.paths))) + " |")
        out.append("| --- " * (len(cmp.paths) + 1) + "|")
        for k, vals in merged_facts(cmp.context_diff):
            out.append(f"| {k} | " + " | ".join(_md_escape(v) for v in vals) + " |")
    out.append("")
    cols = table_columns(cmp)
    out.append("| " + " | ".join(cols) + " |")
    out.append("| --- | --- |" + " ---: |" * (len(cols) - 2))
    for r in cmp.rows:
        cells = row_cells(cmp, r, with_p=True)
        cells[0] = f"`{cells[0]}`"
        out.append("| " + " | ".join(_md_escape(c) for c in cells) + " |")
    if cmp.only_in:
        out.append("")
        out.append(f"Cases not in every file ({len(cmp.only_in)}):")
        out.append("")
        for key, present in cmp.only_in:
            out.append(f"- `{key}` only in " + " ".join(f"[{i + 1}]" for i in present))
    if cmp.case_notes:
        out.append("")
        out.append(f"Notes on cases ({len(cmp.case_notes)}):")
        out.append("")
        for key, i, note in cmp.case_notes:
            out.append(f"- [{i + 1}] `{key}`: {_md_escape(note)}")
    for w in cmp.warnings:
        out.append("")
        out.append(f"> warning: {w}")
    return "\n".join(out) + "\n"


def render_csv(cmp: Comparison) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    n = len(cmp.paths)
    head = ["case", "family", "metric", "unit"]
    head += [f"value_{i + 1}" for i in range(n)] + [f"n_{i + 1}" for i in range(n)]
    for i in range(2, n + 1):
        head += [f"ratio_{i}", f"verdict_{i}", f"p_{i}", f"tested_{i}"]
    head += [f"noise_pct_{i + 1}" for i in range(n)] + [f"method_{i}" for i in range(2, n + 1)]
    head.append("machine_variance")  # what a side's spread beyond MACHINE_VARIANCE_PCT varies with, if named
    w.writerow(head)
    for r in cmp.rows:
        line = [r.key, r.family, r.metric, r.unit]
        line += ["" if c is None or c.center is None else repr(c.center) for c in r.cells]
        line += ["" if c is None else c.n for c in r.cells]
        for i in range(1, n):
            v = r.versus[i]
            line += ["" if v.ratio is None else repr(v.ratio), v.verdict,
                     "" if v.p_value is None else repr(v.p_value), int(v.tested)]
        line += ["" if c is None or c.noise_pct is None else repr(c.noise_pct) for c in r.cells]
        line += [r.versus[i].method for i in range(1, n)]
        line.append(r.machine_cause or "")
        w.writerow(line)
    compared = {r.key for r in cmp.rows}
    for key, present in cmp.only_in:
        if key in compared:
            continue
        line = [key, key.split("/")[0], "", ""] + [""] * (2 * n)
        for i in range(1, n):
            line += ["", "missing" if i not in present else "no-baseline", "", 0]
        w.writerow(line + [""] * n + [""] * (n - 1) + [""])
    return buf.getvalue()


def to_dict(cmp: Comparison) -> dict:
    d = {
        "files": [{"path": p, "label": lab} for p, lab in zip(cmp.paths, cmp.labels)],
        "metric": cmp.metric,
        "alpha": cmp.alpha,
        "min_effect_pct": cmp.min_effect_pct,
        "context_diff": [{"fact": k, "values": v} for k, v in cmp.context_diff],
        "rows": [],
        "only_in": [{"case": k, "files": p} for k, p in cmp.only_in],
        "families": [asdict(f) for f in cmp.families],
        "groups": [{"family": g.family, "axes": dict(g.axes), "size_band": g.band,
                    "sizes": None if g.sizes is None else list(g.sizes), "cases": g.cases,
                    "verdicts": [None if i == 0 else {k: len(v) for k, v in g.speeds[i].items()}
                                 for i in range(len(cmp.paths))],
                    "speeds": [None if i == 0 else {k: [min(v), max(v)] for k, v in g.speeds[i].items()
                                                    if all(math.isfinite(x) for x in v)}
                               for i in range(len(cmp.paths))]} for g in cmp.groups],
        "warnings": cmp.warnings,
        "case_notes": [{"case": k, "file": i, "note": n} for k, i, n in cmp.case_notes],
    }
    for r in cmp.rows:
        d["rows"].append({
            "case": r.key, "family": r.family, "metric": r.metric, "unit": r.unit,
            "higher_is_better": r.higher_is_better, "host_side": r.host_side,
            "cells": [None if c is None else {"value": c.center, "n": c.n, "cv_pct": c.cv_pct,
                                              "noise_pct": c.noise_pct, "noise_from": c.noise_from,
                                              "samples": len(c.values), "problem": c.problem,
                                              "machine_variance": c.machine_cause} for c in r.cells],
            "versus": [None if v is None else {"ratio": v.ratio, "speed": v.speed, "verdict": v.verdict,
                                               "tested": v.tested, "p_value": v.p_value, "q_value": v.q_value,
                                               "method": v.method,
                                               "noise_pct": v.noise_pct,
                                               "machine_variance": v.machine_variance,
                                               "measured_differently": v.measured_differently} for v in r.versus],
        })
    return d


def _finite(o):
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    return o


def render_json(cmp: Comparison) -> str:
    return json.dumps(_finite(to_dict(cmp)), indent=1, allow_nan=False) + "\n"
