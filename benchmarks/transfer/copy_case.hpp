#pragma once
// One Transfer-shaped case, end to end: buffers from the cache, source filled and destination poisoned,
// the timed loop (gated unless the memory kind's enqueue can block), every word checked, and the gbps,
// host_blocked_us and bytes_per_second counters. Shared by the families that move bytes this way
// (Transfer, SmallCopy).
#include <benchmark/benchmark.h>

#include <optional>

#include "benchmarks/transfer/model.hpp"
#include "fixtures/measure/loop.hpp"

namespace gpu_bench {

// Fails the case with a sentence on any error (and returns nullopt); otherwise returns its samples.
std::optional<sample_set> run_copy_case(benchmark::State& state, const transfer_case& c);

}  // namespace gpu_bench
