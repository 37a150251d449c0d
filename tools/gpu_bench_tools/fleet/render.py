"""gpu-bench-fleet's output: a table for the terminal, CSV and JSON for scripts, one self-contained HTML page."""

from __future__ import annotations

import csv
import html
import io
import json
import math

from ..compare.render import cut, fmt_num
from .cohorts import Crowd, Flag, FleetReport
from .node_runs import Problem

CSV_COLUMNS = ("kind", "rank", "host", "gpu", "uuid", "case", "metric", "value", "unit", "cohort_median", "effect_pct",
               "score", "noise_pct", "cohort_size", "cohort", "source", "detail")


def _score(s: float) -> str:
    return "inf" if math.isinf(s) else f"{s:.1f}"


def _effect(f: Flag) -> str:
    return f"{abs(f.effect_pct):.1f}% {'worse' if f.effect_pct > 0 else 'better'}"


def how(rep: FleetReport) -> str:
    t = rep.thresholds
    sides = "either side of" if t["both_sides"] else "worse than"
    return (f"an outlier is {sides} its cohort's median by a robust score >= {t['score']:g} (MAD of the cohort), "
            f"by >= {t['min_effect_pct']:g}% and by more than the GPU's own noise; a GPU is flagged with >= "
            f"{t['min_cases']} outliers; cohorts of >= {t['min_cohort']} GPUs; a case with more than "
            f"{t['max_share'] * 100:g}% of its cohort (and >= 3 GPUs) outside is reported as crowded, not per GPU")


def summary(rep: FleetReport) -> str:
    counted = [p for p in rep.problems if p.counted]
    pairs, whole = rep.units("pair"), rep.units("node")
    more = ", ".join(x for x in (f"{pairs} GPU pair(s)" if pairs else "", f"{whole} whole node(s)" if whole else "")
                     if x)
    unjudged = len(rep.unjudged)
    return (f"{rep.nodes} node(s), {rep.units('gpu')} GPU(s){f' (and {more})' if more else ''} in "
            f"{len(rep.cohorts)} cohort(s): {len(rep.ranked())} flagged ({len(rep.flags)} case figure(s)), "
            f"{len(rep.lone)} lone outlier(s) not flagged, {len(rep.crowds)} crowded case(s), {len(counted)} "
            f"problem(s)" + (f", {unjudged} cohort(s) not judged" if unjudged else ""))


def not_judged(rep: FleetReport, shown: int = 3) -> str:
    """One line on the cohorts of which nothing could be judged: which, and how many GPU units each has."""
    small = rep.unjudged
    names = "; ".join(f"{c.label} ({c.gpus} GPU unit(s))" for c in small[:shown])
    names += f"; and {len(small) - shown} more" if len(small) > shown else ""
    head = ("nothing judged: no cohort" if len(small) == len(rep.cohorts)
            else f"{len(small)} of {len(rep.cohorts)} cohort(s) not judged: none")
    return (f"{head} has a case held by --min-cohort {rep.thresholds['min_cohort']} GPU units or more: "
            f"{names}")


def _rank(rep: FleetReport) -> dict[int, int]:
    return {id(g): k for k, (g, _) in enumerate(rep.ranked(), 1)}


def _crowd_text(c: Crowd) -> str:
    hosts = ", ".join(f"{f.gpu.host}/{f.gpu.index}" for f in c.outside[:5])
    more = f" and {len(c.outside) - 5} more" if len(c.outside) > 5 else ""
    return (f"{c.case} ({c.cohort}): {len(c.outside)} of {c.held} GPUs outside the median "
            f"{fmt_num(c.outside[0].median)} {c.unit}: {hosts}{more}")


def _flag_lines(flags: list[Flag], rank: dict[int, int], limit: int) -> list[str]:
    shown, more = cut(flags, limit)
    out = [f"  {rank.get(id(f.gpu), '-'):>4}  {f.gpu.host} GPU {f.gpu.index} {f.gpu.uuid}  {f.case}  "
           f"{fmt_num(f.value)} {f.unit} vs cohort median {fmt_num(f.median)} ({_effect(f)}, score {_score(f.score)}, "
           f"noise {'?' if f.noise_pct is None else f'{f.noise_pct:.1f}%'}, {f.cohort_size} GPUs)" for f in shown]
    if more:
        out.append(f"  {more} (--format csv or json lists them all)")
    return out + [""]


