"""Summarises probe_p10.sh: per process, each case's figure and, for the staged PeerLatency copy, its
samples' deciles and the copy call's host time. usage: python3 summarize_p10.py FOLDER"""
import gzip
import json
import pathlib
import statistics
import sys

folder = pathlib.Path(sys.argv[1])
for path in sorted(folder.glob("*.json.gz")):
    doc = json.load(gzip.open(path))
    figures = []
    staged = ""
    for b in doc["benchmarks"]:
        name = b["name"].removesuffix("/manual_time")
        figures.append(f"{name.split('/', 1)[1]}={b['real_time']:.2f}")
        if "peer_access:off" in name:
            us = [x * 1e6 for x in b["sample_times_s"]]
            deciles = " ".join(f"{q:.1f}" for q in statistics.quantiles(us, n=10))
            staged = f"\n    staged: {len(us)} samples, deciles {deciles} us; host_blocked_us {b['host_blocked_us']:.2f}"
    clock = doc["context"].get("host.clock_read_ns")
    print(f"{path.name.removesuffix('.json.gz')}: clock read {clock} ns; {'; '.join(figures)} us{staged}")
