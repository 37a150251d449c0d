// gpu_bench's entry point: our flags, then Google Benchmark's; the GPU and its facts; every registered
// family; an exit status that tells a nightly job whether every case ran.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "harness/run/cases.hpp"
#include "harness/run/finish.hpp"
#include "harness/run/help.hpp"
#include "harness/run/output_file.hpp"
#include "harness/run/preflight.hpp"
#include "harness/run/registry.hpp"
#include "harness/run/run_context.hpp"
#include "harness/run/run_state.hpp"

namespace {

using gpu_bench::check_outputs;
using gpu_bench::describe_machine;
using gpu_bench::describe_only;
using gpu_bench::exit_status;
using gpu_bench::initialize_benchmark;
using gpu_bench::register_cases;
using gpu_bench::run_rounds;
using gpu_bench::run_state;
using gpu_bench::step_result;
using gpu_bench::take_filter;
using gpu_bench::take_our_flags;
using gpu_bench::write_outputs;

// Registration, the machine's facts and the cases: any error they throw ends the run in one line.
step_result measure(run_state& run) {
  try {
    if (const step_result rc = register_cases(run)) return rc;
    if (!run.opts.list_only)
      if (const std::string why =
              gpu_bench::sizes_below_family_minimum(run.opts, run.filter, gpu_bench::registered_names());
          !why.empty()) {
        std::fprintf(stderr, "gpu_bench: %s\n", why.c_str());
        return 2;
      }
    if (!run.opts.list_only)
      if (const step_result rc = describe_machine(run)) return rc;
    return run_rounds(run);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_bench: %s\n", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Lazy module loading would load a kernel at its first launch, which waits for the GPU to go idle; behind
  // a closed gate that never happens. Load every kernel when the context is made instead.
  setenv("CUDA_MODULE_LOADING", "EAGER", 1);
  run_state run;
  run.user_args.assign(argv + 1, argv + argc);
  if (const step_result rc = take_our_flags(run, argc, argv)) return *rc;
  if (const step_result rc = describe_only(run)) return *rc;
  if (const step_result rc = take_filter(run, argc, argv)) return *rc;
  gpu_bench::atomic_output out(run.benchmark_args);
  if (const step_result rc = check_outputs(run, out)) return *rc;
  if (const step_result rc = initialize_benchmark(run)) return *rc;
  gpu_bench::install_interrupt_handler(out.temp_path());
  run.started = std::chrono::steady_clock::now();
  run.phase_began = run.started;
  // A debug build of Google Benchmark warns that timings may be affected. Its build type changes only its
  // own host-side loop, which runs once around each case's sampling here, never inside a sample.
  const gpu_bench::line_rewriter debug_note(
      std::cerr, "***WARNING*** Library was built as DEBUG. Timings may be affected.",
      "gpu_bench: Google Benchmark is a debug build; that slows only its own loop around each case, outside "
      "every timed sample (CUDA events, or the host clock inside the sample).");
  if (const step_result rc = measure(run)) return *rc;
  if (const step_result rc = write_outputs(run, out)) return *rc;
  return exit_status();
}
