#include "harness/run/help.hpp"

#include <cstdio>
#include <string>

#include "harness/run/case_name.hpp"
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
      "gpu_bench flags:\n"
      "  --device=N            the GPU to measure (default 0)\n"
      "  --device=all          every single-GPU case once on each visible GPU in turn, its name ending in\n"
      "                        /device:N (all of GPU 0's cases, then GPU 1's, ...); listing them needs a GPU.\n"
      "                        Peer, PeerLatency and AllHost use every visible GPU whichever --device is given.\n"
      "  --sizes=SPEC          sizes for Transfer, HostBlocking, Overlap, Alloc, Latency, Peer and AllHost: pow4\n"
      "                        (default; 4 B to 1 GiB in powers of 4 for Transfer, each other family its own\n"
      "                        sweep), pow2 (the dense sweep), or a list such as 4,64K,1M,256M (multiples of 4\n"
      "                        bytes; Latency's footprints at least 128 B)\n"
      "  --gate_timeout_ms=MS  how long the gate holds a stream before the case fails (default 2000)\n"
      "  --gate=off            never hold a stream behind the gate (default on): GPU times then include the\n"
      "                        host's enqueue where it is slower than the GPU; for tools under which an enqueue\n"
      "                        waits for the GPU (compute-sanitizer's initcheck)\n"
      "  --full                every combination of every family's axes, not the default subset\n"
      "  --on-throttle=POLICY  warn (default), skip or fail a case run while power or heat held the clocks down\n"
      "  --timeline=FILE       write one iteration of each selected Overlap case, every copy and kernel on\n"
      "                        its stream, as Chrome trace JSON (chrome://tracing, Perfetto, gpu-bench-plot)\n"
      "  --preset=NAME         default (the default matrix), nightly (the same, named so in the context), or\n"
      "                        gate: pinned h2d, d2h and bidir at 256 MiB, d2d, pinned 4 B latency, and peer\n"
      "                        pairs where there are several GPUs (a short node check; no --benchmark_filter)\n"
      "  --rounds=N            measure every case in N rounds, rounds 1 to N-1 in processes of their own run\n"
      "                        one after the other (each in the last round's order), the last in this one (default\n"
      "                        %d, 1 to 20). A case's time is the median of its rounds' medians, or from five\n"
      "                        rounds the mean of their fastest half (rounds other traffic slowed cannot move\n"
      "                        it); noise_pct is the half-width of a\n"
      "                        95%% prediction interval for the next run's figure, from the rounds' spread\n"
      "                        moderated by that of the cases of its family, memory kind, direction and size\n"
      "                        band (never narrower than one round's own interval or the timer's tick);\n"
      "                        detectable_pct is the smallest change gpu-bench-compare calls against a run\n"
      "                        like it (at least 1%%). With --rounds=1, noise_pct is the 95%% confidence\n"
      "                        interval of this process's median alone, which says nothing of the next run,\n"
      "                        and there is no detectable_pct (docs/methodology.md)\n"
      "  --link_rounds=N       rounds for copies at the host link's throughput (pinned and registered copies\n"
      "                        of 1 MiB and more, and AllHost's), where that is more than --rounds (default\n"
      "                        %d): others' traffic on a shared link moves their time over seconds, so their\n"
      "                        figure needs more moments of it. The extra rounds run those cases alone,\n"
      "                        between the others\n"
      "  --link_max_rounds=N   a link-bound case whose rounds disagree takes more rounds, up to N in all\n"
      "                        (default %d, 1 to 20), until its detectable_pct is projected to come to\n"
      "                        --target_detectable; they run after the others, before the last round\n"
      "  --target_detectable=PCT  the detectable_pct those extra rounds aim at (default %g)\n"
      "  --noise=PCT           stop sampling a case in a round once the relative half-width of the 95%%\n"
      "                        confidence interval of its median is at most PCT over the square root of the\n"
      "                        variance factor of the rounds' center (0.449 for 3 rounds: their center then\n"
      "                        carries PCT of it), or one timer tick (default %g)\n"
      "  --max_time_per_case=S stop sampling a case after S seconds of wall time over all its rounds, or once\n"
      "                        the untimed part of its samples alone took a quarter of that (default %g); a case\n"
      "                        takes at least %d samples in all, and %d in each round, unless one sample\n"
      "                        alone outlasts its round's share of S, which its label says\n"
      "  --samples=on          write every sample of the last round into the --benchmark_out file\n"
      "                        (sample_times_s), and every earlier round's (earlier_sample_times_s); each\n"
      "                        round's median is there whenever there are several (round_times_s)\n"
      "  --verify=each         check the data after every sample (default: after the last)\n"
      "  --progress=WHEN       progress lines on stderr, at most one every 10 s per round: auto (default) and on\n"
      "                        print them whether stderr is a terminal or a log, off prints none\n"
      "  --cpu=WHICH           the CPU the thread that drives the GPU runs on: off (default; the kernel moves\n"
      "                        it), a CPU number (pinned for the whole run), or auto (each case starts on the\n"
      "                        CPU of the GPU's NUMA node whose clock reads fastest at that moment); neither\n"
      "                        made host-driven cases repeat better on an H200 (docs/methodology.md)\n"
      "  --families            one line per family: name, scope (single_gpu or multi_gpu), and a filter\n"
      "                        selecting a few small cases that cover its code paths\n"
      "  --help                this text\n\n"
      "Google Benchmark flags that matter most:\n"
      "  --benchmark_filter=REGEX      run the cases whose names match, e.g. 'Transfer/dir:h2d/mem:pinned'\n"
      "  --benchmark_list_tests        list the case names (no GPU needed, except with --device=all)\n"
      "  --list_gpus=N                 with --benchmark_list_tests: the cases of a machine of N GPUs, every pair\n"
      "                                of one link class (no GPU needed, --device=all included)\n"
      "  --benchmark_repetitions=N     repeat each case N times and report mean, median, stddev, cv\n"
      "  --benchmark_out=FILE --benchmark_out_format=json   write the results with the GPU context\n"
      "  --benchmark_min_time=SECONDS  at least this much timed sample time per case (a plain number)\n\n"
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
      GPU_BENCH_VERSION, gpu_bench::kDefaultRounds, gpu_bench::kDefaultLinkRounds, gpu_bench::kDefaultLinkMaxRounds,
      gpu_bench::kDefaultTargetDetectablePct, gpu_bench::kDefaultNoisePct, gpu_bench::kDefaultMaxTimePerCaseS,
      gpu_bench::kMinSamples, gpu_bench::kMinRoundSamples);
  for (const auto& f : gpu_bench::families())
    std::printf("%s: %s\n%s\n", f.name.c_str(), f.summary.c_str(), f.help.c_str());
  std::printf(
      "Exit status: 0 when every selected case ran and verified its data; 1 when a case failed, no case\n"
      "matched, or no GPU is visible (--device=all needs one even to list); 2 for a bad flag or a --device that\n"
      "does not exist; 130 after Ctrl-C.\n");
}

// --help and --families: printed without a GPU, and nothing else done.
step_result describe_only(const run_state& run) {
  if (run.opts.help) {
    print_help();
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
