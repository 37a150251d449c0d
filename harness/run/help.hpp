#pragma once
// gpu_bench --help, --families and --flags_markdown: what the program prints without a GPU.
#include "harness/run/run_state.hpp"

namespace gpu_bench {

// The usage text, every registered family's own part of it, and the exit statuses.
void print_help();

// --help, --families and --flags_markdown: printed without a GPU, and nothing else done.
step_result describe_only(const run_state& run);

}  // namespace gpu_bench
