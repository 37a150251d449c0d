#pragma once
// The state gpu_bench's steps share, and how a step ends the run. benchmarks/main.cpp takes the steps in
// order; they live in harness/run/: help, preflight, cases, run_context and finish.
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/run/options.hpp"

namespace gpu_bench {

// What one run of gpu_bench carries from step to step.
struct run_state {
  std::vector<std::string> user_args;  // as given, for the rounds this process runs as processes of their own
  gpu_bench::options opts;
  std::vector<std::string> benchmark_args;  // Google Benchmark's argv: ours taken out, the run's added
  std::string filter;
  long repetitions = 1;
  int visible = 0;   // GPUs
  long matched = 0;  // cases the filter selects
  std::chrono::steady_clock::time_point started;
  double earlier_rounds_timed_s = 0;
  // Each visible GPU's CUDA index and bus id, where this process writes the context: its link error counters
  // are read again when the run ends.
  std::vector<std::pair<int, std::string>> context_gpus;
  // What this process's start spent before its first case, phase by phase (gpu_bench.start_s): on a node
  // a process's start grows with its GPU count, and these say which part grows.
  std::vector<std::pair<std::string, double>> start_phases;
  std::chrono::steady_clock::time_point phase_began;
  void end_phase(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    start_phases.emplace_back(name, std::chrono::duration<double>(now - phase_began).count());
    phase_began = now;
  }
};

// Where a step ends the run, the exit status.
using step_result = std::optional<int>;
inline constexpr step_result go_on = std::nullopt;

}  // namespace gpu_bench
