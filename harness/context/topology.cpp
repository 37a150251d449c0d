#include "harness/context/topology.hpp"

#include "harness/context/host_facts.hpp"

namespace gpu_bench {
namespace {

std::string or_unavailable(const std::string& v) {
  return v.empty() ? kUnavailable : v;
}
std::string yes_no(std::optional<bool> v) {
  return v ? (*v ? "yes" : "no") : kUnavailable;
}

}  // namespace

std::string pcie_level_name(std::optional<int> nvml_level) {
  if (!nvml_level) return kUnavailable;
  switch (*nvml_level) {
    case 0:
      return "board";
    case 10:
      return "pcie_switch";
    case 20:
      return "pcie_switches";
    case 30:
      return "pcie_host_bridge";
    case 40:
      return "numa_node";
    case 50:
      return "system";
    default:
      return kUnavailable;
  }
}

std::string link_name(const gpu_link& link) {
  if (!link.nvlink) return kUnavailable;
  return *link.nvlink ? "nvlink" : pcie_level_name(link.pcie_level);
}

std::string link_class(const gpu_link& link) {
  const std::string name = link_name(link);
  if (name == "nvlink" && link.nvlinks) return name + std::to_string(*link.nvlinks);
  return name;
}

std::string gpu_key(int gpu, std::string_view field) {
  return "gpu." + std::to_string(gpu) + "." + std::string(field);
}

std::string pair_key(int src, int dst, std::string_view field) {
  return "topology." + std::to_string(src) + "-" + std::to_string(dst) + "." + std::string(field);
}

context_list indexed_gpu_facts(int gpu, const context_list& facts) {
  context_list out;
  for (const auto& [key, value] : facts) {
    if (key.rfind("gpu.", 0) == 0)
      out.emplace_back(gpu_key(gpu, key.substr(4)), value);
    else if (key.rfind("profile.", 0) == 0)
      out.emplace_back(gpu_key(gpu, key), value);
  }
  return out;
}

context_list format_topology(const std::vector<gpu_identity>& gpus, const std::vector<gpu_pair>& pairs) {
  context_list c = {{"gpu.count", std::to_string(gpus.size())}};
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const int g = static_cast<int>(i);
    c.emplace_back(gpu_key(g, "name"), or_unavailable(gpus[i].name));
    c.emplace_back(gpu_key(g, "uuid"), or_unavailable(gpus[i].uuid));
    c.emplace_back(gpu_key(g, "pci_bus_id"), or_unavailable(gpus[i].pci_bus_id));
    c.emplace_back(gpu_key(g, "numa_node"), or_unavailable(gpus[i].numa_node));
  }
  for (const gpu_pair& p : pairs) {
    c.emplace_back(pair_key(p.src, p.dst, "peer_access"), yes_no(p.peer_access));
    c.emplace_back(pair_key(p.src, p.dst, "perf_rank"), p.perf_rank ? std::to_string(*p.perf_rank) : kUnavailable);
    c.emplace_back(pair_key(p.src, p.dst, "native_atomics"), yes_no(p.native_atomics));
    c.emplace_back(pair_key(p.src, p.dst, "link"), link_name(p.link));
    c.emplace_back(pair_key(p.src, p.dst, "nvlinks"), fact_text(p.link.nvlinks));
    c.emplace_back(pair_key(p.src, p.dst, "nvlink_gbps"), nvlink_rate_text(p.link.nvlink_gbps));
  }
  return c;
}

}  // namespace gpu_bench
