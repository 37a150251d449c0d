// gpu_bench's entry point: our flags, then Google Benchmark's; the GPU and its facts; every registered
// family; an exit status that tells a nightly job whether every case ran.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/context/gpu_context.hpp"
#include "harness/context/host_facts.hpp"
#include "harness/context/nvml.hpp"
#include "harness/context/profile.hpp"
#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"
#include "harness/measure/loop.hpp"
#include "harness/measure/streams.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/options.hpp"
#include "harness/run/output_file.hpp"
#include "harness/run/progress.hpp"
#include "harness/run/registry.hpp"
#include "harness/run/rounds.hpp"
#include "harness/run/thread_cpu.hpp"
#include "harness/run/timeline.hpp"

namespace {

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

// One line on stderr and no output file: the GPU is missing, or unusable by this build.
int check_gpu(int device) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc == cudaErrorInsufficientDriver) {
    // The runtime says this both when the driver is too old and when there is no driver at all.
    void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (libcuda == nullptr) {
      std::fprintf(stderr,
                   "gpu_bench: no CUDA GPU is visible (no NVIDIA driver is installed: libcuda.so.1 not found)\n");
      return 1;
    }
    dlclose(libcuda);
    int runtime = 0, driver = 0;
    (void)cudaRuntimeGetVersion(&runtime);
    (void)cudaDriverGetVersion(&driver);
    std::fprintf(stderr,
                 "gpu_bench: the NVIDIA driver supports CUDA %s but this build needs CUDA %s; update the driver\n",
                 gpu_bench::format_cuda_version(driver).c_str(), gpu_bench::format_cuda_version(runtime).c_str());
    return 1;
  }
  if (rc != cudaSuccess || count == 0) {
    std::fprintf(stderr, "gpu_bench: no CUDA GPU is visible (%s)\n",
                 rc == cudaSuccess ? "the driver reports 0 devices" : cudaGetErrorString(rc));
    return 1;
  }
  if (device >= count) {
    std::fprintf(stderr, "gpu_bench: --device=%d does not exist: %d GPU%s visible (0 to %d)\n", device, count,
                 count == 1 ? " is" : "s are", count - 1);
    return 2;
  }
  const cudaError_t set = cudaSetDevice(device);
  if (set != cudaSuccess) {
    std::fprintf(stderr, "gpu_bench: cannot use GPU %d: %s\n", device, cudaGetErrorString(set));
    return 1;
  }
  return 0;
}

// Where the host has several NUMA nodes: host buffers go to each GPU's node (buffer_cache does that), and
// the thread that drives the GPU runs there too, so a remote buffer is the only remote thing in a case.
// With --device=all the GPUs may sit on different nodes, so the thread stays where the kernel puts it.
// Returns the context's host.numa_* facts.
gpu_bench::context_list bind_to_gpu_node(const gpu_bench::options& opts) {
  const auto nodes = gpu_bench::host_memory_nodes();
  std::string thread = "unbound";
  // An earlier round's process meets the same machine: the process the user started has said it already.
  const bool say = opts.round == 0;
  if (const auto why = gpu_bench::numa_unbound_reason(opts.device); say && why && nodes.size() > 1)
    std::fprintf(stderr, "gpu_bench: warning: %zu NUMA nodes, host memory not bound (%s)\n", nodes.size(),
                 why->c_str());
  const auto node = gpu_bench::host_node_for(opts.device, gpu_bench::numa_place::local);
  if (node && !opts.all_devices) {
    const std::string why = gpu_bench::run_on_node(*node);
    if (why.empty())
      thread = "node " + std::to_string(*node);
    else if (say)
      std::fprintf(stderr, "gpu_bench: warning: cannot run on NUMA node %d: %s\n", *node, why.c_str());
  }
  return {{"host.numa_nodes", nodes.empty() ? gpu_bench::kUnavailable : std::to_string(nodes.size())},
          {"host.numa_binding", gpu_bench::numa_binding_fact(opts.device)},
          {"host.numa_thread", thread},
          {"host.thread_cpu", gpu_bench::set_thread_cpu_policy(
                                  opts.cpu, gpu_bench::cpus_on_node(gpu_bench::allowed_cpus(), node.value_or(-1)))}};
}

}  // namespace

