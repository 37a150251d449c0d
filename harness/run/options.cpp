#include "harness/run/options.hpp"

#include <cstdio>

namespace gpu_bench {
namespace {
options g_options;
}  // namespace

bool benchmark_has_iteration_counts() {
  const std::string v = GPU_BENCH_BENCHMARK_VERSION;  // "1.8.3", or "unavailable"
  int major = 0, minor = 0;
  if (std::sscanf(v.c_str(), "%d.%d", &major, &minor) != 2) return false;
  return major > 1 || (major == 1 && minor >= 8);
}

std::string benchmark_min_time_arg(bool iteration_counts) {
  // 1.7 runs one iteration first and stops once its (manual) time reaches the minimum; a case's median
  // sample is never below a nanosecond.
  return iteration_counts ? "--benchmark_min_time=1x" : "--benchmark_min_time=0.000000001";
}

const options& current_options() {
  return g_options;
}
void set_current_options(options o) {
  g_options = std::move(o);
}

}  // namespace gpu_bench

namespace gpu_bench {

std::vector<std::uint64_t> sizes_or(std::vector<std::uint64_t> family_default) {
  const options& o = current_options();
  return o.sizes_spec == "pow4" ? std::move(family_default) : o.sizes;
}

}  // namespace gpu_bench
