#pragma once
// The cases of a run: every family's registered on the GPUs --device names, then measured in rounds.
#include "harness/run/run_state.hpp"

namespace gpu_bench {

// Every family's cases, on the GPUs --device names; one line where the filter selects none.
step_result register_cases(run_state& run);

// The rounds before the last in processes of their own, then the last in this one.
step_result run_rounds(run_state& run);

}  // namespace gpu_bench
