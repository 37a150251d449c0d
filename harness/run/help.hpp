#pragma once
// gpu_bench --help and --families: what the program prints without a GPU.
#include "harness/run/run_state.hpp"

namespace gpu_bench {

// The usage text, every registered family's own part of it, and the exit statuses.
void print_help();

// --help and --families: printed without a GPU, and nothing else done.
step_result describe_only(const run_state& run);

}  // namespace gpu_bench