namespace gpu_bench {
// A --sizes list whose largest size cannot be held: a case of a selected family holds its buffers_of_size
// buffers of it, on the GPU or of host memory (a copy two: d2d and bidir on the GPU, bidir of pinned host
// memory; a Latency case one), so both must have room for that many. Checked before any case runs, so a
// run is refused in one line rather than failing case after case.
std::string sizes_that_do_not_fit(const options& o, const std::string& filter, const std::vector<std::string>& names) {
  if (o.sizes_spec == "pow4" || o.sizes.empty()) return {};
  const std::uint64_t largest = *std::max_element(o.sizes.begin(), o.sizes.end());
  const size_need need = memory_for_size(largest, filter, names);
  if (need.buffers == 0) return {};
  std::size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const std::string what =
      need.buffers == 1 ? "--sizes asks for " + format_bytes(largest) + ", and a case holds one buffer of that size"
                        : "--sizes asks for copies of " + format_bytes(largest) + ", and a case holds " +
                              (need.buffers == 2 ? std::string("two") : std::to_string(need.buffers)) +
                              " buffers of that size (" + format_bytes(need.bytes) + ")";
  if (need.bytes > free_b)
    return what + ", but GPU " + std::to_string(o.device) + " has " + format_bytes(free_b) + " free of " +
           format_bytes(total_b) + "; give smaller sizes";
  if (const auto avail = host_mem_available(); avail && need.bytes > *avail)
    return what + ", but the host has " + format_bytes(*avail) + " available; give smaller sizes";
  return {};
}

// A --sizes list with a size under the smallest a selected family's cases take (its min_bytes): refused
// before any case runs, as each such case could only fail. A named sweep is each family's to trim.
std::string sizes_below_family_minimum(const options& o, const std::string& filter,
                                       const std::vector<std::string>& names) {
  if (o.sizes_spec == "pow4" || o.sizes_spec == "pow2" || o.sizes.empty()) return {};
  const std::uint64_t smallest = *std::min_element(o.sizes.begin(), o.sizes.end());
  for (const family_descriptor& f : families()) {
    if (smallest >= f.min_bytes) continue;
    std::vector<std::string> own;
    for (const std::string& n : names)
      if (n.rfind(f.name + "/", 0) == 0) own.push_back(n);
    if (count_filter_matches(filter, own) > 0)
      return "--sizes asks for " + format_bytes(smallest) + ", and a " + f.name + " case takes at least " +
             format_bytes(f.min_bytes) + "; give larger sizes, or a --benchmark_filter without " + f.name;
  }
  return {};
}
}  // namespace gpu_bench

