#include "harness/context/gpu_context.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "harness/context/host_facts.hpp"
#include "harness/context/nvml.hpp"
#include "harness/context/profile.hpp"
#include "harness/context/topology.hpp"
#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"
#include "harness/run/options.hpp"

namespace gpu_bench {

extern const char* const git_revision;

namespace {
std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::string bus_id_of(int device) {
  char bus[32] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  return bus;
}

std::string uuid_of(const cudaDeviceProp& prop) {
  std::array<unsigned char, 16> uuid{};
  std::memcpy(uuid.data(), prop.uuid.bytes, 16);
  return format_gpu_uuid(uuid);
}

// A pair attribute CUDA may decline to answer: nullopt then, never a guess.
std::optional<int> p2p_attribute(cudaDeviceP2PAttr attr, int src, int dst) {
  int v = 0;
  if (cudaDeviceGetP2PAttribute(&v, attr, src, dst) != cudaSuccess) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  return v;
}

// gpu.count, each visible GPU's identity and each ordered pair's topology.
context_list collect_topology(const std::vector<device_facts>& facts) {
  const int count = static_cast<int>(facts.size());
  std::vector<gpu_identity> gpus;
  for (const device_facts& f : facts) gpus.push_back({f.name, f.uuid, f.pci_bus_id, gpu_numa_node(f.pci_bus_id)});
  const auto& links = visible_gpu_links();
  std::vector<gpu_pair> pairs;
  for (int i = 0; i < count; ++i)
    for (int j = 0; j < count; ++j) {
      if (i == j) continue;
      gpu_pair p;
      p.src = i;
      p.dst = j;
      int can = 0;
      if (cudaDeviceCanAccessPeer(&can, i, j) == cudaSuccess)
        p.peer_access = can != 0;
      else
        (void)cudaGetLastError();
      p.perf_rank = p2p_attribute(cudaDevP2PAttrPerformanceRank, i, j);
      if (const auto a = p2p_attribute(cudaDevP2PAttrNativeAtomicSupported, i, j)) p.native_atomics = *a != 0;
      if (static_cast<std::size_t>(count) == links.size())
        p.link = links[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
      pairs.push_back(p);
    }
  return format_topology(gpus, pairs);
}
}  // namespace

void read_visible_gpu_nvlinks() {
  if (current_options().list_gpus > 0) return;
  for (int d = 0; d < visible_gpu_count(); ++d) (void)read_nvml_nvlinks(bus_id_of(d));
}

const std::vector<std::vector<gpu_link>>& visible_gpu_links() {
  static const std::vector<std::vector<gpu_link>> links = [] {
    const int count = visible_gpu_count();
    if (current_options().list_gpus > 0)
      return std::vector<std::vector<gpu_link>>(static_cast<std::size_t>(count),
                                                std::vector<gpu_link>(static_cast<std::size_t>(count)));
    std::vector<std::string> buses;
    std::vector<nvlink_facts> nvlinks;
    for (int d = 0; d < count; ++d) {
      buses.push_back(bus_id_of(d));
      nvlinks.push_back(read_nvml_nvlinks(buses.back()));
    }
    return read_nvml_links(buses, nvlinks);
  }();
  return links;
}

std::vector<std::pair<int, int>> pairs_per_link_class(const std::vector<std::vector<gpu_link>>& links) {
  std::vector<std::pair<int, int>> first;
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < links.size(); ++i)
    for (std::size_t j = i + 1; j < links.size(); ++j) {
      const std::string c = link_class(links[i][j]);
      if (std::find(seen.begin(), seen.end(), c) != seen.end()) continue;
      seen.push_back(c);
      first.emplace_back(static_cast<int>(i), static_cast<int>(j));
    }
  return first;
}

device_facts read_device_facts(int device) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  device_facts f;
  f.device = device;
  f.name = prop.name;
  f.uuid = uuid_of(prop);
  f.pci_bus_id = bus_id_of(device);
  f.cc_major = prop.major;
  f.cc_minor = prop.minor;
  f.sm_count = prop.multiProcessorCount;
  f.memory_bytes = prop.totalGlobalMem;
  f.l2_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
  f.copy_engines = prop.asyncEngineCount;
  f.ecc_enabled = prop.ECCEnabled != 0;
  f.nvml = read_nvml_facts(f.pci_bus_id);
  return f;
}