def render_table(rep: FleetReport, limit: int = 100) -> str:
    lines = [summary(rep), how(rep), ""]
    ranked = rep.ranked()
    if ranked:
        lines.append("GPUs flagged, worst first:")
        lines.append(f"  {'#':>4}  {'host':<20} {'GPU':<5} {'UUID':<42} {'cases':>5}  worst")
        for k, (g, fl) in enumerate(ranked, 1):
            lines.append(f"  {k:>4}  {g.host:<20} {g.index:<5} {g.uuid:<42} {len(fl):>5}  "
                         f"{fl[0].case}: {_effect(fl[0])}")
        lines.append("")
        lines.append("Case figures flagged (one row per GPU and case):")
        rank = _rank(rep)
        lines += _flag_lines(rep.flags, rank, limit)
    if rep.lone:
        lines.append(f"Lone outliers (fewer than {rep.thresholds['min_cases']} on one GPU: not flagged):")
        lines += _flag_lines(rep.lone, {}, limit)
    if rep.crowds:
        lines.append(f"Crowded cases (more than {rep.thresholds['max_share'] * 100:g}% of a cohort outside: the case's "
                     "or the cohort's, not one GPU's):")
        shown, more = cut(rep.crowds, limit)
        lines += [f"  {_crowd_text(c)}" for c in shown] + ([f"  {more}"] if more else []) + [""]
    problems = [p for p in rep.problems if p.counted]
    notes = [p for p in rep.problems if not p.counted]
    for title, items in (("Problems (nodes not judged, not whole, or whose error counters rose):", problems),
                         ("Notes:", notes)):
        if items:
            lines.append(title)
            shown, more = cut(items, limit)
            lines += [f"  {p.kind:<13} {p.host or '-':<20} {p.detail}" for p in shown]
            if more:
                lines.append(f"  {more}")
            lines.append("")
    if rep.notes:
        lines += ["Notes on the files:"] + [f"  {n}" for n in rep.notes] + [""]
    lines.append("Cohorts:")
    for c in rep.cohorts:
        if c.too_small:
            lines.append(f"  {c.gpus:>5} GPU unit(s)  {c.label}: not judged, fewer GPU units than --min-cohort "
                         f"{rep.thresholds['min_cohort']}")
            continue
        if not c.judged:
            lines.append(f"  {c.gpus:>5} GPU unit(s)  {c.label}: not judged, each of its {c.too_few} case figure(s) "
                         f"held by fewer GPU units than --min-cohort {rep.thresholds['min_cohort']}")
            continue
        lines.append(f"  {c.gpus:>5} GPU unit(s)  {c.label}: {c.cases} case figure(s) judged, {c.flagged} flagged"
                     + (f", {c.too_few} held by too few GPUs to judge" if c.too_few else ""))
    return "\n".join(lines) + "\n"


def _flag_row(f: Flag, rank: int | None, kind: str = "flagged") -> dict:
    return dict(kind=kind, rank=rank, host=f.gpu.host, gpu=f.gpu.index, uuid=f.gpu.uuid, case=f.case,
                metric=f.metric, value=f.value, unit=f.unit, cohort_median=f.median, effect_pct=round(f.effect_pct, 3),
                score=None if math.isinf(f.score) else round(f.score, 3), noise_pct=f.noise_pct,
                cohort_size=f.cohort_size, cohort=f.cohort or ", ".join(map(str, f.gpu.cohort)), source=f.gpu.source,
                detail=f"driver {f.gpu.driver}")


def _problem_row(p: Problem) -> dict:
    return dict(kind=p.kind, host=p.host or "", source=p.source, detail=p.detail)


def render_csv(rep: FleetReport) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    rank = _rank(rep)
    for f in rep.flags:
        w.writerow(_flag_row(f, rank[id(f.gpu)]))
    for f in rep.lone:
        w.writerow(_flag_row(f, None, "lone outlier"))
    for c in rep.crowds:
        w.writerow(dict(kind="crowded case", case=c.case, metric=c.metric, unit=c.unit, cohort=c.cohort,
                        cohort_median=c.outside[0].median, cohort_size=c.held, detail=_crowd_text(c)))
    for p in rep.problems:
        w.writerow(_problem_row(p))
    for n in rep.notes:
        w.writerow(dict(kind="note", detail=n))
    return buf.getvalue()


def as_dict(rep: FleetReport) -> dict:
    rank = _rank(rep)
    return {
        "summary": summary(rep),
        "thresholds": rep.thresholds,
        "gpus_flagged": [dict(rank=k, host=g.host, gpu=g.index, uuid=g.uuid, model=g.model, link=g.link,
                              driver=g.driver, cases=len(fl), worst_case=fl[0].case,
                              worst_effect_pct=round(fl[0].effect_pct, 3), source=g.source)
                         for k, (g, fl) in enumerate(rep.ranked(), 1)],
        "flags": [_flag_row(f, rank[id(f.gpu)]) for f in rep.flags],
        "lone_outliers": [_flag_row(f, None, "lone outlier") for f in rep.lone],
        "crowded_cases": [dict(cohort=c.cohort, case=c.case, metric=c.metric, unit=c.unit, held=c.held,
                               cohort_median=c.outside[0].median, outside=[_flag_row(f, None, "outside")
                                                                           for f in c.outside]) for c in rep.crowds],
        "problems": [dict(_problem_row(p), counted=p.counted,
                          cases=[dict(gpu=w, case=c, error=e) for w, c, e in p.cases]) for p in rep.problems],
        "cohorts": [dict(label=c.label, gpus=c.gpus, cases_judged=c.cases, cases_too_few=c.too_few,
                         flagged=c.flagged, too_small=c.too_small, judged=c.judged) for c in rep.cohorts],
        "notes": rep.notes,
    }


