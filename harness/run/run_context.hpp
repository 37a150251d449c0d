#pragma once
// The machine a run measures: its GPUs' facts and peaks, and the context the output file carries (gpu.*,
// host.*, gpu_bench.*).
#include "harness/run/run_state.hpp"

namespace gpu_bench {

// The GPU is usable, every visible GPU's facts and peaks are known, and the context holds them.
step_result describe_machine(run_state& run);

}  // namespace gpu_bench
