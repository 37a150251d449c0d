"""Rendering a comparison: the terminal table, markdown, CSV and JSON."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict

from .compare import Cell, Comparison, Row, Versus


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
    if v is None:
        return ""
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
    if c.cv_pct is not None and c.cv_pct >= 5.0:
        s += f" ±{c.cv_pct:.0f}%"
    return s


def header_lines(cmp: Comparison) -> list[str]:
    lines = []
    for i, (p, lab) in enumerate(zip(cmp.paths, cmp.labels)):
        lines.append(f"[{i + 1}] {lab}  ({p})")
    if cmp.context_diff:
        lines.append("What differs between the files:")
        grid = [["", *[f"[{i + 1}]" for i in range(len(cmp.paths))]]] + [[k, *v] for k, v in cmp.context_diff]
        widths = [max(len(r[j]) for r in grid) for j in range(len(grid[0]))]
        for r in grid:
            lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    elif len(cmp.paths) > 1:
        lines.append("The machines' facts are the same in every file.")
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


def summary_lines(cmp: Comparison) -> list[tuple[str, list[str]]]:
    out = []
    for fs in cmp.families:
        cells = []
        for i in range(1, len(cmp.paths)):
            g = fs.geomean_speed[i]
            counts = ", ".join(f"{n} {k}" for k, n in sorted(fs.counts[i].items()))
            cells.append(f"[{i + 1}] {('%.3fx' % g) if g else '-'} ({counts})")
        out.append((f"{fs.family} ({fs.cases} cases)", cells))
    return out


_COLOURS = {"faster": "\033[32m", "slower": "\033[31m", "noisy": "\033[33m", "error": "\033[35m"}


def render_table(cmp: Comparison, colour: bool = False) -> str:
    lines = header_lines(cmp)
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
    if cmp.families and len(cmp.paths) > 1:
        lines.append("")
        lines.append("Geometric mean speed against [1] per family (>1 is faster):")
        for fam, cells in summary_lines(cmp):
            lines.append(f"  {fam}: " + "; ".join(cells))
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
    if cmp.context_diff:
        out.append("")
        out.append("| fact | " + " | ".join(f"[{i + 1}]" for i in range(len(cmp.paths))) + " |")
        out.append("| --- " * (len(cmp.paths) + 1) + "|")
        for k, vals in cmp.context_diff:
            out.append(f"| {k} | " + " | ".join(_md_escape(v) for v in vals) + " |")
    if len(cmp.paths) > 1 and cmp.families:
        out.append("")
        out.append("| family | " + " | ".join(f"[{i + 1}] vs [1]" for i in range(1, len(cmp.paths))) + " |")
        out.append("| --- " * len(cmp.paths) + "|")
        for fam, cells in summary_lines(cmp):
            out.append(f"| {fam} | " + " | ".join(c.split(" ", 1)[1] for c in cells) + " |")
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
        w.writerow(line)
    compared = {r.key for r in cmp.rows}
    for key, present in cmp.only_in:
        if key in compared:
            continue
        line = [key, key.split("/")[0], "", ""] + [""] * (2 * n)
        for i in range(1, n):
            line += ["", "missing" if i not in present else "no-baseline", "", 0]
        w.writerow(line + [""] * n + [""] * (n - 1))
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
        "warnings": cmp.warnings,
    }
    for r in cmp.rows:
        d["rows"].append({
            "case": r.key, "family": r.family, "metric": r.metric, "unit": r.unit,
            "higher_is_better": r.higher_is_better, "host_side": r.host_side,
            "cells": [None if c is None else {"value": c.center, "n": c.n, "cv_pct": c.cv_pct,
                                              "noise_pct": c.noise_pct, "noise_from": c.noise_from,
                                              "samples": len(c.values), "problem": c.problem} for c in r.cells],
            "versus": [None if v is None else {"ratio": v.ratio, "speed": v.speed, "verdict": v.verdict,
                                               "tested": v.tested, "p_value": v.p_value, "method": v.method,
                                               "noise_pct": v.noise_pct} for v in r.versus],
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
