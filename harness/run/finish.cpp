#include "harness/run/finish.hpp"

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/context/context_format.hpp"
#include "harness/context/nvml.hpp"
#include "harness/measure/loop.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/host_load.hpp"
#include "harness/run/rounds.hpp"
#include "harness/run/thread_cpu.hpp"
#include "harness/run/timeline.hpp"

namespace gpu_bench {

// The timeline, the run's totals and samples into the output file, and the file committed.
step_result write_outputs(const run_state& run, gpu_bench::atomic_output& out) {
  if (const std::string why = gpu_bench::timeline::instance().write(); !why.empty()) {
    std::fprintf(stderr, "gpu_bench: %s\n", why.c_str());
    return 1;
  }
  if (out.active() && !run.opts.list_only) {
    const gpu_bench::host_load last_round = gpu_bench::last_round_host_load();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - run.started).count();
    std::vector<gpu_bench::run_samples> samples;
    for (const auto& r : gpu_bench::recorded_runs())
      samples.push_back({r.name, r.repetition, &r.times_s, &r.round_times_s, r.wall_s, r.sampling_wall_s,
                         r.calibration_wall_s, r.round_prior.rel_sd, r.round_prior.dof, &r.earlier_times_s,
                         &r.placements});
    std::vector<std::pair<std::string, std::string>> totals = {
        {"gpu_bench.elapsed_s", gpu_bench::fact_text(std::optional<double>(elapsed))},
        {"gpu_bench.timed_s",
         gpu_bench::fact_text(std::optional<double>(gpu_bench::timed_seconds_total() + run.earlier_rounds_timed_s))},
        {"gpu_bench.calibration_timed_s",
         gpu_bench::fact_text(std::optional<double>(gpu_bench::calibration_timed_seconds_total()))}};
    if (const std::string moves = gpu_bench::fast_cpu_text(); !moves.empty())
      totals.emplace_back("gpu_bench.cpu_moves", moves);
    if (!gpu_bench::earlier_round_processes().empty())
      totals.emplace_back("gpu_bench.round_processes",
                          gpu_bench::round_processes_text(gpu_bench::earlier_round_processes()));
    std::vector<std::pair<std::string, gpu_bench::host_load>> hosts;
    for (const auto& p : gpu_bench::earlier_round_processes()) hosts.emplace_back(p.label, p.host);
    hosts.emplace_back("last", last_round);
    totals.emplace_back("gpu_bench.round_host", gpu_bench::round_host_text(hosts));
    // After the last case: what each GPU's link error counters say of the whole run beside their start.
    for (const auto& [device, bus] : run.context_gpus) {
      const auto errors = gpu_bench::link_error_context(device, gpu_bench::read_nvml_link_errors(bus), "end");
      totals.insert(totals.end(), errors.begin(), errors.end());
    }
    const std::string why = gpu_bench::annotate_results(out.temp_path(), totals, samples);
    if (!why.empty()) std::fprintf(stderr, "gpu_bench: warning: %s\n", why.c_str());
  }
  // Failed cases are in the file with their error messages: keep what was measured.
  if (const std::string why = out.commit(); !why.empty()) {
    std::fprintf(stderr, "gpu_bench: %s\n", why.c_str());
    return 1;
  }
  return go_on;
}

// 0 when every case ran and verified its data, else 1.
int exit_status() {
  const int failed = gpu_bench::failed_case_count();
  if (failed > 0) {
    std::fprintf(stderr, "gpu_bench: %d case run%s failed (see error_message in the output)\n", failed,
                 failed == 1 ? "" : "s");
    return 1;
  }
  return 0;
}

}  // namespace gpu_bench
