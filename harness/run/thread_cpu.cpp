#include "harness/run/thread_cpu.hpp"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "harness/context/host_facts.hpp"
#include "harness/memory/numa.hpp"
#include "harness/run/options.hpp"

namespace gpu_bench {
namespace {

// Reads enough to tell a CPU's state apart (the states differ by 10 ns a read and more) in about 30 us a CPU.
constexpr int kProbeBatches = 5, kProbeReads = 200;

std::vector<int> g_auto_candidates;  // empty unless --cpu=auto

}  // namespace

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

std::vector<int> cpus_on_node(const std::vector<int>& allowed, int node) {
  if (node < 0) return allowed;
  std::ifstream in("/sys/devices/system/node/node" + std::to_string(node) + "/cpulist");
  std::string text;
  if (!std::getline(in, text)) return allowed;
  const auto on_node = parse_node_list(text);
  if (!on_node) return allowed;
  std::vector<int> both;
  for (int c : allowed)
    if (std::find(on_node->begin(), on_node->end(), c) != on_node->end()) both.push_back(c);
  return both.empty() ? allowed : both;
}

std::string pin_thread_to_cpu(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return "CPU " + std::to_string(cpu) + " is out of range";
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    return "cannot run on CPU " + std::to_string(cpu) + ": " + std::strerror(errno);
  return {};
}

cpu_choice pin_to_fastest_cpu(const std::vector<int>& candidates) {
  cpu_choice best;
  for (int c : candidates) {
    if (!pin_thread_to_cpu(c).empty()) continue;
    const double ns = steady_clock_read_ns(kProbeBatches, kProbeReads);
    if (best.cpu < 0 || ns < best.clock_read_ns) best = {c, ns};
  }
  if (best.cpu >= 0) (void)pin_thread_to_cpu(best.cpu);
  return best;
}

std::string set_thread_cpu_policy(int cpu_option, const std::vector<int>& candidates) {
  g_auto_candidates.clear();
  if (cpu_option == kCpuOff) return "off";
  if (cpu_option == kCpuAuto) {
    if (candidates.empty())
      throw std::runtime_error("--cpu=auto: the kernel does not say which CPUs this process may use");
    g_auto_candidates = candidates;
    return "fastest of " + std::to_string(candidates.size()) + " at each case";
  }
  const auto allowed = allowed_cpus();
  if (std::find(allowed.begin(), allowed.end(), cpu_option) == allowed.end())
    throw std::runtime_error("--cpu=" + std::to_string(cpu_option) + ": this process may not run on CPU " +
                             std::to_string(cpu_option) + " (it may use " + std::to_string(allowed.size()) + " CPUs)");
  if (const std::string why = pin_thread_to_cpu(cpu_option); !why.empty()) throw std::runtime_error("--cpu: " + why);
  return std::to_string(cpu_option);
}

void place_thread_for_case() {
  if (!g_auto_candidates.empty()) (void)pin_to_fastest_cpu(g_auto_candidates);
}

}  // namespace gpu_bench
