#pragma once
// The figures every family derives alike from a case's samples and the bytes it declares, in one place:
// gbps (GB = 1e9 bytes) over the case's time (the median sample, or the center of the rounds' medians),
// Google Benchmark's bytes_per_second from the same bytes per reported iteration, and host_blocked_us.
// A family names what one sample moves; its own counters (per-direction rates, latencies) stay its own.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/measure/loop.hpp"

namespace gpu_bench {

// `bytes` over `seconds` in GB/s, GB = 1e9 bytes.
double rate_gbps(double bytes, double seconds);

// Which host time a case reports as host_blocked_us.
enum class host_time {
  none,
  mean,    // the samples' mean host_s: how long issuing a sample held the calling thread
  median,  // the median sample's host_s, for a family whose host time is its point (HostBlocking)
};

// What a case reports beside its own counters.
struct case_rates {
  double bytes = 0;              // what one sample moves, as the family's help counts it; 0: nothing moved
  bool gbps = true;              // counter gbps = bytes / the case's time
  bool bytes_per_second = true;  // Google Benchmark's own rate (SetBytesProcessed) from the same bytes
  host_time host_blocked = host_time::mean;
};

// The counters and the bytes processed `r` derives from `set`.
struct derived_rates {
  std::vector<std::pair<std::string, double>> counters;
  std::optional<std::int64_t> bytes_processed;  // per reported iteration: the median sample
};
derived_rates derive_rates(const sample_set& set, const case_rates& r);

// Sets on `state` what derive_rates derives.
void report_rates(benchmark::State& state, const sample_set& set, const case_rates& r);

}  // namespace gpu_bench
