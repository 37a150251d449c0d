#include "harness/measure/rates.hpp"

namespace gpu_bench {

double rate_gbps(double bytes, double seconds) {
  return bytes / seconds / 1e9;
}

derived_rates derive_rates(const sample_set& set, const case_rates& r) {
  derived_rates d;
  if (r.bytes > 0 && r.gbps) d.counters.emplace_back("gbps", rate_gbps(r.bytes, set.time_s()));
  if (r.host_blocked == host_time::mean) d.counters.emplace_back("host_blocked_us", set.mean_host_s() * 1e6);
  if (r.host_blocked == host_time::median)
    d.counters.emplace_back("host_blocked_us", set.median_of([](const sample& s) { return s.host_s; }) * 1e6);
  if (r.bytes > 0 && r.bytes_per_second) d.bytes_processed = static_cast<std::int64_t>(r.bytes);
  return d;
}

void report_rates(benchmark::State& state, const sample_set& set, const case_rates& r) {
  const derived_rates d = derive_rates(set, r);
  for (const auto& [name, value] : d.counters) state.counters[name] = value;
  if (d.bytes_processed) state.SetBytesProcessed(*d.bytes_processed);
}

}  // namespace gpu_bench
