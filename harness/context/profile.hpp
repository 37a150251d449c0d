#pragma once
// The typed device profile: what each GPU's links and memory can carry at most, computed once per run from
// its facts and written into the context (profile.*). A measured rate above these peaks is a measurement
// error, not a fast machine. The pure functions are tested without a GPU.
#include <cstdint>
#include <optional>
#include <string>

#include "harness/context/context_format.hpp"

namespace gpu_bench {

struct device_facts;

// One direction of a PCIe link, in GB/s (1e9 B/s): lanes x transfer rate x line-code efficiency / 8.
// Generations 1 to 7; nullopt for anything else.
std::optional<double> pcie_peak_gbps(unsigned gen, unsigned width);

// Device memory, read plus write, in GB/s: double data rate x the memory clock x the bus width in bytes.
std::optional<double> memory_peak_gbps(unsigned memory_clock_mhz, unsigned bus_width_bits);

struct device_profile {
  std::string pci_bus_id;                // for NVML readings while cases run
  std::optional<unsigned> pcie_gen_max;  // the link's maximum as NVML reports it for this device and slot
  std::optional<unsigned> pcie_width_max;
  std::string host_link_name;            // "PCIe gen5 x16"; empty where unknown
  std::optional<double> host_link_gbps;  // one direction of the host link
  std::optional<double> memory_gbps;     // device memory, reads plus writes
  std::uint64_t l2_bytes = 0;
  std::optional<double> nvlink_gbps;  // one direction over every NVLink up (NVML's link speeds); 0 without NVLink
};

device_profile profile_from(const device_facts& f);

// profile.host_link, profile.host_link_gbps, profile.memory_gbps, profile.l2_bytes, profile.nvlink_gbps
context_list profile_context(const device_profile& p);

// The profiles main sets for every visible GPU once they are known; an empty one where none was set
// (listing, or no GPU). Cases read the profile of the GPU they run on, so --device=all follows each GPU.
void set_device_profile(int device, device_profile p);
const device_profile& profile_of(int device);

// "" when `gbps` is within `peak_gbps` (with slack for event timing and clock rounding), else the sentence
// a case fails with, naming the peak as `peak_name`. An unknown peak judges nothing.
std::string beyond_peak(double gbps, std::optional<double> peak_gbps, const std::string& peak_name);

}  // namespace gpu_bench
