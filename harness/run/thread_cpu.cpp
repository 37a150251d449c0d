#include "harness/run/thread_cpu.hpp"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
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
// Before a sample: about 6 us, enough to see a state a tenth slower on the CPU the thread is on.
constexpr int kCheckBatches = 3, kCheckReads = 64;

std::vector<int> g_auto_candidates;  // empty unless --cpu=auto

struct fast_policy {
  bool on = false;
  std::vector<int> candidates;  // the CPUs it may move the thread to
  std::vector<int> allowed;     // the thread's CPUs when the policy was set, for the other cases
  bool case_holds = false;      // the running case holds the fast state
  int cpu = -1;                 // the CPU the last search chose: where the held thread runs
  bool released = false;        // release_fast_cpu let the thread run anywhere until the next hold
  double fastest_ns = 0;        // the fastest clock read any search found
  std::chrono::steady_clock::time_point retry_after{};
  fast_cpu_counts counts;
};
fast_policy g_fast;
const auto kSlowCpuRetry =
    std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(kSlowCpuRetryS));

// Lets the calling thread run on `cpus` alone; false where the kernel refuses.
bool run_on(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

// Moves the thread to the fastest candidate, and keeps the fastest read seen.
void search_fast_cpu() {
  const cpu_choice c = pin_to_fastest_cpu(g_fast.candidates);
  if (c.cpu < 0) return;
  g_fast.cpu = c.cpu;
  if (g_fast.fastest_ns <= 0 || c.clock_read_ns < g_fast.fastest_ns) g_fast.fastest_ns = c.clock_read_ns;
  if (c.clock_read_ns > g_fast.fastest_ns * kSlowCpuRatio)
    g_fast.retry_after = std::chrono::steady_clock::now() + kSlowCpuRetry;
}

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
  if (!run_on({cpu})) return "cannot run on CPU " + std::to_string(cpu) + ": " + std::strerror(errno);
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
  g_fast = fast_policy{};
  if (cpu_option == kCpuOff) return "off";
  if (cpu_option == kCpuFast) {
    if (candidates.empty()) return "off (the kernel does not say which CPUs this process may use)";
    g_fast.on = true;
    g_fast.candidates = candidates;
    g_fast.allowed = allowed_cpus();
    return "fast state of " + std::to_string(candidates.size()) + " held";
  }
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

void place_thread_for_case(bool holds_fast_state) {
  if (!g_auto_candidates.empty()) (void)pin_to_fastest_cpu(g_auto_candidates);
  if (!g_fast.on) return;
  // Only a case that held the state left the thread on one CPU.
  if (!holds_fast_state && g_fast.case_holds) (void)run_on(g_fast.allowed);
  g_fast.case_holds = holds_fast_state;
  g_fast.released = false;
  if (holds_fast_state) search_fast_cpu();
}

void release_fast_cpu() {
  if (!g_fast.on || !g_fast.case_holds || g_fast.released) return;
  g_fast.released = run_on(g_fast.allowed);
}

void hold_fast_cpu() {
  if (!g_fast.on || !g_fast.case_holds) return;
  if (g_fast.released) {
    g_fast.released = false;
    // Back to the CPU the search chose, where the check below sees whether it is still fast.
    if (g_fast.cpu < 0 || !run_on({g_fast.cpu})) {
      ++g_fast.counts.checks;
      ++g_fast.counts.searches;
      search_fast_cpu();
      return;
    }
  }
  ++g_fast.counts.checks;
  if (g_fast.fastest_ns > 0 && steady_clock_read_ns(kCheckBatches, kCheckReads) <= g_fast.fastest_ns * kSlowCpuRatio)
    return;
  if (std::chrono::steady_clock::now() < g_fast.retry_after) return;
  ++g_fast.counts.searches;
  search_fast_cpu();
}

fast_cpu_counts fast_cpu_activity() {
  return g_fast.counts;
}

std::string fast_cpu_text() {
  if (!g_fast.on) return {};
  return "searched at " + std::to_string(g_fast.counts.searches) + " of " + std::to_string(g_fast.counts.checks) +
         " checks";
}

}  // namespace gpu_bench
