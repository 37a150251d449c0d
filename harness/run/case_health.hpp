#pragma once
// What a registered case reports of its GPUs' health after its samples: the SM clock, throttling and the
// --on-throttle policy, a PCIe link below its maximum, and the readings at the case's start and end.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "harness/context/health.hpp"

namespace gpu_bench {

// The health of every GPU the case used: counters, a warning for a PCIe link below its maximum (only for
// a case that crosses it), and the --on-throttle policy where power or heat held any of them down.
void report_health(benchmark::State& st, const std::string& name, bool host_link, const std::vector<int>& gpus,
                   const std::vector<health_summary>& hs);

// What the case's GPUs read at its start and end: power, temperature, clocks, link errors that rose.
void report_edges(benchmark::State& st, const case_edges& edges);

// The PCI bus ids of `gpus`, as the health sampler names GPUs.
std::vector<std::string> bus_ids(const std::vector<int>& gpus);

}  // namespace gpu_bench
