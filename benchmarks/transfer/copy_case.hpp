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

struct copy_result {
  sample_set samples;
  // With `steady_batch` > 0: one copy's share of `steady_batch` copies issued back to back between one
  // pair of events (the median of such batches): the steady-state cost of a copy, without the event
  // bracketing that a single copy's time includes.
  double steady_s = 0;
};

// Fails the case with a sentence on any error (and returns nullopt); otherwise returns its samples.
std::optional<copy_result> run_copy_case(benchmark::State& state, const transfer_case& c, int steady_batch = 0);

}  // namespace gpu_bench
