#include "harness/context/profile.hpp"

#include <cstdio>
#include <iterator>
#include <map>

#include "harness/context/gpu_context.hpp"

namespace gpu_bench {

std::optional<double> pcie_peak_gbps(unsigned gen, unsigned width) {
  // GT/s per lane and the line code's payload fraction, by generation: 8b/10b for gen 1-2, 128b/130b for
  // 3-5, 242B/256B FLITs for 6 and 7.
  struct lane {
    double gts, efficiency;
  };
  static constexpr lane kLanes[] = {{2.5, 0.8},
                                    {5.0, 0.8},
                                    {8.0, 128.0 / 130.0},
                                    {16.0, 128.0 / 130.0},
                                    {32.0, 128.0 / 130.0},
                                    {64.0, 242.0 / 256.0},
                                    {128.0, 242.0 / 256.0}};
  if (gen < 1 || gen > std::size(kLanes) || width == 0 || width > 32) return std::nullopt;
  const lane& l = kLanes[gen - 1];
  return l.gts * l.efficiency / 8.0 * width;
}

std::optional<double> memory_peak_gbps(unsigned memory_clock_mhz, unsigned bus_width_bits) {
  if (memory_clock_mhz == 0 || bus_width_bits == 0) return std::nullopt;
  return 2.0 * memory_clock_mhz * 1e6 * (bus_width_bits / 8.0) / 1e9;
}

device_profile profile_from(const device_facts& f) {
  device_profile p;
  p.pci_bus_id = f.pci_bus_id;
  p.pcie_gen_max = f.nvml.pcie_gen_max;
  p.pcie_width_max = f.nvml.pcie_width_max;
  if (f.nvml.c2c.value_or(false)) {
    // Grace Hopper's NVLink-C2C: 900 GB/s both ways together.
    p.host_link_gbps = 450.0;
    p.host_link_name = "NVLink-C2C";
  } else if (p.pcie_gen_max && p.pcie_width_max) {
    // The link as trained at its maximum for this device in this slot (NVML's answer is the lesser of the
    // two ends), so a Gen4 x8 slot holds a Gen5 x16 GPU to Gen4 x8's peak.
    p.host_link_gbps = pcie_peak_gbps(*p.pcie_gen_max, *p.pcie_width_max);
    p.host_link_name = "PCIe gen" + std::to_string(*p.pcie_gen_max) + " x" + std::to_string(*p.pcie_width_max);
  }
  if (f.nvml.memory_clock_max_mhz && f.nvml.memory_bus_width_bits)
    p.memory_gbps = memory_peak_gbps(*f.nvml.memory_clock_max_mhz, *f.nvml.memory_bus_width_bits);
  p.l2_bytes = f.l2_bytes;
  p.nvlink_gbps = f.nvml.nvlink.gbps;
  return p;
}

context_list profile_context(const device_profile& p) {
  const std::string nvlink = nvlink_rate_text(p.nvlink_gbps);
  return {{"profile.host_link", fact_text(p.host_link_name)},
          {"profile.host_link_gbps", fact_text(p.host_link_gbps)},
          {"profile.memory_gbps", fact_text(p.memory_gbps)},
          {"profile.l2_bytes", std::to_string(p.l2_bytes)},
          {"profile.nvlink_gbps", nvlink}};
}

namespace {
std::map<int, device_profile>& profiles() {
  static std::map<int, device_profile> p;
  return p;
}
}  // namespace

void set_device_profile(int device, device_profile p) {
  profiles()[device] = std::move(p);
}

const device_profile& profile_of(int device) {
  static const device_profile none;
  const auto it = profiles().find(device);
  return it == profiles().end() ? none : it->second;
}

std::string beyond_peak(double gbps, std::optional<double> peak_gbps, const std::string& peak_name) {
  constexpr double kSlack = 1.02;  // event timing and clock rounding
  if (!peak_gbps || gbps <= *peak_gbps * kSlack) return {};
  char buf[256];
  std::snprintf(buf, sizeof buf, "impossible: %.1f GB/s exceeds the %s of %.1f GB/s", gbps, peak_name.c_str(),
                *peak_gbps);
  return buf;
}

}  // namespace gpu_bench
