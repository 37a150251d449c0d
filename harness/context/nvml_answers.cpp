// What NVML's answers mean, apart from the driver: a GPU's NVLinks and each pair's link, link error counts,
// and the clock event reasons that matter. nvml.cpp asks the driver; these are tested on made-up answers.
#include <algorithm>

#include "harness/context/host_facts.hpp"
#include "harness/context/nvml.hpp"

namespace gpu_bench {

nvlink_facts read_nvlinks(const nvlink_source& nvml) {
  nvlink_facts f;
  unsigned count = nvml.max_links();
  if (const auto present = nvml.field(kNvmlFieldNvlinkLinkCount, 0); present && *present < count)
    count = static_cast<unsigned>(*present);
  const auto common = nvml.field(kNvmlFieldNvlinkSpeedCommon, 0);
  const auto gbps_of = [](unsigned long long mbps) { return static_cast<double>(mbps) / 1000.0; };
  bool unanswered = false;
  for (unsigned link = 0; link < count; ++link) {
    const nvlink_source::state st = nvml.link_state(link);
    if (st == nvlink_source::state::unanswered) unanswered = true;
    if (st != nvlink_source::state::up) continue;
    nvlink_link l;
    l.index = link;
    if (const auto own = nvml.field(kNvmlFieldNvlinkSpeed, link); own && *own > 0)
      l.gbps = gbps_of(*own);
    else if (common && *common > 0)
      l.gbps = gbps_of(*common);
    l.end = nvml.remote_end(link).value_or(nvlink_end::unknown);
    if (const auto bus = nvml.remote_bus(link)) l.remote_bus = sysfs_pci_address(*bus);
    f.links.push_back(l);
  }
  if (unanswered) return nvlink_facts{};  // a link NVML could not say the state of may be up
  f.up = static_cast<unsigned>(f.links.size());
  if (f.links.empty()) {
    f.gbps = 0.0;
    return f;
  }
  double sum = 0;
  bool every_rate = true;
  for (const nvlink_link& l : f.links) {
    every_rate = every_rate && l.gbps.has_value();
    sum += l.gbps.value_or(0.0);
  }
  if (every_rate) f.gbps = sum;
  const bool alike = every_rate && std::all_of(f.links.begin(), f.links.end(),
                                               [&](const nvlink_link& l) { return *l.gbps == *f.links.front().gbps; });
  if (alike)
    f.link_gbps = f.links.front().gbps;
  else if (common && *common > 0)
    f.link_gbps = gbps_of(*common);
  return f;
}

nvlink_pair pair_nvlinks(const nvlink_facts& a, const std::string& a_bus, const nvlink_facts& b,
                         const std::string& b_bus, std::optional<bool> p2p_nvlink) {
  if (!a.up || !b.up) return {};
  const std::string to_b = sysfs_pci_address(b_bus);
  const std::string to_a = sysfs_pci_address(a_bus);
  unsigned direct = 0;
  double direct_gbps = 0;
  bool rates = true;
  // Links of `g` that end at a switch, and whether any ends where NVML cannot say (it might be the other GPU).
  const auto switch_links = [](const nvlink_facts& g, const std::string& other, unsigned& count, double& gbps,
                               bool& known_rates) {
    bool unknown = false;
    for (const nvlink_link& l : g.links) {
      if (l.end == nvlink_end::nvswitch) {
        ++count;
        gbps += l.gbps.value_or(0.0);
        known_rates = known_rates && l.gbps.has_value();
      } else if (l.end == nvlink_end::unknown && l.remote_bus != other) {
        unknown = true;
      }
    }
    return unknown;
  };
  for (const nvlink_link& l : a.links)
    if (l.end != nvlink_end::nvswitch && l.remote_bus == to_b) {
      ++direct;
      direct_gbps += l.gbps.value_or(0.0);
      rates = rates && l.gbps.has_value();
    }
  unsigned sw_a = 0, sw_b = 0;
  double sw_a_gbps = 0, sw_b_gbps = 0;
  bool sw_a_rates = true, sw_b_rates = true;
  const bool unknown_a = switch_links(a, to_b, sw_a, sw_a_gbps, sw_a_rates);
  const bool unknown_b = switch_links(b, to_a, sw_b, sw_b_gbps, sw_b_rates);
  if (unknown_a || unknown_b) return {};
  nvlink_pair p;
  unsigned switched = 0;
  double switched_gbps = 0;
  if (sw_a > 0 && sw_b > 0) {
    if (!p2p_nvlink) return {};
    if (*p2p_nvlink) {
      switched = std::min(sw_a, sw_b);
      switched_gbps = std::min(sw_a_gbps, sw_b_gbps);
      rates = rates && sw_a_rates && sw_b_rates;
    }
  }
  p.links = direct + switched;
  if (rates) p.gbps = direct_gbps + switched_gbps;
  return p;
}

namespace {
// The NVLink CRC counters' names: the link corrects these errors itself (link_errors_rise).
constexpr const char* kCrcFlit = "nvlink_crc_flit";
constexpr const char* kCrcData = "nvlink_crc_data";
}  // namespace

link_error_counts read_link_errors(const link_error_source& nvml, const nvlink_facts& links) {
  link_error_counts out;
  if (const auto replays = nvml.pcie_replay()) out.emplace_back("pcie_replay", *replays);
  // Links whose state went unanswered may be up: no sum over the others would be the GPU's.
  if (!links.up || links.links.empty()) return out;
  static const std::pair<nvlink_error, const char*> kCounters[] = {{nvlink_error::crc_flit, kCrcFlit},
                                                                   {nvlink_error::crc_data, kCrcData},
                                                                   {nvlink_error::replay, "nvlink_replay"},
                                                                   {nvlink_error::recovery, "nvlink_recovery"}};
  for (const auto& [which, name] : kCounters) {
    if (const auto total = nvml.nvlink_total(which)) {
      out.emplace_back(name, *total);
      continue;
    }
    unsigned long long sum = 0;
    bool every_link = true;
    for (const nvlink_link& l : links.links) {
      const auto v = nvml.nvlink_errors(l.index, which);
      if (!v) {
        every_link = false;
        break;
      }
      sum += *v;
    }
    if (every_link) out.emplace_back(name, sum);
  }
  return out;
}

context_list link_error_context(int gpu, const link_error_counts& counts, const std::string& at) {
  context_list c;
  for (const auto& [name, value] : counts)
    c.emplace_back("gpu." + std::to_string(gpu) + ".errors." + name + "." + at, std::to_string(value));
  return c;
}

unsigned long long link_errors_rise(const link_error_counts& start, const link_error_counts& end, double seconds) {
  unsigned long long rise = 0;
  for (const auto& [name, before] : start)
    for (const auto& [later_name, after] : end) {
      if (later_name != name || after <= before) continue;
      const bool crc = name == kCrcFlit || name == kCrcData;
      if (crc && seconds > 0 && static_cast<double>(after - before) / seconds < kNvlinkCrcFaultPerS) continue;
      rise += after - before;
    }
  return rise;
}

namespace {
// NVML's clock event reason bits that mean power or heat held the clocks down.
constexpr struct {
  unsigned long long bit;
  const char* name;
} kHarmful[] = {{0x4, "sw_power_cap"},
                {0x8, "hw_slowdown"},
                {0x20, "sw_thermal_slowdown"},
                {0x40, "hw_thermal_slowdown"},
                {0x80, "hw_power_brake_slowdown"}};
}  // namespace

unsigned long long harmful_clock_reasons(unsigned long long reasons) {
  unsigned long long h = 0;
  for (const auto& r : kHarmful) h |= reasons & r.bit;
  return h;
}

std::string describe_clock_reasons(unsigned long long reasons) {
  std::string s;
  for (const auto& r : kHarmful)
    if (reasons & r.bit) s += (s.empty() ? "" : ",") + std::string(r.name);
  return s;
}

}  // namespace gpu_bench