context_list device_context(const device_facts& f) {
  const nvml_facts& nv = f.nvml;
  const bool ecc = nv.ecc.value_or(f.ecc_enabled);
  return {
      {"gpu.name", f.name},
      {"gpu.uuid", f.uuid},
      {"gpu.pci_bus_id", f.pci_bus_id},
      {"gpu.nvml_index", fact_text(nv.index)},
      {"gpu.cc", std::to_string(f.cc_major) + "." + std::to_string(f.cc_minor)},
      {"gpu.sm_count", std::to_string(f.sm_count)},
      {"gpu.memory_bytes", std::to_string(f.memory_bytes)},
      {"gpu.l2_bytes", std::to_string(f.l2_bytes)},
      {"gpu.copy_engines", std::to_string(f.copy_engines)},
      {"gpu.pcie_gen", fact_text(nv.pcie_gen)},
      {"gpu.pcie_gen_max", fact_text(nv.pcie_gen_max)},
      {"gpu.pcie_width", fact_text(nv.pcie_width)},
      {"gpu.pcie_width_max", fact_text(nv.pcie_width_max)},
      {"gpu.clock_sm_mhz", fact_text(nv.clock_sm_max_mhz)},
      {"gpu.ecc", ecc ? "on" : "off"},
      {"gpu.memory_clock_mhz", fact_text(nv.memory_clock_max_mhz)},
      {"gpu.memory_bus_width_bits", fact_text(nv.memory_bus_width_bits)},
      {"gpu.other_processes", fact_text(nv.other_processes)},
      {"gpu.nvlinks", fact_text(nv.nvlink.up)},
      {"gpu.nvlink_link_gbps", nv.nvlink.up && *nv.nvlink.up == 0 ? "none" : fact_text(nv.nvlink.link_gbps)},
      {"gpu.power_limit_w", fact_text(nv.power_limit_w)},
      {"gpu.temp_slowdown_c", fact_text(nv.temp_slowdown_c)},
      {"gpu.temp_shutdown_c", fact_text(nv.temp_shutdown_c)},
  };
}

context_list per_gpu_context(const device_facts& f) {
  context_list own = device_context(f);
  own.erase(std::remove_if(own.begin(), own.end(),
                           [](const auto& kv) {
                             return kv.first == "gpu.name" || kv.first == "gpu.uuid" || kv.first == "gpu.pci_bus_id";
                           }),
            own.end());
  const context_list profile = profile_context(profile_from(f));
  own.insert(own.end(), profile.begin(), profile.end());
  own.emplace_back("gpu.local_cpus", gpu_local_cpus(f.pci_bus_id));
  context_list indexed = indexed_gpu_facts(f.device, own);
  // The run's end adds the same counters read after its last case (write_outputs).
  const context_list errors = link_error_context(f.device, f.nvml.link_errors, "start");
  indexed.insert(indexed.end(), errors.begin(), errors.end());
  return indexed;
}

context_list collect_gpu_context(const std::string& device_flag, const std::vector<device_facts>& gpus, int selected) {
  const device_facts& chosen = gpus.at(static_cast<std::size_t>(selected));
  int driver = 0, runtime = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  const std::string& bus = chosen.pci_bus_id;

  context_list c = {
      {"gpu_bench.schema", kSchemaVersion},
      {"gpu_bench.version", GPU_BENCH_VERSION},
      {"gpu_bench.git", git_revision},
      {"gpu_bench.device", device_flag},
  };
  const context_list gpu = device_context(chosen);
  c.insert(c.end(), gpu.begin(), gpu.end());
  const context_list rest = {
      {"driver.version", chosen.nvml.driver_version.value_or(kUnavailable)},
      {"driver.cuda_version", format_cuda_version(driver)},
      {"runtime.version", format_cuda_version(runtime)},
      {"benchmark.version", GPU_BENCH_BENCHMARK_VERSION},
      {"host.cpu", host_cpu()},
      {"host.kernel", host_kernel()},
      {"host.thp", host_thp()},
      {"host.gpu_numa_node", gpu_numa_node(bus)},
      // How many hardware queues streams are spread over: past it, streams share queues and can wait on
      // each other's work, which shapes every multi-stream result.
      {"cuda.device_max_connections", env_or("CUDA_DEVICE_MAX_CONNECTIONS", "default")},
  };
  c.insert(c.end(), rest.begin(), rest.end());
  const context_list topology = collect_topology(gpus);
  c.insert(c.end(), topology.begin(), topology.end());
  for (const device_facts& f : gpus) {
    const context_list own = per_gpu_context(f);
    c.insert(c.end(), own.begin(), own.end());
  }
  check_context(c);
  return c;
}

}  // namespace gpu_bench
