// SmallCopy: the latency of one small copy (4 B, 64 B, 4 KiB) in each direction for each host memory kind
// a copy engine or kernel reaches directly, timed exactly as Transfer does (gate, engine priming, events),
// with the spread of the iterations: p50 and p99 of GPU and host time per run, and p50/p99 aggregates
// across repetitions (--benchmark_repetitions).
#include <cstdint>
#include <vector>

#include "benchmarks/shared/copy_case.hpp"
#include "benchmarks/transfer/model.hpp"
#include "harness/measure/rates.hpp"
#include "harness/measure/stats.hpp"
#include "harness/run/registry.hpp"

namespace gpu_bench {
namespace {

void run_small_copy(benchmark::State& state, const transfer_case& c) {
  copy_case copy(c);
  // A single copy's time is latency: no bandwidth comes from it. Copies back to back give the steady-state
  // cost.
  const auto set = copy.run(state, false);
  if (!set) return;
  constexpr int kSteadyBatch = 100;
  case_plan batch;
  batch.measure = [&] { return copy.back_to_back(kSteadyBatch); };
  sampling_rules rules = rules_from_options();
  rules.min_samples = 10;
  rules.budget_s = 0.05;  // a figure beside the case's own: a short look suffices
  const double steady_s = calibrate(batch, rules).time_s();
  if (set->size() == 0) return;
  const std::vector<double> gpu = set->values([](const sample& s) { return s.seconds * 1e6; });
  const std::vector<double> host = set->values([](const sample& s) { return s.host_s * 1e6; });
  state.counters["steady_us"] = steady_s * 1e6;
  state.counters["steady_gbps"] = rate_gbps(static_cast<double>(c.bytes), steady_s);
  // The headline is the case's time: the rounds' center where it ran in several, which their noise_pct
  // describes (this process's own p50 is one round's). The tail keeps this round's ratio to its median.
  const double to_center = set->time_s() / set->own_time_s();
  state.counters["p50_us"] = set->time_s() * 1e6;
  state.counters["p99_us"] = p99(gpu) * to_center;
  state.counters["host_p50_us"] = p50(host);
  state.counters["host_p99_us"] = p99(host);
}

const family_registration registration{[](family_descriptor& f) {
  f.name = "SmallCopy";
  f.summary = "latency of 4 B to 4 KiB copies, with the p50 and p99 of every iteration";
  f.axes = {
      {"dir", "{h2d,d2h}"}, {"mem", "{pageable,pinned,write_combined,registered,mapped}"}, {"bytes", "{4,64,4096}"}};
  f.help = f.name_pattern() +
           "    one copy per sample between a pair of events, timed as Transfer does: p50_us, the samples' median\n"
           "    GPU time (the latency of one copy, event bracketing included; over rounds, their center), p99_us\n"
           "    (the last round's p99 over its median, times p50_us), host_p50_us and host_p99_us of the last\n"
           "    round's host time, host_blocked_us; steady_us, one copy's share of 100 issued back to back between\n"
           "    one pair of events (the steady-state cost, without the bracketing), and steady_gbps = bytes /\n"
           "    steady_us. With --benchmark_repetitions, _p50 and _p99 aggregates across repetitions join mean and\n"
           "    median. Copies of every kind but pageable take their samples in turn from --placements sets of\n"
           "    buffers and streams, as Transfer's do (placements).\n";
  f.headline = "p50_us";
  f.unit = "us";
  f.better_is = better::lower;
  f.kind = headline_kind::time;
  f.host_link = "yes";
  f.fast_cpu = "yes";
  f.machine_variance = "yes";
  // Every small copy rides the link rounds: a pinned one's fixed cost follows where each process placed its
  // buffers and streams, a pageable one's the host's state in each process.
  f.small_rounds = "yes";
  f.machine_variance_cause = kHostCpuStateCause;
  f.plot = "x=bytes;series=mem;panel=dir";
  f.scope = family_scope::single_gpu;
  f.smoke = "^SmallCopy/.*mem:(pinned|pageable)/";
  f.gate = "^SmallCopy/dir:(h2d|d2h)/mem:pinned/bytes:4/";
  f.register_cases = [] {
    for (direction d : {direction::h2d, direction::d2h})
      for (mem_kind k :
           {mem_kind::pageable, mem_kind::pinned, mem_kind::write_combined, mem_kind::registered, mem_kind::mapped})
        for (std::uint64_t n : {4u, 64u, 4096u}) {
          const transfer_case c{d, k, n};
          case_name name("SmallCopy");
          name.add("dir", d).add("mem", k).add("bytes", n);
          register_case(
              name, [c](benchmark::State& st) { run_small_copy(st, c); }, {},
              [](benchmark::internal::Benchmark* b) {
                b->ComputeStatistics("p50", p50)->ComputeStatistics("p99", p99);
              });
        }
  };
}};

}  // namespace
}  // namespace gpu_bench