namespace {

// What one run of gpu_bench carries from step to step.
struct run_state {
  std::vector<std::string> user_args;  // as given, for the rounds this process runs as processes of their own
  gpu_bench::options opts;
  std::vector<std::string> benchmark_args;  // Google Benchmark's argv: ours taken out, the run's added
  std::string filter;
  long repetitions = 1;
  int visible = 0;   // GPUs
  long matched = 0;  // cases the filter selects
  std::chrono::steady_clock::time_point started;
  double earlier_rounds_timed_s = 0;
  // Each visible GPU's CUDA index and bus id, where this process writes the context: its link error counters
  // are read again when the run ends.
  std::vector<std::pair<int, std::string>> context_gpus;
  // What this process's start spent before its first case, phase by phase (gpu_bench.start_s): on a node
  // a process's start grows with its GPU count, and these say which part grows.
  std::vector<std::pair<std::string, double>> start_phases;
  std::chrono::steady_clock::time_point phase_began;
  void end_phase(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    start_phases.emplace_back(name, std::chrono::duration<double>(now - phase_began).count());
    phase_began = now;
  }
};

// Where a step ends the run, the exit status.
using step_result = std::optional<int>;
constexpr step_result go_on = std::nullopt;

step_result take_our_flags(run_state& run, int& argc, char** argv) {
  try {
    run.opts = gpu_bench::parse_options(argc, argv);
  } catch (const gpu_bench::usage_error& e) {
    std::fprintf(stderr, "gpu_bench: %s\n", e.what());
    return 2;
  }
  gpu_bench::set_current_options(run.opts);
  if (!run.opts.timeline_path.empty()) gpu_bench::timeline::instance().enable(run.opts.timeline_path);
  return go_on;
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

// The filter and repetitions Google Benchmark will use; --preset=gate's filter in place of the user's.
step_result take_filter(run_state& run, int argc, char** argv) {
  run.benchmark_args.assign(argv, argv + argc);
  for (const auto& a : run.benchmark_args) {
    if (a.rfind("--benchmark_filter=", 0) == 0) run.filter = a.substr(19);
    if (a.rfind("--benchmark_repetitions=", 0) == 0) run.repetitions = std::max(1L, std::atol(a.c_str() + 24));
  }
  if (run.opts.preset == "gate") {
    if (!run.filter.empty()) {
      std::fprintf(stderr, "gpu_bench: --preset=gate selects its own cases; drop --benchmark_filter\n");
      return 2;
    }
    run.filter = gpu_bench::gate_filter();
    run.benchmark_args.push_back("--benchmark_filter=" + run.filter);
  }
  return go_on;
}

// Every file the run writes can be written, and the flags that need one have it.
step_result check_outputs(const run_state& run, const gpu_bench::atomic_output& out) {
  std::string why_not = out.problem();
  if (why_not.empty() && !run.opts.timeline_path.empty())
    why_not = gpu_bench::cannot_write(run.opts.timeline_path, "--timeline");
  if (why_not.empty() && run.opts.record_samples && !out.active())
    why_not = "--samples=on writes the samples into the --benchmark_out file; give one";
  if (!why_not.empty()) {
    std::fprintf(stderr, "gpu_bench: %s\n", why_not.c_str());
    return 2;
  }
  return go_on;
}

step_result initialize_benchmark(run_state& run) {
  // The case samples itself inside one Google Benchmark iteration per repetition.
  run.benchmark_args.push_back(gpu_bench::benchmark_min_time_arg(gpu_bench::benchmark_has_iteration_counts()));
  std::vector<char*> args;
  for (auto& a : run.benchmark_args) args.push_back(a.data());
  int nargs = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&nargs, args.data());
  if (nargs > 1) {
    std::fprintf(stderr, "gpu_bench: unknown flag '%s' (see --help)\n", args[1]);
    return 2;
  }
  return go_on;
}

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

// The GPU is usable, every visible GPU's facts and peaks are known, and the context holds them. A round run
// as a process of its own writes a file only its parent reads the medians of: it reads the facts of the GPUs
// its cases use alone, and makes no context, so that it starts as fast on eight GPUs as on one.
step_result describe_machine(run_state& run) {
  const gpu_bench::options& opts = run.opts;
  if (const int rc = check_gpu(opts.device)) return rc;
  run.end_phase("device");
  const bool child_round = opts.round > 0;
  const std::vector<int> used = gpu_bench::gpus_of_selected_cases(run.filter);
  // Every visible GPU's facts: each case samples the health of, and is held to the peaks of, the GPUs
  // it runs on. The context writes each GPU's as gpu.N.*, and the first selected GPU's also as gpu.*.
  std::vector<gpu_bench::device_facts> gpus;
  for (int d = 0; d < run.visible; ++d) {
    if (child_round && d != opts.device && std::find(used.begin(), used.end(), d) == used.end()) continue;
    const gpu_bench::device_facts& facts = gpus.emplace_back(gpu_bench::read_device_facts(d));
    gpu_bench::set_device_profile(d, gpu_bench::profile_from(facts));
    int others = facts.nvml.other_processes.value_or(0);
    // An earlier round runs in a child process of the run the user started, which holds the GPU too and is
    // no other user of it.
    const auto& pids = facts.nvml.other_pids;
    if (opts.round > 0 && std::find(pids.begin(), pids.end(), static_cast<unsigned>(getppid())) != pids.end()) --others;
    if ((opts.all_devices || d == opts.device) && others > 0)
      std::fprintf(stderr, "gpu_bench: warning: %d other process(es) are using GPU %d; figures may suffer\n", others,
                   d);
  }
  run.end_phase("facts");
  if (const std::string why = gpu_bench::sizes_that_do_not_fit(opts, run.filter, gpu_bench::registered_names());
      !why.empty()) {
    std::fprintf(stderr, "gpu_bench: %s\n", why.c_str());
    return 2;
  }
  if (!opts.gate && opts.round == 0)
    std::fprintf(stderr,
                 "gpu_bench: warning: --gate=off: no case is held by the gate; GPU times include any "
                 "host enqueue slower than the GPU\n");
  if (child_round) {
    (void)bind_to_gpu_node(opts);
    return go_on;
  }
  for (const gpu_bench::device_facts& f : gpus) run.context_gpus.emplace_back(f.device, f.pci_bus_id);
  const std::string device_flag = opts.all_devices ? "all" : std::to_string(opts.device);
  gpu_bench::context_list context = gpu_bench::collect_gpu_context(device_flag, gpus, opts.device);
  for (auto part : {gpu_bench::profile_context(gpu_bench::profile_of(opts.device)), gpu_bench::family_context()})
    context.insert(context.end(), part.begin(), part.end());
  context.emplace_back("gpu_bench.gate", opts.gate ? "on" : "off");
  context.emplace_back("gpu_bench.preset", opts.preset);
  context.emplace_back("gpu_bench.noise_target_pct", gpu_bench::fact_text(std::optional<double>(opts.noise_pct)));
  context.emplace_back("gpu_bench.max_time_per_case_s",
                       gpu_bench::fact_text(std::optional<double>(opts.max_time_per_case_s)));
  context.emplace_back("gpu_bench.min_samples", std::to_string(opts.min_samples));
  context.emplace_back("gpu_bench.rounds", std::to_string(opts.rounds));
  context.emplace_back("gpu_bench.link_rounds", std::to_string(gpu_bench::rounds_of_case(true)));
  context.emplace_back("gpu_bench.link_max_rounds",
                       std::to_string(std::max(opts.link_max_rounds, gpu_bench::rounds_of_case(true))));
  context.emplace_back("gpu_bench.target_detectable_pct",
                       gpu_bench::fact_text(std::optional<double>(opts.target_detectable_pct)));
  // How a case's figure combines its rounds (docs/json.md): from five rounds the mean of the fastest half.
  // Files before this key held their mean, then ones with "trimmed" a fifth trimmed at each end, then
  // "trimmed25" a quarter.
  context.emplace_back("gpu_bench.round_center", "fastest_half");
  {
    const double tick = gpu_bench::event_tick_s();
    context.emplace_back("gpu.event_tick_ns", tick > 0 ? gpu_bench::fact_text(std::optional<double>(tick * 1e9))
                                                       : std::string(gpu_bench::kUnavailable));
  }
  // The host's age: where copies over the host link move between runs, it places each run in the host's life
  // (docs/methodology.md, "The host link over minutes").
  const std::optional<double> uptime = gpu_bench::host_uptime_s();
  context.emplace_back("host.uptime_s",
                       uptime ? std::to_string(std::lround(*uptime)) : std::string(gpu_bench::kUnavailable));
  // What a host-clock sample's own clock reads cost (docs/methodology.md, "Host-driven cases and the CPU's state").
  context.emplace_back("host.clocksource", gpu_bench::host_clocksource());
  context.emplace_back("host.clock_read_ns",
                       gpu_bench::fact_text(std::optional<double>(gpu_bench::steady_clock_read_ns())));
  gpu_bench::context_list host_binding = bind_to_gpu_node(opts);
  run.end_phase("context");
  context.emplace_back("gpu_bench.start_s", gpu_bench::start_phases_text(run.start_phases));
  gpu_bench::check_context(context);
  for (const auto& [key, value] : context) benchmark::AddCustomContext(key, value);
  for (const auto& [key, value] : host_binding) benchmark::AddCustomContext(key, value);
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
  if (!opts.list_only && opts.rounds > 1 && opts.round == 0) {
    const auto link_cases = gpu_bench::link_round_cases(run.filter, gpu_bench::registered_names());
    const int link_extra = gpu_bench::rounds_of_case(true) - opts.rounds;
    if (gpu_bench::run_earlier_rounds(run.user_args, opts.rounds, link_cases, link_extra, gpu_bench::event_tick_s(),
                                      &progress, run.earlier_rounds_timed_s) != 0) {
      std::fprintf(stderr, "gpu_bench: interrupted; no output file written\n");
      return 130;
    }
  }
  gpu_bench::set_run_progress(&progress);
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

// The timeline, the run's totals and samples into the output file, and the file committed.
step_result write_outputs(const run_state& run, gpu_bench::atomic_output& out) {
  if (const std::string why = gpu_bench::timeline::instance().write(); !why.empty()) {
    std::fprintf(stderr, "gpu_bench: %s\n", why.c_str());
    return 1;
  }
  if (out.active() && !run.opts.list_only) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - run.started).count();
    std::vector<gpu_bench::run_samples> samples;
    for (const auto& r : gpu_bench::recorded_runs())
      samples.push_back({r.name, r.repetition, &r.times_s, &r.round_times_s, r.wall_s, r.sampling_wall_s,
                         r.calibration_wall_s, r.round_prior.rel_sd, r.round_prior.dof, &r.earlier_times_s});
    std::vector<std::pair<std::string, std::string>> totals = {
        {"gpu_bench.elapsed_s", gpu_bench::fact_text(std::optional<double>(elapsed))},
        {"gpu_bench.timed_s",
         gpu_bench::fact_text(std::optional<double>(gpu_bench::timed_seconds_total() + run.earlier_rounds_timed_s))},
        {"gpu_bench.calibration_timed_s",
         gpu_bench::fact_text(std::optional<double>(gpu_bench::calibration_timed_seconds_total()))}};
    if (!gpu_bench::earlier_round_processes().empty())
      totals.emplace_back("gpu_bench.round_processes",
                          gpu_bench::round_processes_text(gpu_bench::earlier_round_processes()));
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
