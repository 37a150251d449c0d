#!/usr/bin/env python3
"""The multi-GPU evidence's references, read and set beside gpu_bench's figures (scripts/gpu_evidence.sh OUT
multi writes every input in one call):
  - Latency/mem:peer against nvbandwidth's device_to_device_latency_sm, judged: GPU i chasing GPU j's memory,
    stride, at nvbandwidth's own footprint (2 MiB: one pointer per 128-byte line, visited in address order,
    the time of its chases over the loads counted), within 3%. gpu_bench's interval is the case's noise_pct,
    nvbandwidth's the range of its runs (a median interval); a pair fails only where the whole interval of
    the ratio misses [0.97, 1.03], and is too noisy to judge where it straddles a limit (gpu_common.Checker).
  - PeerPattern (one_to_all, all_to_one, all_pairs) beside the bare all-to-all program (SM copy kernels and
    copy engines), NCCL's all-to-all through torch.distributed (bus bandwidth) and nvbandwidth's
    one_to_all / all_to_one copies: shown, not judged (each a different way to move the same bytes).
  - the default run's wall time and timed share, and gpu_peer's runs.
Exit status: 1 where a judged pair fails or a figure is missing, 77 where a pair is too noisy to judge or
nvbandwidth did not run, else 0 (without --latency, nothing is judged). Writes every figure to --out (JSON)
and the tables to --summary.

usage: peer_references.py --gpus G [--latency LATENCY.json --nvb-latency NVB.json [NVB.json...]]
         [--patterns PATTERNS.json] [--bare BARE.jsonl] [--nccl NCCL.jsonl] [--nvb-patterns NVB.json]
         [--default DEFAULT.json --default-wall S] [--gpu-peer PASSED,FAILED,SKIPPED] --out OUT.json
         [--summary OUT.txt]
"""
import argparse
import json
import math
import os
import sys

from gpu_common import Checker, figure_interval, median_interval, ratio_interval

TOLERANCE = 0.03
NVB_LATENCY = "device_to_device_latency_sm"
NVB_LATENCY_BYTES = 2 << 20  # nvbandwidth's latency tests ignore --bufferSize and allocate 2 MiB


def axes(name):
    return dict(part.split(":", 1) for part in name.replace("/manual_time", "").split("/")[1:] if ":" in part)


def load_json(path):
    with open(path) as f:
        return json.load(f)


def load_run(c, path, what):
    """A gpu_bench JSON file; a failure (and an empty run) where it is missing or not JSON."""
    try:
        return load_json(path)
    except (OSError, ValueError) as e:
        c.check(False, f"{what}: {path} unreadable ({e})")
        return {"context": {}, "benchmarks": []}


def load_lines(path):
    """Every line of `path` that is a JSON object; a missing file gives none."""
    out = []
    if not path or not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    return out


def nvbandwidth_tests(doc):
    """nvbandwidth's -j output -> {testcase: {"status", "description", "matrix": rows of float or None}}."""
    out = {}
    for t in doc.get("nvbandwidth", {}).get("testcases", []):
        rows = []
        for row in t.get("bandwidth_matrix", []):
            vals = []
            for v in row:
                try:
                    x = float(v)
                    vals.append(x if math.isfinite(x) else None)
                except (TypeError, ValueError):
                    vals.append(None)
            rows.append(vals)
        out[t.get("name", "")] = {"status": t.get("status"), "description": t.get("bandwidth_description", ""),
                                  "matrix": rows, "error": t.get("error")}
    return out


def nvbandwidth_pairs(matrix):
    """A G x G matrix (row: the GPU that acts, column: its peer) -> {(row, column): value} of the values it has."""
    return {(i, j): v for i, row in enumerate(matrix) for j, v in enumerate(row) if v is not None and i != j}


def runs(doc):
    return [b for b in doc.get("benchmarks", []) if b.get("run_type", "iteration") == "iteration"]