def render_json(rep: FleetReport) -> str:
    return json.dumps(as_dict(rep), indent=1, allow_nan=False) + "\n"


_STYLE = ("body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}"
          "table{border-collapse:collapse;margin:.5em 0 1.5em}"
          "th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;font-variant-numeric:tabular-nums}"
          "th{background:#f2f2f2}td.n{text-align:right}.bad{color:#a00}")


def _table(head: list[str], rows: list[list], numeric: set[int] = frozenset()) -> str:
    out = ["<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join(f"<td{' class=n' if i in numeric else ''}>{html.escape(str(v))}</td>"
                                    for i, v in enumerate(r)) + "</tr>")
    return "\n".join(out) + "</table>"


def render_html(rep: FleetReport) -> str:
    d = as_dict(rep)
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>gpu_bench fleet</title><style>{_STYLE}"
             f"</style></head><body><h1>gpu_bench fleet</h1><p>{html.escape(d['summary'])}</p>"
             f"<p>{html.escape(how(rep))}</p>"]
    if d["gpus_flagged"]:
        parts.append("<h2 class=bad>GPUs flagged, worst first</h2>")
        parts.append(_table(["#", "host", "GPU", "UUID", "model", "link", "driver", "cases", "worst case", "worse %"],
                            [[g["rank"], g["host"], g["gpu"], g["uuid"], g["model"], g["link"], g["driver"], g["cases"],
                              g["worst_case"], f"{g['worst_effect_pct']:.1f}"] for g in d["gpus_flagged"]], {0, 7, 9}))
        parts.append("<h2>Case figures flagged</h2>")
        parts.append(_table(["#", "host", "GPU", "UUID", "case", "value", "unit", "cohort median", "worse %", "score",
                             "noise %", "cohort GPUs"],
                            [[f["rank"], f["host"], f["gpu"], f["uuid"], f["case"], fmt_num(f["value"]), f["unit"],
                              fmt_num(f["cohort_median"]), f"{f['effect_pct']:.1f}",
                              "inf" if f["score"] is None else f"{f['score']:.1f}",
                              "?" if f["noise_pct"] is None else f"{f['noise_pct']:.1f}", f["cohort_size"]]
                             for f in d["flags"]], {0, 5, 7, 8, 9, 10, 11}))
    if d["lone_outliers"]:
        parts.append(f"<h2>Lone outliers (fewer than {rep.thresholds['min_cases']} on one GPU: not flagged)</h2>")
        parts.append(_table(["host", "GPU", "UUID", "case", "value", "unit", "cohort median", "worse %", "score"],
                            [[f["host"], f["gpu"], f["uuid"], f["case"], fmt_num(f["value"]), f["unit"],
                              fmt_num(f["cohort_median"]), f"{f['effect_pct']:.1f}",
                              "inf" if f["score"] is None else f"{f['score']:.1f}"] for f in d["lone_outliers"]],
                            {4, 6, 7, 8}))
    if rep.crowds:
        parts.append(f"<h2>Crowded cases (more than {rep.thresholds['max_share'] * 100:g}% of a cohort outside)</h2>")
        parts.append(_table(["case", "cohort", "GPUs outside", "GPUs", "cohort median", "unit", "which"],
                            [[c.case, c.cohort, len(c.outside), c.held, fmt_num(c.outside[0].median), c.unit,
                              _crowd_text(c).rsplit(": ", 1)[1]] for c in rep.crowds], {2, 3, 4}))
    if d["problems"]:
        parts.append("<h2>Problems and notes</h2>")
        parts.append(_table(["kind", "counts", "host", "source", "detail"],
                            [[p["kind"], "yes" if p["counted"] else "no", p["host"], p["source"], p["detail"]]
                             for p in d["problems"]]))
    parts += [f"<p>note: {html.escape(n)}</p>" for n in rep.notes]
    parts.append("<h2>Cohorts</h2>")
    parts.append(_table(["cohort", "GPU units", "case figures judged", "held by too few", "flagged"],
                        [[c["label"], c["gpus"], c["cases_judged"], c["cases_too_few"], c["flagged"]]
                         for c in d["cohorts"]], {1, 2, 3, 4}))
    parts.append("</body></html>\n")
    return "\n".join(parts)


RENDERERS = {"table": render_table, "csv": render_csv, "json": render_json, "html": render_html}
