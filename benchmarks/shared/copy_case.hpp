#pragma once
// One Transfer-shaped copy case, end to end: buffers from the cache, source filled and destination
// poisoned, the timed loop (gated unless the memory kind's enqueue can block), every word checked, and the
// gbps, host_blocked_us and bytes_per_second counters. Shared by the families that move bytes this way
// (Transfer, SmallCopy).
#include <benchmark/benchmark.h>

#include <memory>
#include <optional>

#include "benchmarks/transfer/model.hpp"
#include "harness/measure/loop.hpp"

namespace gpu_bench {

class copy_case {
 public:
  // Takes the case's buffers and streams and writes its data; throws what they throw.
  explicit copy_case(const transfer_case& c);
  ~copy_case();
  copy_case(const copy_case&) = delete;
  copy_case& operator=(const copy_case&) = delete;

  // The case's samples, or nullopt where it failed (with a sentence, through fail_case). Without
  // `report_gbps` the case reports no gbps counter: a single small copy's time is latency, not a rate.
  std::optional<sample_set> run(benchmark::State& state, bool report_gbps = true);

  // One sample of `copies` copies issued back to back between one pair of events, its time one copy's
  // share: the steady-state cost of a copy, without the event bracketing a single copy's time includes.
  sample back_to_back(int copies);

 private:
  struct held;
  std::unique_ptr<held> held_;
};

}  // namespace gpu_bench
