#pragma once
// The run's end: what goes into the output file after the last case, and the exit status.
#include "harness/run/output_file.hpp"
#include "harness/run/run_state.hpp"

namespace gpu_bench {

// The timeline, the run's totals and samples into the output file, and the file committed.
step_result write_outputs(const run_state& run, atomic_output& out);

// 0 when every case ran and verified its data, else 1.
int exit_status();

}  // namespace gpu_bench
