#include <gtest/gtest.h>

#include <map>

#include "fixtures/case_name.hpp"
#include "fixtures/topology.hpp"

using namespace gpu_bench;

namespace {
std::map<std::string, std::string> as_map(const context_list& c) {
  std::map<std::string, std::string> m;
  for (const auto& [k, v] : c) EXPECT_TRUE(m.emplace(k, v).second) << "repeated key " << k;
  return m;
}
}  // namespace

TEST(Topology, PcieLevelsAndLinks) {
  EXPECT_EQ(pcie_level_name(0), "board");
  EXPECT_EQ(pcie_level_name(10), "pcie_switch");
  EXPECT_EQ(pcie_level_name(20), "pcie_switches");
  EXPECT_EQ(pcie_level_name(30), "pcie_host_bridge");
  EXPECT_EQ(pcie_level_name(40), "numa_node");
  EXPECT_EQ(pcie_level_name(50), "system");
  EXPECT_EQ(pcie_level_name(35), "unavailable");
  EXPECT_EQ(pcie_level_name(std::nullopt), "unavailable");
  EXPECT_EQ(link_name({true, 50}), "nvlink");
  EXPECT_EQ(link_name({true, std::nullopt}), "nvlink");
  EXPECT_EQ(link_name({false, 10}), "pcie_switch");
  EXPECT_EQ(link_name({false, std::nullopt}), "unavailable");
  // Without an answer on NVLink a PCIe level would be a guess at the path the bytes take.
  EXPECT_EQ(link_name({std::nullopt, 30}), "unavailable");
}

TEST(Topology, KeysForEveryGpuAndEveryOrderedPair) {
  std::vector<gpu_identity> gpus = {{"NVIDIA H100 80GB HBM3", "GPU-0", "00000000:18:00.0", "0"},
                                    {"NVIDIA H100 80GB HBM3", "GPU-1", "00000000:2A:00.0", "none"},
                                    {"NVIDIA H100 80GB HBM3", "", "00000000:3A:00.0", ""}};
  std::vector<gpu_pair> pairs;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      if (i != j) pairs.push_back({i, j, true, 0, true, {true, 50}});
  pairs[1] = {0, 2, false, std::nullopt, std::nullopt, {false, 30}};
  const context_list c = format_topology(gpus, pairs);
  EXPECT_NO_THROW(check_context(c));
  const auto m = as_map(c);
  EXPECT_EQ(m.size(), 1u + 3 * 4 + 6 * 4);
  EXPECT_EQ(m.at("gpu.count"), "3");
  EXPECT_EQ(m.at("gpu.1.pci_bus_id"), "00000000:2A:00.0");
  EXPECT_EQ(m.at("gpu.1.numa_node"), "none");
  EXPECT_EQ(m.at("gpu.2.uuid"), "unavailable");
  EXPECT_EQ(m.at("gpu.2.numa_node"), "unavailable");
  EXPECT_EQ(m.at("topology.0-1.peer_access"), "yes");
  EXPECT_EQ(m.at("topology.0-1.perf_rank"), "0");
  EXPECT_EQ(m.at("topology.0-1.native_atomics"), "yes");
  EXPECT_EQ(m.at("topology.0-1.link"), "nvlink");
  EXPECT_EQ(m.at("topology.0-2.peer_access"), "no");
  EXPECT_EQ(m.at("topology.0-2.perf_rank"), "unavailable");
  EXPECT_EQ(m.at("topology.0-2.native_atomics"), "unavailable");
  EXPECT_EQ(m.at("topology.0-2.link"), "pcie_host_bridge");
  EXPECT_EQ(m.at("topology.2-1.link"), "nvlink");
  EXPECT_EQ(as_map(format_topology({}, {})).at("gpu.count"), "0");
}

TEST(Topology, PairKeysPassTheContextCheck) {
  EXPECT_EQ(pair_key(0, 11, "link"), "topology.0-11.link");
  EXPECT_EQ(gpu_key(7, "name"), "gpu.7.name");
  EXPECT_NO_THROW(check_context({{pair_key(3, 2, "perf_rank"), "1"}}));
  EXPECT_THROW(check_context({{"topology.0-1.Link", "x"}}), std::logic_error);
}

TEST(CaseName, DeviceKeyGoesLast) {
  case_name n("Transfer");
  n.add("dir", "h2d").add("mem", "pinned").add("bytes", std::uint64_t{1048576}).add("device", 1);
  EXPECT_EQ(n.str(), "Transfer/dir:h2d/mem:pinned/bytes:1048576/device:1");
  EXPECT_THROW(n.add("device", 2), std::invalid_argument);
}