def peer_latency_cases(doc):
    """gpu_bench's Latency/mem:peer cases -> {(gpu, peer, pattern, bytes): run}; the GPU from the name's device key,
    else the run's --device."""
    selected = doc.get("context", {}).get("gpu_bench.device", "0")
    out = {}
    for b in runs(doc):
        name = b["name"]
        if not name.startswith("Latency/"):
            continue
        a = axes(name)
        if a.get("mem") != "peer":
            continue
        gpu = int(a.get("device", selected if selected.isdigit() else 0))
        out[(gpu, int(a["peer"]), a["pattern"], int(a["bytes"]))] = b
    return out


def judge_peer_latency(c, cases, nvb_runs, footprint=NVB_LATENCY_BYTES):
    """Every stride case of `footprint` against the pair's nvbandwidth figures over its runs (a list of
    {(row, column): ns}); returns a row per case, and counts missing figures as failures."""
    rows = []
    judged = [(k, b) for k, b in sorted(cases.items()) if k[2] == "stride" and k[3] == footprint]
    c.check(bool(judged), f"no Latency/mem:peer stride case of {footprint} bytes to judge")
    for (gpu, peer, pattern, size), b in judged:
        what = f"Latency/mem:peer GPU {gpu} -> GPU {peer}'s memory, {pattern} {size} B"
        if b.get("error_occurred"):
            c.check(False, f"{what} failed: {b.get('error_message')}")
            continue
        theirs = [r[(gpu, peer)] for r in nvb_runs if (gpu, peer) in r]
        if not theirs:
            c.check(False, f"{what}: nvbandwidth has no figure for this pair")
            continue
        ours = figure_interval(b["latency_ns"], b.get("noise_pct"))
        ref = median_interval(theirs)
        ratio, interval = ratio_interval(ours, ref)
        c.judge(f"{what}: gpu_bench {ours[0]:.1f} ns over nvbandwidth's {ref[0]:.1f} ns", ratio, interval,
                low=1 - TOLERANCE, high=1 + TOLERANCE)
        rows.append({"gpu": gpu, "peer": peer, "pattern": pattern, "bytes": size, "gpu_bench_ns": ours[0],
                     "gpu_bench_interval": ours[1], "nvbandwidth_ns": ref[0], "nvbandwidth_runs": theirs,
                     "ratio": ratio, "ratio_interval": interval,
                     "within": 1 - TOLERANCE <= ratio <= 1 + TOLERANCE})
    return rows


def latency_table(cases, nvb_runs, rows):
    judged = {(r["gpu"], r["peer"], r["bytes"]): r for r in rows}
    lines = [f"{'pair':<8} {'pattern':<7} {'bytes':>10} {'gpu_bench ns':>13} {'noise %':>8} {'nvbandwidth ns':>15} "
             f"{'ratio':>7}  {'interval':<15} verdict"]
    for (gpu, peer, pattern, size), b in sorted(cases.items()):
        theirs = [r[(gpu, peer)] for r in nvb_runs if (gpu, peer) in r]
        ref = " ".join(f"{v:.1f}" for v in theirs) or "-"
        r = judged.get((gpu, peer, size)) if pattern == "stride" else None
        if r:
            ratio = f"{r['ratio']:.3f}"
            interval = f"{r['ratio_interval'][0]:.3f}-{r['ratio_interval'][1]:.3f}"
            verdict = "within 3%" if r["within"] else "outside 3%"
        else:  # another footprint or pattern: its ratio shown beside, not judged
            mid = median_interval(theirs)[0] if theirs else math.nan
            ratio = f"{b.get('latency_ns', math.nan) / mid:.3f}" if theirs and mid > 0 else "-"
            interval = ""
            verdict = "failed" if b.get("error_occurred") else "not judged"
        lines.append(f"{gpu}->{peer:<5} {pattern:<7} {size:>10} {b.get('latency_ns', float('nan')):13.1f} "
                     f"{b.get('noise_pct', float('nan')):8.2f} {ref:>15} {ratio:>7}  {interval:<15} {verdict}")
    return lines


