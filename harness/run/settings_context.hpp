#pragma once
// The run's own settings as gpu_bench.* context facts (docs/json.md).
#include <string>

#include "harness/context/context_format.hpp"
#include "harness/run/options.hpp"

namespace gpu_bench {

// The settings a run's figures depend on: preset, filter, sampling targets, rounds, placements, how rounds
// combine. `filter` is the user's --benchmark_filter; a run without one (or a gate run, which picks its own
// cases) writes no gpu_bench.filter, as a context value is never empty.
context_list run_settings_context(const options& opts, const std::string& filter);

}  // namespace gpu_bench
