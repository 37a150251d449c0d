// Transfer: one copy of N bytes per iteration between host memory of each kind and the GPU (h2d, d2h),
// both ways at once on two streams (bidir, 2N bytes counted), or within the GPU (d2d, N bytes counted once).
// GPU time from CUDA events around the copy, behind the gate except for pageable memory, whose enqueue
// waits for the copy; a managed prefetch by the host clock, ungated. gbps = bytes moved / that time, GB = 1e9 bytes.
#include <vector>

#include "benchmarks/shared/copy_case.hpp"
#include "benchmarks/transfer/model.hpp"
#include "harness/run/options.hpp"
#include "harness/run/registry.hpp"

namespace gpu_bench {
namespace {

void run_transfer(benchmark::State& state, const transfer_case& c) {
  copy_case(c).run(state);
}

const family_registration registration{[](family_descriptor& f) {
  f.name = "Transfer";
  f.summary = "one copy per iteration: host<->GPU for every host memory kind, both ways at once, and GPU<->GPU";
  f.axes = {{"dir", "{h2d,d2h,bidir,d2d}"},        {"mem", "{kind}"},
            optional_axis("numa", "remote"),       optional_axis("engine", "{ce,sm}"),
            optional_axis("cache", "{cold,warm}"), {"bytes", "{N}"}};
  f.help = f.name_pattern() +
           "    h2d, d2h   cudaMemcpyAsync for pageable, pinned, write_combined, registered; an SM copy kernel for\n"
           "               mapped; cudaMemPrefetchAsync for managed_prefetch; a kernel faulting the pages over for\n"
           "               managed_fault (h2d only). N bytes counted.\n"
           "    bidir      one h2d and one d2h of N bytes each at once, each on a stream of its own (mapped: one\n"
           "               kernel, half its blocks each way, every block resident at once); 2N bytes counted,\n"
           "               over the slower direction's own time (the two streams start microseconds apart).\n"
           "    d2d        cudaMemcpyAsync within the GPU (mem:device); N bytes counted once, though 2N cross\n"
           "               the memory bus (read and write). cache:cold (L2 overwritten before every sample) or\n"
           "               cache:warm (whatever the last sample left in L2).\n"
           "    counters   gbps (bytes counted / the case's GPU time, GB = 1e9 B); bidir also gbps_h2d and\n"
           "               gbps_d2h, each direction by its own events; host_blocked_us (mean time the enqueue held\n"
           "               the CPU); samples, noise_pct; bytes_per_second (Google Benchmark's own).\n"
           "    engine     the copy done by the other engine than the kind's own: engine:sm, a copy kernel through\n"
           "               device addresses, for pinned, registered and device memory (d2d); engine:ce,\n"
           "               cudaMemcpyAsync, for mapped. At 1 MiB and 256 MiB by default, every size under --full or\n"
           "               --sizes. The plain name is the kind's own engine.\n"
           "    numa_node  the NUMA node the host buffer's first page lies on, where the kernel can say.\n"
           "    placements copies under 1 MiB but pageable and managed ones take their samples in turn from\n"
           "               --placements sets of buffers and streams; the figure is the geometric mean of each\n"
           "               set's median, and the counter says how many sets.\n"
           "    Pageable cases run without the gate (their enqueue waits for the copy) and are labelled ungated.\n"
           "    Copy-engine cases prime their engine behind the gate with a copy between buffers of their own.\n"
           "    Managed cases move pages the source side has just written, before every sample. managed_prefetch\n"
           "    is timed by the host clock, from the prefetch's call to the host finding its stream done, and is\n"
           "    labelled host clock: events around it doubled a small prefetch's time. Its gbps_h2d and gbps_d2h\n"
           "    come from the same clock, each direction to its own stream found done.\n"
           "  Where the host has more than one NUMA node with memory (and gpu_bench was built with libnuma), every\n"
           "  host buffer is on its GPU's node, and each pageable, pinned, write_combined, registered and mapped case\n"
           "  gains a twin with numa:remote after mem: its host buffer on another node, the thread still on the\n"
           "  GPU's (numa:local is the plain name, so names match between hosts with one node and several).\n";
  f.headline = "gbps";
  f.unit = "GB/s";
  f.better_is = better::higher;
  f.kind = headline_kind::rate;
  f.host_link = "dir:h2d|dir:d2h|dir:bidir";
  // Page-locked host memory the engines (or SMs) reach straight over the link; write-combined and mapped
  // memory are too, but their checks read uncached host memory, which would cost each extra round seconds.
  f.link_bound = "mem:pinned|mem:registered";
  // Both directions at once share the link in a way that changes over tenths of a second (each direction alone
  // holds within a tenth of a percent), and a round of a few copies' milliseconds sees one such state.
  f.link_span = "dir:bidir";
  // Copies under 256 MiB but faulted managed ones ride the link rounds: five rounds, a process each. A small
  // copy of memory a copy engine or kernel reaches straight follows where each process placed its buffers and
  // streams. A pageable copy, and a managed prefetch, follow the host's state in each process. The copies of 1
  // to 64 MiB cost tens of milliseconds a round; those of 256 MiB and 1 GiB cost seconds, so they keep three
  // rounds. A faulted managed copy keeps three: each process draws a step of its own, and on an H200 one-round
  // processes spread 20 to 28% by median, so five rounds would still leave it far from 5% (docs/methodology.md).
  f.small_rounds =
      "mem:pinned|mem:write_combined|mem:registered|mem:mapped|mem:device|mem:pageable|mem:managed_prefetch";
  f.small_rounds_below = 256ull << 20;
  // The CPU stages a pageable copy, at the speed of the state its virtual CPU holds at the moment. Held in the
  // fast state, seven one-round processes on an H200 spread 4.2% (median sd over the 45 pageable cases), not
  // 7.0%, for a fifth more of their wall time (docs/methodology.md, "Host-driven cases and the CPU's state").
  // A managed prefetch timed by the host clock is the host's work too: in seven one-round processes on an H200,
  // its small copies read one of two levels about 15% apart, the fast one in two processes.
  f.fast_cpu = "mem:pageable|mem:managed_prefetch";
  // What is left of a pageable copy's spread moves with the host's memory at the moment; a managed one moves
  // pages through the host's memory too.
  f.machine_variance = "mem:pageable|mem:managed_prefetch|mem:managed_fault";
  f.machine_variance_cause = kPageableCopyCause;
  // Way 2: a bidirectional copy's time is its slower direction's own span, not the earlier start to the later stop.
  // Way 3: a pageable copy samples on a CPU in its fast state.
  // Way 4: a managed prefetch is timed by the host clock, without events.
  f.revisions = "2=dir:bidir;3=mem:pageable;4=mem:managed_prefetch";
  f.plot = "x=bytes;series=mem,engine;panel=dir";
  f.scope = family_scope::single_gpu;
  f.smoke = "^Transfer/";
  f.gate =
      "^Transfer/dir:(h2d|d2h|bidir)/mem:pinned/bytes:268435456/|^Transfer/dir:d2d/mem:device/cache:cold/"
      "bytes:268435456/";
  f.register_cases = [] {
    // The other engine's twins: a few sizes by default, every size under --full or a --sizes list.
    const options& o = current_options();
    const bool every = o.full || o.sizes_spec != "pow4";
    const std::vector<std::uint64_t> engine_sizes = every ? o.sizes : std::vector<std::uint64_t>{1u << 20, 256u << 20};
    for (const transfer_case& c : transfer_grid(o.sizes, numa_axis_available(), engine_sizes))
      register_case(transfer_name(c), [c](benchmark::State& st) { run_transfer(st, c); });
  };
}};

}  // namespace
}  // namespace gpu_bench
