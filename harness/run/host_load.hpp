#pragma once
// What else the host did while a round ran. The pairs of default runs move as a whole, every host-driven
// case together (docs/notes/variance_sources.md), so something holds for a run's minutes. Each round records
// the share of all CPUs' time that other processes used, the share the hypervisor stole from this virtual
// machine, and how often the round's own threads were preempted. gpu_bench.round_host carries them, and
// `gpu-bench-aa report` sets them beside each run's figures.
#include <cstdint>
#include <string>
#include <vector>

struct rusage;

namespace gpu_bench {

// The host's CPU time since boot, in clock ticks summed over every CPU (the first line of /proc/stat).
struct cpu_times {
  std::uint64_t busy = 0;   // user, nice, system, irq and softirq (a guest's time is inside user)
  std::uint64_t idle = 0;   // idle and iowait
  std::uint64_t steal = 0;  // taken by the hypervisor for other guests
  bool known = false;
};

// The first line of a /proc/stat text; not known where it is not one.
cpu_times parse_cpu_times(const std::string& proc_stat);
// The host's now; not known where /proc/stat cannot be read.
cpu_times read_cpu_times();

// A round's host, between two cpu_times: `others_pct` of all CPUs' time went to other processes (busy time
// less the round's own CPU time), `steal_pct` to the hypervisor; `preemptions` counts the round's
// involuntary context switches. Negative where it is not known.
struct host_load {
  double others_pct = -1, steal_pct = -1;
  long preemptions = -1;
};
host_load host_load_between(const cpu_times& before, const cpu_times& after, double own_cpu_s, long preemptions,
                            long ticks_per_s);
// The same for a process's resource usage (wait4's for a child, or the difference of two getrusage calls).
host_load host_load_of(const cpu_times& before, const cpu_times& after, const rusage& own);

// The last round runs in the process the user started: its load from this call to last_round_host_load.
void mark_last_round_start();
host_load last_round_host_load();

// "label=others/steal/preemptions ..." (percent with two decimals, a count; "-" where not known), the run's
// gpu_bench.round_host.
std::string round_host_text(const std::vector<std::pair<std::string, host_load>>& rounds);

}  // namespace gpu_bench