def pattern_table(doc, bare, nccl, nvb):
    """PeerPattern's figures beside the references, as text lines and a dict."""
    lines, data = [], {"gpu_bench": {}, "bare": bare, "nccl": nccl, "nvbandwidth": {}}
    for b in runs(doc or {}):
        name = b["name"].replace("/manual_time", "")
        if b.get("error_occurred"):
            lines.append(f"{name}: failed: {b.get('error_message')}")
            continue
        per = {k[len("gbps_gpu"):]: v for k, v in b.items() if k.startswith("gbps_gpu")}
        data["gpu_bench"][name] = {"gbps": b.get("gbps"), "noise_pct": b.get("noise_pct"), "gbps_gpu": per}
        per_text = " ".join(f"gpu{g} {v:.1f}" for g, v in sorted(per.items(), key=lambda kv: int(kv[0])))
        lines.append(f"{name}: {b.get('gbps', float('nan')):.1f} GB/s (noise {b.get('noise_pct', float('nan')):.2f}%)"
                     + (f"; per GPU {per_text}" if per_text else ""))
    for r in bare:
        per = " ".join(f"gpu{i} {v:.1f}" for i, v in enumerate(r.get("gbps_gpu", [])))
        lines.append(f"bare {r.get('pattern', 'all_pairs')} ({r.get('mode')}, {r.get('bytes')} B to each peer, "
                     f"{r.get('iterations')} a repetition): total {r.get('gbps_total', 0):.1f} "
                     f"GB/s over the longest GPU's span, {r.get('gbps_wall', 0):.1f} over the host's; per GPU {per}; "
                     f"data {'checked' if r.get('verified') else 'WRONG'}")
    for r in nccl:
        lines.append(f"NCCL all-to-all through torch ({r.get('ranks')} ranks, {r.get('bytes_per_peer')} B to each rank): "
                     f"busbw {r.get('busbw_gbps', 0):.1f} GB/s (algbw {r.get('algbw_gbps', 0):.1f}, "
                     f"{r.get('time_us', 0):.0f} us; NCCL_NVLS_ENABLE={r.get('nccl_nvls_enable')}); "
                     f"data {'checked' if r.get('wrong_words') == 0 else 'WRONG'}")
    for name, t in sorted((nvb or {}).items()):
        data["nvbandwidth"][name] = t
        m = t["matrix"]
        if len(m) == 1:
            vals = " ".join("-" if v is None else f"{v:.1f}" for v in m[0])
            lines.append(f"nvbandwidth {name} ({t['description']}): {vals}")
        elif m:
            pairs = sorted(nvbandwidth_pairs(m).values())
            if pairs:
                lines.append(f"nvbandwidth {name} ({t['description']}): {len(pairs)} pairs, {pairs[0]:.1f} to "
                             f"{pairs[-1]:.1f}, median {pairs[len(pairs) // 2]:.1f}")
        else:
            lines.append(f"nvbandwidth {name}: {t['status']} {t.get('error') or ''}".rstrip())
    return lines, data


