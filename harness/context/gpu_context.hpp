#pragma once
// The machine facts written into every JSON file's context, read from the devices every run. Facts stay
// typed (device_facts) until they are written; the device profile (peaks) is computed from them, never
// parsed back from their text.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/context/context_format.hpp"
#include "harness/context/nvml.hpp"
#include "harness/context/topology.hpp"

namespace gpu_bench {

// One GPU as CUDA and NVML describe it.
struct device_facts {
  int device = 0;
  std::string name, uuid, pci_bus_id;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::uint64_t memory_bytes = 0;
  std::uint64_t l2_bytes = 0;
  int copy_engines = 0;
  bool ecc_enabled = false;  // CUDA's view, used where NVML cannot say
  nvml_facts nvml;
};

device_facts read_device_facts(int device);

// The GPU in use as the context spells it: gpu.name, gpu.uuid, ..., gpu.other_processes.
context_list device_context(const device_facts& f);

// One GPU's facts under its index, gpu.<N>.*: what device_context and its profile say, the CPUs local to
// it, and its link error counters as the facts were read (gpu.<N>.errors.*.start). Its identity (name, uuid,
// pci_bus_id, numa_node) is written with the topology and not repeated.
context_list per_gpu_context(const device_facts& f);

// What joins each ordered pair of the visible GPUs (links[i][j]; the diagonal empty): CUDA's bus ids, NVML's
// NVLinks and PCIe levels, read once per process without making a context, as the Peer families register
// their cases by it. Every pair reads unavailable where NVML cannot be asked, or under --list_gpus (no
// GPU is asked).
const std::vector<std::vector<gpu_link>>& visible_gpu_links();
// Each visible GPU's own NVLinks, the first half of visible_gpu_links (its pairs are the second): called
// apart only to time the two.
void read_visible_gpu_nvlinks();

// The first pair (i < j, in order) of each link class among `links` (link_class): the pairs whose copies stand
// for their class's in the default matrix. One pair, (0, 1), where every pair is of one class or unread.
std::vector<std::pair<int, int>> pairs_per_link_class(const std::vector<std::vector<gpu_link>>& links);

// Everything else the context holds: the run (gpu_bench.*, with `device_flag` as gpu_bench.device), the
// GPU in use (`gpus[selected]`) as gpu.*, the driver, runtime and host, then gpu.count, every visible GPU's
// identity, every ordered pair's topology and every visible GPU's own facts (`gpus`, one per GPU in order).
context_list collect_gpu_context(const std::string& device_flag, const std::vector<device_facts>& gpus, int selected);

}  // namespace gpu_bench
