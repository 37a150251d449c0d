#!/usr/bin/env python3
"""A reference beside PeerPattern/pattern:all_pairs, never a dependency of gpu_bench: NCCL's all-to-all through
torch.distributed, one process per visible GPU (torch.multiprocessing), NCCL_NVLS_ENABLE=0 (no NVLink
SHARP multicast, which the peer families never use).

Each rank's send buffer holds BYTES for every rank (itself included), S = BYTES x ranks in all, as
nccl-tests' alltoall_perf counts its size; every rank thus sends BYTES to every other rank, as all_pairs
does. After WARMUP untimed operations, each rank times ITERATIONS back-to-back all_to_all_single calls with
the host clock from a barrier to the stream's end; the operation's time is that over ITERATIONS, averaged
over the ranks (nccl-tests' default). algbw = S / time and busbw = algbw x (ranks - 1) / ranks, GB = 1e9
bytes, as nccl-tests define them (its doc/PERFORMANCE.md). Every rank checks what arrived from every rank.
Prints one JSON object per size; exits 77 (skipped) where torch, CUDA, NCCL or a second GPU is missing.

usage: nccl_all_to_all.py [BYTES...] [--iterations N] [--warmup N]   (BYTES default 268435456)
"""
import argparse
import json
import os
import socket
import sys
import time

SKIP = 77


def parse(argv):
    p = argparse.ArgumentParser(description="NCCL all-to-all through torch.distributed, as a reference")
    p.add_argument("bytes", nargs="*", type=int, default=[256 << 20], help="bytes each rank sends each rank")
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    return p.parse_args(argv)


def rates(per_rank_bytes, ranks, seconds):
    """(S, algbw, busbw) of an all-to-all in which every rank sends `per_rank_bytes` to every rank, in GB/s."""
    total = per_rank_bytes * ranks
    algbw = total / seconds / 1e9
    return total, algbw, algbw * (ranks - 1) / ranks


def nccl_version(torch):
    v = torch.cuda.nccl.version()
    return ".".join(map(str, v)) if isinstance(v, tuple) else str(v)


def worker(rank, ranks, port, args, results):
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=ranks)
    try:
        for per_rank in args.bytes:
            n = per_rank // 4  # int32 words to each rank
            # Word k of the block for rank d: a function of (this rank, d, k), so a block landing in the wrong
            # place or half-written is caught.
            k = torch.arange(n, dtype=torch.int64, device="cuda")
            blocks = [((k * 7 + rank * 1000003 + d * 7919) % 2147483647).to(torch.int32) for d in range(ranks)]
            send = torch.cat(blocks)
            recv = torch.empty_like(send)
            for _ in range(args.warmup):
                dist.all_to_all_single(recv, send)
            torch.cuda.synchronize()
            dist.barrier()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(args.iterations):
                dist.all_to_all_single(recv, send)
            torch.cuda.synchronize()
            elapsed = torch.tensor([(time.perf_counter() - t0) / args.iterations], dtype=torch.float64, device="cuda")
            wrong = 0
            for s in range(ranks):
                want = ((k * 7 + s * 1000003 + rank * 7919) % 2147483647).to(torch.int32)
                wrong += int((recv[s * n:(s + 1) * n] != want).sum().item())
            wrong_t = torch.tensor([wrong], dtype=torch.int64, device="cuda")
            dist.all_reduce(wrong_t)
            longest = elapsed.clone()
            dist.all_reduce(elapsed)
            dist.all_reduce(longest, op=dist.ReduceOp.MAX)
            if rank == 0:
                mean_s = elapsed.item() / ranks
                total, algbw, busbw = rates(n * 4, ranks, mean_s)
                _, _, busbw_slowest = rates(n * 4, ranks, longest.item())
                results.put({"ranks": ranks, "bytes_per_peer": n * 4, "size_bytes": total, "iterations": args.iterations,
                             "time_us": mean_s * 1e6, "algbw_gbps": algbw, "busbw_gbps": busbw,
                             "busbw_slowest_rank_gbps": busbw_slowest, "wrong_words": int(wrong_t.item()),
                             "nccl_nvls_enable": os.environ.get("NCCL_NVLS_ENABLE"),
                             "torch": torch.__version__, "nccl": nccl_version(torch)})
            del send, recv, blocks, k
            torch.cuda.empty_cache()
    finally:
        dist.destroy_process_group()


def main(argv):
    args = parse(argv)
    os.environ["NCCL_NVLS_ENABLE"] = "0"  # before any process starts NCCL
    try:
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp
    except ImportError as e:
        print(f"skipped: no PyTorch here ({e})")
        return SKIP
    if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
        print("skipped: fewer than two CUDA GPUs visible to PyTorch")
        return SKIP
    if not dist.is_available() or not dist.is_nccl_available():
        print("skipped: this PyTorch has no NCCL")
        return SKIP
    ranks = torch.cuda.device_count()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    try:
        mp.start_processes(worker, args=(ranks, port, args, results), nprocs=ranks, join=True, start_method="spawn")
    except Exception as e:  # a rank's failure, already printed by that rank
        print(f"nccl_all_to_all: a rank failed: {str(e).strip().splitlines()[-1] if str(e).strip() else e!r}",
              file=sys.stderr)
        return 1
    bad = 0
    for _ in args.bytes:
        r = results.get(timeout=60)
        print(json.dumps(r), flush=True)
        bad += r["wrong_words"] != 0
    if bad:
        print(f"nccl_all_to_all: words arrived wrong in {bad} size(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