def default_lines(doc, wall_s):
    ctx = doc.get("context", {})
    def num(key):
        try:
            return float(ctx.get(key, "nan"))
        except ValueError:
            return math.nan
    elapsed, timed = num("gpu_bench.elapsed_s"), num("gpu_bench.timed_s")
    cases = len({b["name"] for b in runs(doc)})
    share = timed / elapsed if elapsed > 0 else math.nan
    data = {"cases": cases, "wall_s": wall_s, "elapsed_s": elapsed, "timed_s": timed, "timed_share": share,
            "gpus": ctx.get("gpu.count")}
    return [f"default --device=all: {cases} cases on {ctx.get('gpu.count')} GPUs, wall {wall_s:.1f} s "
            f"(gpu_bench.elapsed_s {elapsed:.1f}), timed {timed:.1f} s = {share:.1%}"], data


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gpus", type=int, required=True)
    p.add_argument("--latency")
    p.add_argument("--nvb-latency", nargs="*", default=[])
    p.add_argument("--patterns")
    p.add_argument("--bare")
    p.add_argument("--nccl")
    p.add_argument("--nvb-patterns")
    p.add_argument("--default")
    p.add_argument("--default-wall", type=float, default=math.nan)
    p.add_argument("--gpu-peer")
    p.add_argument("--out", required=True)
    p.add_argument("--summary")
    a = p.parse_args(argv)
    c = Checker()
    report, text = {"gpus": a.gpus}, []

    if a.latency:
        cases = peer_latency_cases(load_run(c, a.latency, "the Latency/mem:peer run"))
        nvb_runs = []
        for path in a.nvb_latency:
            try:
                t = nvbandwidth_tests(load_json(path)).get(NVB_LATENCY)
            except (OSError, ValueError) as e:
                text.append(f"nvbandwidth output {path} unreadable: {e}")
                continue
            if t and t["matrix"]:
                nvb_runs.append(nvbandwidth_pairs(t["matrix"]))
        text.append(f"Latency/mem:peer beside nvbandwidth's {NVB_LATENCY} ({len(nvb_runs)} runs), judged at "
                    f"{NVB_LATENCY_BYTES} B stride within {TOLERANCE:.0%}:")
        if nvb_runs:
            rows = judge_peer_latency(c, cases, nvb_runs)
        else:
            rows = []
            c.undecided.append("nvbandwidth's device_to_device_latency_sm did not run")
        text += latency_table(cases, nvb_runs, rows)
        report["peer_latency"] = rows

    if a.patterns or a.bare or a.nccl or a.nvb_patterns:
        try:
            nvb = nvbandwidth_tests(load_json(a.nvb_patterns)) if a.nvb_patterns else {}
        except (OSError, ValueError):
            nvb = {}  # nvbandwidth left out: its figures are references, not judged
        lines, data = pattern_table(load_run(c, a.patterns, "the PeerPattern run") if a.patterns else None,
                                    load_lines(a.bare),
                                    load_lines(a.nccl), nvb)
        text += ["", "PeerPattern beside the references (shown, not judged):"] + lines
        report["patterns"] = data
    if a.default:
        lines, data = default_lines(load_run(c, a.default, "the default run"), a.default_wall)
        text += [""] + lines
        report["default"] = data
    if a.gpu_peer:
        passed, failed, skipped = (int(x) for x in a.gpu_peer.split(","))
        text.append(f"gpu_peer: {passed + failed + skipped} runs: {passed} passed, {failed} failed, {skipped} skipped")
        report["gpu_peer"] = {"passed": passed, "failed": failed, "skipped": skipped}
    print("\n".join(text))
    rc = c.finish(f"every judged Latency/mem:peer pair within {TOLERANCE:.0%} of nvbandwidth" if a.latency else
                  "no Latency/mem:peer run given, so nothing judged against nvbandwidth; the rest shown beside")
    write_outputs(a.out, a.summary, report, text, rc, c, "too noisy")
    return rc


def write_outputs(out, summary, report, text, rc, c, undecided_as):
    """The figures and the verdict as JSON into `out`; the text and the verdict's line into `summary` where
    given. `undecided_as` names what an undecided check means to this judge."""
    report["verdict"] = {"rc": rc, "failures": c.failures, "undecided": c.undecided}
    with open(out, "w") as f:
        json.dump(report, f, indent=1)
    if summary:
        with open(summary, "w") as f:
            f.write("\n".join(text) + f"\nverdict: rc {rc}; failures {c.failures}; {undecided_as} {c.undecided}\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
