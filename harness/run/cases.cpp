#include "harness/run/cases.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "harness/context/gpu_context.hpp"
#include "harness/context/nvml.hpp"
#include "harness/cuda/device.hpp"
#include "harness/measure/streams.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/run/host_load.hpp"
#include "harness/run/output_file.hpp"
#include "harness/run/preflight.hpp"
#include "harness/run/progress.hpp"
#include "harness/run/registry.hpp"
#include "harness/run/rounds.hpp"

namespace gpu_bench {

// Every family's cases, on the GPUs --device names; one line where the filter selects none.
step_result register_cases(run_state& run) {
  // Multi-GPU families register a case per GPU pair, and --device=all a copy of every case per GPU, so
  // registration needs the count; asking for it makes no context.
  const gpu_bench::options& opts = run.opts;
  if (opts.list_gpus > 0) gpu_bench::list_as_if_gpus(opts.list_gpus);
  run.visible = gpu_bench::visible_gpu_count();  // the first CUDA call: the driver starts on every visible GPU
  run.end_phase("driver");
  if (opts.all_devices && run.visible == 0) {
    if (opts.list_only) {
      std::fprintf(stderr,
                   "gpu_bench: --device=all lists every case once per visible GPU, and no CUDA GPU is visible; "
                   "list without it, or with --device=N\n");
      return 1;
    }
    return check_gpu(0);  // says why no GPU is visible
  }
  // What registration reads of the machine, in the steps whose cost grows differently with the GPU count:
  // NVML's start, each GPU's NVLinks, then each ordered pair's link (the multi-GPU families' cases follow it).
  if (run.visible > 0 && opts.list_gpus == 0) {
    (void)gpu_bench::nvml_started();
    run.end_phase("nvml");
    gpu_bench::read_visible_gpu_nvlinks();
    run.end_phase("nvlinks");
    (void)gpu_bench::visible_gpu_links();
    run.end_phase("pairs");
  }
  gpu_bench::register_all_families(
      opts.all_devices ? gpu_bench::device_range(run.visible) : std::vector<int>{opts.device}, opts.all_devices);
  run.end_phase("registration");
  // Judge the filter before making a context, so a filter that selects nothing gets one line.
  run.matched = gpu_bench::count_filter_matches(run.filter, gpu_bench::registered_names());
  if (run.matched == 0) {
    const auto unknown = gpu_bench::unknown_mem_kinds_in_filter(run.filter);
    if (!unknown.empty())
      std::fprintf(stderr, "gpu_bench: no case matches the filter: '%s' is not a memory kind (see --help)\n",
                   unknown.front().c_str());
    else
      std::fprintf(stderr, "gpu_bench: no case matches the filter (see --benchmark_list_tests%s)\n",
                   run.visible == 0 ? "; the multi-GPU families have cases only where a GPU is visible" : "");
    return 1;
  }
  return go_on;
}

// The rounds before the last in processes of their own, then the last in this one.
step_result run_rounds(run_state& run) {
  const gpu_bench::options& opts = run.opts;
  const bool show_progress = gpu_bench::progress_shown(opts.progress) && !opts.list_only;
  gpu_bench::progress progress(static_cast<std::size_t>(std::max(0L, run.matched) * run.repetitions),
                               opts.max_time_per_case_s, show_progress ? stderr : nullptr, 10.0, opts.rounds,
                               opts.round == 0);
  if (opts.round > 0) progress.start_round(opts.round);
  if (!opts.round_walls.empty()) {
    std::ifstream in(opts.round_walls);
    progress.expect_walls(gpu_bench::walls_from_text({std::istreambuf_iterator<char>(in), {}}),
                          static_cast<int>(run.repetitions));
  }
  if (!opts.list_only && opts.rounds > 1 && opts.round == 0) {
    using gpu_bench::round_kind;
    const auto link_cases = gpu_bench::link_round_cases(run.filter, gpu_bench::registered_names());
    const auto host_cases = gpu_bench::host_round_cases(run.filter, gpu_bench::registered_names());
    const int link_extra = gpu_bench::rounds_of_case(round_kind::link) - opts.rounds;
    const int host_extra = gpu_bench::rounds_of_case(round_kind::host) - opts.rounds;
    if (gpu_bench::run_earlier_rounds(run.user_args, opts.rounds, link_cases, link_extra, host_cases, host_extra,
                                      gpu_bench::event_tick_s(), &progress, run.earlier_rounds_timed_s) != 0) {
      std::fprintf(stderr, "gpu_bench: interrupted; no output file written\n");
      return 130;
    }
  }
  if (!gpu_bench::earlier_full_round_walls().empty())
    progress.expect_walls(gpu_bench::earlier_full_round_walls(), static_cast<int>(run.repetitions));
  gpu_bench::set_run_progress(&progress);
  gpu_bench::mark_last_round_start();
  const auto display = gpu_bench::round_display_reporter(opts.round);
  const std::size_t ran =
      display ? benchmark::RunSpecifiedBenchmarks(display.get()) : benchmark::RunSpecifiedBenchmarks();
  gpu_bench::set_run_progress(nullptr);
  gpu_bench::stream_set::clear_cache();
  gpu_bench::buffer_cache::instance().clear();
  benchmark::Shutdown();
  if (ran == 0) {
    std::fprintf(stderr, "gpu_bench: no case matches the filter (see --benchmark_list_tests)\n");
    return 1;  // `out` removes the empty output on the way out
  }
  return go_on;
}

}  // namespace gpu_bench
