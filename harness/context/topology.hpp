#pragma once
// How the context spells every visible GPU and every ordered pair of them: gpu.count, gpu.<i>.* and
// topology.<i>-<j>.*. Pure functions over facts read elsewhere (CUDA, NVML, sysfs), so they are tested
// without a GPU; a fact that could not be read arrives empty and is written `unavailable`.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/context/context_format.hpp"

namespace gpu_bench {

// What connects two GPUs, as NVML reads it: whether they share an active NVLink (directly or through an
// NVSwitch), how many NVLinks join them and their peak per direction (nvml.hpp's pair_nvlinks), and the
// level of their closest common PCIe ancestor (NVML's nvmlGpuTopologyLevel_t value).
struct gpu_link {
  std::optional<bool> nvlink;
  std::optional<int> pcie_level;
  std::optional<unsigned> nvlinks;
  std::optional<double> nvlink_gbps;
};

// NVML's topology level -> `board` (0, one board), `pcie_switch` (10), `pcie_switches` (20, several
// switches but no host bridge), `pcie_host_bridge` (30), `numa_node` (40, host bridges of one NUMA node),
// `system` (50, across NUMA nodes); `unavailable` for anything else.
std::string pcie_level_name(std::optional<int> nvml_level);
// `nvlink` where NVML says the two share one; otherwise the PCIe level; `unavailable` where either
// question went unanswered (without an answer on NVLink, a PCIe level would be a guess at the path).
std::string link_name(const gpu_link& link);
// The class a pair's copies are alike within: `nvlink18` (the link and how many NVLinks join the pair, or
// `nvlink` where the count is unread), a PCIe level, or `unavailable`. Pairs of one class run one size sweep
// between them in the default matrix, on the first pair of the class.
std::string link_class(const gpu_link& link);

struct gpu_identity {
  std::string name, uuid, pci_bus_id, numa_node;
};

struct gpu_pair {
  int src = 0, dst = 0;
  std::optional<bool> peer_access;     // cudaDeviceCanAccessPeer(src, dst)
  std::optional<int> perf_rank;        // cudaDevP2PAttrPerformanceRank
  std::optional<bool> native_atomics;  // cudaDevP2PAttrNativeAtomicSupported
  gpu_link link;
};

// "gpu.1.name", "topology.0-1.link"
std::string gpu_key(int gpu, std::string_view field);
std::string pair_key(int src, int dst, std::string_view field);

// One GPU's facts, spelled as for the selected GPU (gpu.pcie_gen_max, profile.host_link), keyed under its
// index instead (gpu.<i>.pcie_gen_max, gpu.<i>.profile.host_link), so that a run over several GPUs says each
// one's link, peaks and clocks. Keys outside gpu.* and profile.* are left out.
context_list indexed_gpu_facts(int gpu, const context_list& facts);

// gpu.count, then gpu.<i>.{name,uuid,pci_bus_id,numa_node} for each GPU, then
// topology.<i>-<j>.{peer_access,perf_rank,native_atomics,link,nvlinks,nvlink_gbps} for each pair (nvlinks `0`
// and nvlink_gbps `none` where no NVLink joins the two).
context_list format_topology(const std::vector<gpu_identity>& gpus, const std::vector<gpu_pair>& pairs);

}  // namespace gpu_bench
