#include "harness/run/run_context.hpp"

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "harness/context/context_format.hpp"
#include "harness/context/gpu_context.hpp"
#include "harness/context/host_facts.hpp"
#include "harness/context/profile.hpp"
#include "harness/measure/streams.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/memory/numa.hpp"
#include "harness/run/preflight.hpp"
#include "harness/run/registry.hpp"
#include "harness/run/settings_context.hpp"
#include "harness/run/thread_cpu.hpp"

namespace gpu_bench {
namespace {

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
  for (auto part : {gpu_bench::profile_context(gpu_bench::profile_of(opts.device)), gpu_bench::family_context(),
                    gpu_bench::run_settings_context(opts, run.filter)})
    context.insert(context.end(), part.begin(), part.end());
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

}  // namespace gpu_bench
