#include "harness/run/failures.hpp"

#include <benchmark/benchmark.h>

#include <atomic>

namespace gpu_bench {
namespace {
std::atomic<int> g_failed{0};
}

void fail_case(benchmark::State& state, const std::string& why) {
  ++g_failed;
  state.SkipWithError(why.c_str());
}

int failed_case_count() {
  return g_failed.load();
}

}  // namespace gpu_bench
