// SmallCopy: the latency of one small copy (4 B, 64 B, 4 KiB) in each direction for each host memory kind
// a copy engine or kernel reaches directly, timed exactly as Transfer does (gate, engine priming, events),
// with the spread of the iterations: p50 and p99 of GPU and host time per run, and p50/p99 aggregates
// across repetitions (--benchmark_repetitions).
#include <cstdint>
#include <vector>

#include "benchmarks/transfer/copy_case.hpp"
#include "benchmarks/transfer/model.hpp"
#include "fixtures/measure/stats.hpp"
#include "fixtures/run/registry.hpp"

namespace gpu_bench {
namespace {

void run_small_copy(benchmark::State& state, const transfer_case& c) {
  const auto set = run_copy_case(state, c);
  if (!set || set->size() == 0) return;
  const std::vector<double> gpu = set->values([](const sample& s) { return s.seconds * 1e6; });
  const std::vector<double> host = set->values([](const sample& s) { return s.host_s * 1e6; });
  state.counters["p50_us"] = p50(gpu);
  state.counters["p99_us"] = p99(gpu);
  state.counters["host_p50_us"] = p50(host);
  state.counters["host_p99_us"] = p99(host);
}

const family_registration registration{{
    "SmallCopy",
    "latency of 4 B to 4 KiB copies, with the p50 and p99 of every iteration",
    "  SmallCopy/dir:{h2d,d2h}/mem:{pageable,pinned,write_combined,registered,mapped}/bytes:{4,64,4096}\n"
    "    one copy per iteration, timed as Transfer does. counters: p50_us and p99_us of the iterations'\n"
    "    GPU time, host_p50_us and host_p99_us of their host time, host_blocked_us, gbps. With\n"
    "    --benchmark_repetitions, _p50 and _p99 aggregates across repetitions join mean and median.\n",
    {"dir", "mem", "bytes"},
    "p50_us",
    "us",
    better::lower,
    headline_kind::time,
    "yes",
    "x=bytes;series=mem;panel=dir",
    family_scope::single_gpu,
    "^SmallCopy/.*mem:(pinned|pageable)/",
    [] {
      for (direction d : {direction::h2d, direction::d2h})
        for (mem_kind k :
             {mem_kind::pageable, mem_kind::pinned, mem_kind::write_combined, mem_kind::registered, mem_kind::mapped})
          for (std::uint64_t n : {4u, 64u, 4096u}) {
            const transfer_case c{d, k, n};
            case_name name("SmallCopy");
            name.add("dir", d).add("mem", k).add("bytes", n);
            register_case(name, [c](benchmark::State& st) { run_small_copy(st, c); })
                ->ComputeStatistics("p50", p50)
                ->ComputeStatistics("p99", p99);
          }
    },
}};

}  // namespace
}  // namespace gpu_bench
