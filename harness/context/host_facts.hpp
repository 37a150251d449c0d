#pragma once
// Facts about the host read from /proc and /sys. The parsers take text so tests can feed them.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "harness/context/context_format.hpp"

namespace gpu_bench {

std::optional<std::string> cpu_model_from_cpuinfo(std::string_view cpuinfo);
// "always [madvise] never" -> "madvise"
std::optional<std::string> selected_from_bracketed(std::string_view text);
// "0000:1B:00.0" (CUDA's form) -> "0000:1b:00.0" (sysfs form); NVML's 8-digit domain is shortened too.
std::string sysfs_pci_address(std::string_view bus_id);
// MemAvailable from /proc/meminfo text, in bytes.
std::optional<std::uint64_t> mem_available_from_meminfo(std::string_view meminfo);
// Seconds since the host started: the first field of /proc/uptime ("350735.47 2343889.90").
std::optional<double> uptime_from_proc(std::string_view text);

std::optional<std::string> read_text_file(const std::string& path);

std::string host_cpu();
std::string host_kernel();
std::string host_thp();
std::string gpu_numa_node(std::string_view pci_bus_id);
// The CPUs the kernel counts as local to the GPU (sysfs local_cpulist, e.g. "0-31,64-95").
std::string gpu_local_cpus(std::string_view pci_bus_id);
std::optional<std::uint64_t> host_mem_available();
std::optional<double> host_uptime_s();
// The kernel's clock source (clocksource0's current_clocksource, e.g. "tsc" or "kvm-clock"): where it cannot
// be read through the vDSO, every host-clock read is a system call.
std::string host_clocksource();
// What one read of the steady clock costs the calling thread now, in nanoseconds: the median over `batches`
// batches of `reads` back-to-back reads. A host-clock sample carries one such read.
double steady_clock_read_ns(int batches = 11, int reads = 1000);

}  // namespace gpu_bench
