#pragma once
// The checks before any case runs: our flags, Google Benchmark's, the filter, the output files, the GPU and
// the --sizes list. Each refuses a run in one line on stderr, with its exit status.
#include <string>
#include <vector>

#include "harness/run/options.hpp"
#include "harness/run/output_file.hpp"
#include "harness/run/run_state.hpp"

namespace gpu_bench {

// 0 when GPU `device` is usable and current, else the exit status after one line on stderr.
int check_gpu(int device);

// Why the largest --sizes size cannot be held by a selected case, or empty.
std::string sizes_that_do_not_fit(const options& o, const std::string& filter, const std::vector<std::string>& names);

// Why a --sizes size is under a selected family's smallest, or empty.
std::string sizes_below_family_minimum(const options& o, const std::string& filter,
                                       const std::vector<std::string>& names);

// gpu_bench's own flags, taken out of argv.
step_result take_our_flags(run_state& run, int& argc, char** argv);

// The filter and repetitions Google Benchmark will use; --preset=gate's filter in place of the user's.
step_result take_filter(run_state& run, int argc, char** argv);

// Every file the run writes can be written, and the flags that need one have it.
step_result check_outputs(const run_state& run, const atomic_output& out);

// Google Benchmark started on the flags left; one line for a flag neither knows.
step_result initialize_benchmark(run_state& run);

}  // namespace gpu_bench
