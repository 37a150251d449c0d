#!/usr/bin/env python3
"""GPU test: one or two small cases of every family, repeated with Google Benchmark's random interleaving
(repetitions of different cases shuffled together), all run and verify their data. Cases that share
cached buffers, calibrations and gates must not depend on running in registration order.

usage: interleave_check.py GPU_BENCH OUT.json
"""
import sys

from gpu_common import Checker, iteration_runs, run_gpu_bench

FILTER = ("^(Transfer/dir:(h2d|d2h)/mem:(pinned|pageable|mapped)/bytes:65536/|Transfer/dir:d2d/mem:device/cache:cold/bytes:65536/"
          "|HostBlocking/mem:pinned/bytes:65536/|Overlap/schedule:(serial|depth_first)/mem:pinned/streams:(1|8)/"
          "bytes:16777216/|SyncPlacement/op:copy/|Streams/op:normalize/streams:(1|2)/|Streams/kind:blocking"
          "|Events/op:wait_cross_stream/|Launch/op:graph_replay/kernels:10/|SmallCopy/dir:h2d/mem:pinned/bytes:4/"
          "|Alloc/op:(malloc_host|host_register)/bytes:1048576/|Peer/src:0/dst:1/peer_access:on/dir:oneway/"
          "bytes:1048576/|PeerLatency/src:0/dst:1/peer_access:on/)")
REPS = 3


def main(exe, out):
    rc, doc = run_gpu_bench(exe, out, f"--benchmark_filter={FILTER}", f"--benchmark_repetitions={REPS}",
                            "--benchmark_enable_random_interleaving=true", "--max_time_per_case=0.1")
    c = Checker()
    c.check(rc == 0, f"gpu_bench exited {rc}")
    runs = iteration_runs(doc)
    failed = [b["name"] for b in runs if b.get("error_occurred")]
    c.check(not failed, f"failed under random interleaving: {failed[:5]}")
    names = [b["name"] for b in runs]
    families = {n.split("/")[0] for n in names}
    for fam in ("Transfer", "HostBlocking", "Overlap", "SyncPlacement", "Streams", "Events", "Launch", "SmallCopy",
                "Alloc"):
        c.check(fam in families, f"no {fam} case ran")
    for n in set(names):
        c.check(names.count(n) == REPS, f"{n} ran {names.count(n)} times, not {REPS}")
    return c.finish(f"{len(set(names))} cases of every family ran {REPS} times interleaved and verified")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
