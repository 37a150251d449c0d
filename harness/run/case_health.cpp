#include "harness/run/case_health.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

#include "harness/context/profile.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/options.hpp"

namespace gpu_bench {

void report_health(benchmark::State& st, const std::string& name, bool host_link, const std::vector<int>& gpus,
                   const std::vector<health_summary>& hs) {
  if (st.error_occurred()) return;
  static std::set<std::string> warned;
  double clock_sum = 0;
  int sampled = 0;
  unsigned long long harmful = 0;
  unsigned held_clock = 0;
  std::string held_on;
  for (std::size_t i = 0; i < hs.size(); ++i) {
    const health_summary& h = hs[i];
    if (h.samples == 0) continue;
    clock_sum += h.sm_clock_mean_mhz;
    ++sampled;
    const device_profile& p = profile_of(gpus[i]);
    if (host_link && h.pcie_gen_min && h.pcie_width_min && p.pcie_gen_max && p.pcie_width_max &&
        (*h.pcie_gen_min < *p.pcie_gen_max || *h.pcie_width_min < *p.pcie_width_max) &&
        warned.insert("pcie " + p.pci_bus_id).second)
      std::fprintf(stderr,
                   "gpu_bench: warning: the PCIe link of GPU %d ran at gen%u x%u during %s, below its maximum "
                   "gen%u x%u\n",
                   gpus[i], *h.pcie_gen_min, *h.pcie_width_min, name.c_str(), *p.pcie_gen_max, *p.pcie_width_max);
    if (h.harmful_reasons == 0) continue;
    held_clock = held_on.empty() ? h.sm_clock_min_mhz : std::min(held_clock, h.sm_clock_min_mhz);
    held_on += (held_on.empty() ? "" : ",") + std::to_string(gpus[i]);
    harmful |= h.harmful_reasons;
  }
  if (sampled == 0) return;
  st.counters["sm_clock_mhz"] = clock_sum / sampled;
  st.counters["throttle_reasons"] = static_cast<double>(harmful);
  if (harmful == 0) return;
  const std::string where = gpus.size() > 1 ? " on GPU " + held_on : "";
  const std::string why = "clocks held down" + where + " (" + describe_clock_reasons(harmful) + "; SM clock down to " +
                          std::to_string(held_clock) + " MHz)";
  const std::string& policy = current_options().on_throttle;
  if (policy == "fail") return fail_case(st, "throttled: " + why);
  if (policy == "skip") return st.SkipWithError(("skipped, throttled: " + why).c_str());
  if (warned.insert(name).second)
    std::fprintf(stderr, "gpu_bench: warning: %s ran with %s\n", name.c_str(), why.c_str());
}

void report_edges(benchmark::State& st, const case_edges& edges) {
  if (st.error_occurred()) return;
  for (const auto& [name, value] : edge_counters(edges)) st.counters[name] = value;
}

std::vector<std::string> bus_ids(const std::vector<int>& gpus) {
  std::vector<std::string> ids;
  for (int g : gpus) ids.push_back(profile_of(g).pci_bus_id);
  return ids;
}

}  // namespace gpu_bench
