#include "harness/run/help.hpp"

#include <cstdio>
#include <string>

#include "harness/run/case_name.hpp"
#include "harness/run/flags.hpp"
#include "harness/run/options.hpp"
#include "harness/run/registry.hpp"

namespace gpu_bench {

void print_help() {
  std::printf(
      "gpu_bench %s: how data moves between host and GPU memory, and how streams, events and\n"
      "synchronisation shape it. Each case is measured in --rounds rounds, each a process of its own, sampled\n"
      "in each until its median's 95%% confidence interval is narrow enough (--noise) or the round's share of\n"
      "the time budget is spent. Its manual time is the median of its rounds' medians, or from five rounds\n"
      "the mean of their fastest half; noise_pct is the half-width of a 95%% prediction interval for the\n"
      "next independent run's figure, and detectable_pct the smallest change gpu-bench-compare calls\n"
      "between two runs like it.\n\n"
      "usage: gpu_bench [--preset=NAME] [--device=N|all] [--sizes=SPEC] [--full] [--rounds=N] [--noise=PCT]\n"
      "                 [--max_time_per_case=S] [Google Benchmark flags]\n\n"
      "gpu_bench flags:\n",
      GPU_BENCH_VERSION);
  std::fputs(flags_help(flag_section::own).c_str(), stdout);
  std::fputs("\nGoogle Benchmark flags that matter most:\n", stdout);
  std::fputs(flags_help(flag_section::google_benchmark).c_str(), stdout);
  std::fputs(
      "\n"
      "Case names are Family/key:value/...; values are lower-case tokens or integers (bytes as integers).\n"
      "Units: rates in GB/s with GB = 1e9 bytes; times in microseconds (GPU time unless the label says\n"
      "host clock). Every case reports samples and noise_pct beside its own counters, and sample_p50_us,\n"
      "sample_p90_us and sample_p99_us: one sample's time at those percentiles over every round's samples\n"
      "(linear interpolation, numpy.percentile's default). Where NVML reads its GPUs, also power_w, temp_c,\n"
      "sm_clock_mhz and mem_clock_mhz as it starts and as it ends, outside its samples (_start, _end: the most\n"
      "power and heat of its GPUs, its first GPU's clocks), and link_errors_rose where their link error\n"
      "counters rose while it ran. Iterations is 1, as each Google Benchmark run holds the case's whole\n"
      "sampling.\n"
      "Memory kinds: pageable pinned write_combined registered mapped managed_prefetch managed_fault device\n\n"
      "families:\n",
      stdout);
  for (const auto& f : gpu_bench::families())
    std::printf("%s: %s\n%s\n", f.name.c_str(), f.summary.c_str(), f.help.c_str());
  std::printf(
      "Exit status: 0 when every selected case ran and verified its data; 1 when a case failed, no case\n"
      "matched, or no GPU is visible (--device=all needs one even to list); 2 for a bad flag or a --device that\n"
      "does not exist; 130 after Ctrl-C.\n");
}

// --help, --families and --flags_markdown: printed without a GPU, and nothing else done.
step_result describe_only(const run_state& run) {
  if (run.opts.help) {
    print_help();
    return 0;
  }
  if (run.opts.flags_markdown) {
    std::fputs(flags_markdown().c_str(), stdout);
    return 0;
  }
  if (run.opts.list_families) {
    for (const auto& f : gpu_bench::families())
      std::printf("%s\t%s\t%s\n", f.name.c_str(), std::string(gpu_bench::to_name(f.scope)).c_str(), f.smoke.c_str());
    return 0;
  }
  return go_on;
}

}  // namespace gpu_bench
