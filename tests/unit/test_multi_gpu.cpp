#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>

#include "benchmarks/all_host/model.hpp"
#include "benchmarks/peer/model.hpp"
#include "harness/context/gpu_context.hpp"
#include "harness/context/topology.hpp"

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
  EXPECT_EQ(link_name({true, 50, std::nullopt, std::nullopt}), "nvlink");
  EXPECT_EQ(link_name({true, std::nullopt, std::nullopt, std::nullopt}), "nvlink");
  EXPECT_EQ(link_name({false, 10, std::nullopt, std::nullopt}), "pcie_switch");
  EXPECT_EQ(link_name({false, std::nullopt, std::nullopt, std::nullopt}), "unavailable");
  // Without an answer on NVLink a PCIe level would be a guess at the path the bytes take.
  EXPECT_EQ(link_name({std::nullopt, 30, std::nullopt, std::nullopt}), "unavailable");
}

TEST(Topology, KeysForEveryGpuAndEveryOrderedPair) {
  std::vector<gpu_identity> gpus = {{"NVIDIA H100 80GB HBM3", "GPU-0", "00000000:18:00.0", "0"},
                                    {"NVIDIA H100 80GB HBM3", "GPU-1", "00000000:2A:00.0", "none"},
                                    {"NVIDIA H100 80GB HBM3", "", "00000000:3A:00.0", ""}};
  std::vector<gpu_pair> pairs;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      if (i != j) pairs.push_back({i, j, true, 0, true, {true, 50, 18u, 478.116}});
  pairs[1] = {0, 2, false, std::nullopt, std::nullopt, {false, 30, 0u, 0.0}};
  pairs[2] = {1, 0, true, 0, true, {true, std::nullopt, std::nullopt, std::nullopt}};
  const context_list c = format_topology(gpus, pairs);
  EXPECT_NO_THROW(check_context(c));
  const auto m = as_map(c);
  EXPECT_EQ(m.size(), 1u + 3 * 4 + 6 * 6);
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
  EXPECT_EQ(m.at("topology.0-1.nvlinks"), "18");
  EXPECT_EQ(m.at("topology.0-1.nvlink_gbps"), "478.116");
  EXPECT_EQ(m.at("topology.0-2.nvlinks"), "0");
  EXPECT_EQ(m.at("topology.0-2.nvlink_gbps"), "none");
  EXPECT_EQ(m.at("topology.1-0.link"), "nvlink");  // NVML's word, the links it could not follow
  EXPECT_EQ(m.at("topology.1-0.nvlinks"), "unavailable");
  EXPECT_EQ(m.at("topology.1-0.nvlink_gbps"), "unavailable");
  EXPECT_EQ(as_map(format_topology({}, {})).at("gpu.count"), "0");
}

TEST(Topology, PairKeysPassTheContextCheck) {
  EXPECT_EQ(pair_key(0, 11, "link"), "topology.0-11.link");
  EXPECT_EQ(gpu_key(7, "name"), "gpu.7.name");
  EXPECT_NO_THROW(check_context({{pair_key(3, 2, "perf_rank"), "1"}}));
  EXPECT_THROW(check_context({{"topology.0-1.Link", "x"}}), std::logic_error);
}

TEST(PeerModel, EveryOrderedPairOnceBidirForOneOrderOnly) {
  const std::vector<std::uint64_t> sizes = {1u << 20, 16u << 20, 256u << 20};
  EXPECT_TRUE(peer_grid(0, sizes).empty());
  EXPECT_TRUE(peer_grid(1, sizes).empty());
  // 4 GPUs: 12 ordered pairs x (on, on by the SMs, off, read, read by the SMs) x 3 sizes oneway, 6 pairs x
  // (on, on by the SMs, off) x 3 sizes bidir.
  const auto grid = peer_grid(4, sizes);
  EXPECT_EQ(grid.size(), 12u * 5 * 3 + 6u * 3 * 3);
  std::set<std::string> names;
  const std::regex form(
      R"(^Peer/src:\d+/dst:\d+/(peer_access:off/dir:(oneway|bidir)|peer_access:on/dir:(oneway(/access:read)?|bidir)(/engine:sm)?)/bytes:\d+$)");
  for (const peer_case& c : grid) {
    const std::string n = peer_name(c).str();
    EXPECT_TRUE(std::regex_match(n, form)) << n;
    EXPECT_TRUE(names.insert(n).second) << n;
    EXPECT_NE(c.src, c.dst);
    if (c.dir == peer_dir::bidir) {
      EXPECT_LT(c.src, c.dst) << n;
    }
  }
  EXPECT_TRUE(names.count("Peer/src:0/dst:1/peer_access:on/dir:oneway/bytes:1048576"));
  EXPECT_TRUE(names.count("Peer/src:3/dst:2/peer_access:off/dir:oneway/bytes:268435456"));
  EXPECT_TRUE(names.count("Peer/src:1/dst:3/peer_access:on/dir:bidir/bytes:16777216"));
  EXPECT_FALSE(names.count("Peer/src:3/dst:1/peer_access:on/dir:bidir/bytes:16777216"));
  EXPECT_TRUE(names.count("Peer/src:1/dst:3/peer_access:on/dir:bidir/engine:sm/bytes:16777216"));
  EXPECT_TRUE(names.count("Peer/src:3/dst:2/peer_access:on/dir:oneway/access:read/bytes:268435456"));
  EXPECT_TRUE(names.count("Peer/src:3/dst:2/peer_access:on/dir:oneway/access:read/engine:sm/bytes:1048576"));
  EXPECT_FALSE(names.count("Peer/src:1/dst:3/peer_access:on/dir:bidir/access:read/bytes:16777216"));
  EXPECT_FALSE(names.count("Peer/src:1/dst:3/peer_access:off/dir:oneway/access:read/bytes:16777216"));
  // Grouped by pair and access: a pair's access changes twice per run.
  EXPECT_EQ(grid.front().src, 0);
  EXPECT_EQ(grid.front().dst, 1);
  EXPECT_TRUE(grid.front().peer_access);
  EXPECT_DOUBLE_EQ(peer_bytes_moved({0, 1, true, peer_dir::oneway, 1000}), 1000.0);
  EXPECT_DOUBLE_EQ(peer_bytes_moved({0, 1, true, peer_dir::bidir, 1000}), 2000.0);
}

TEST(PeerModel, TheDefaultGrowsWithThePairsOnlyWherePairsDiffer) {
  const std::vector<std::uint64_t> sizes = {1u << 20, 16u << 20, 256u << 20};
  EXPECT_TRUE(peer_default_grid(1, sizes, {{0, 1}}).empty());
  // Eight GPUs of one link class: every ordered pair one way and every pair both ways at 256 MiB, and the
  // sweep (sizes, peer access off, engine:sm) between GPUs 0 and 1 alone.
  const auto hgx = peer_default_grid(8, sizes, {{0, 1}});
  EXPECT_EQ(hgx.size(), 56u + 28u + 22u);
  std::set<std::string> names;
  for (const peer_case& c : hgx) names.insert(peer_name(c).str());
  EXPECT_EQ(names.size(), hgx.size());
  EXPECT_TRUE(names.count("Peer/src:7/dst:6/peer_access:on/dir:oneway/bytes:268435456"));
  EXPECT_TRUE(names.count("Peer/src:6/dst:7/peer_access:on/dir:bidir/bytes:268435456"));
  EXPECT_FALSE(names.count("Peer/src:6/dst:7/peer_access:on/dir:bidir/bytes:1048576"));
  EXPECT_FALSE(names.count("Peer/src:2/dst:3/peer_access:off/dir:oneway/bytes:268435456"));
  EXPECT_FALSE(names.count("Peer/src:2/dst:3/peer_access:on/dir:oneway/engine:sm/bytes:268435456"));
  EXPECT_TRUE(names.count("Peer/src:0/dst:1/peer_access:off/dir:bidir/bytes:1048576"));
  EXPECT_TRUE(names.count("Peer/src:0/dst:1/peer_access:on/dir:oneway/engine:sm/bytes:16777216"));
  EXPECT_FALSE(names.count("Peer/src:1/dst:0/peer_access:off/dir:oneway/bytes:1048576"));
  // Reads by the destination: the swept pair's, every size, by copy engine and by SMs; no other pair's.
  EXPECT_TRUE(names.count("Peer/src:0/dst:1/peer_access:on/dir:oneway/access:read/bytes:1048576"));
  EXPECT_TRUE(names.count("Peer/src:0/dst:1/peer_access:on/dir:oneway/access:read/engine:sm/bytes:268435456"));
  EXPECT_FALSE(names.count("Peer/src:1/dst:0/peer_access:on/dir:oneway/access:read/bytes:268435456"));
  EXPECT_FALSE(names.count("Peer/src:6/dst:7/peer_access:on/dir:oneway/access:read/bytes:268435456"));
  // Each case of the default is one of the full grid's, in its order.
  const auto full = peer_grid(8, sizes);
  std::size_t at = 0;
  for (const peer_case& c : hgx) {
    while (at < full.size() && peer_name(full[at]).str() != peer_name(c).str()) ++at;
    EXPECT_LT(at, full.size()) << peer_name(c).str();
  }
  // Three link classes (say NV2, NV1 and PCIe): a sweep for each.
  EXPECT_EQ(peer_default_grid(8, sizes, {{0, 1}, {0, 2}, {0, 4}}).size(), 56u + 28u + 3 * 22u);
  // A --sizes list: the matrix at its largest size.
  const auto two = peer_default_grid(4, {4096, 1u << 20}, {{0, 1}});
  EXPECT_EQ(two.size(), 12u + 6u + (2 * 5 - 1) + (2 * 3 - 1));
  for (const peer_case& c : two)
    if (!(c.src == 0 && c.dst == 1)) {
      EXPECT_EQ(c.bytes, 1u << 20) << peer_name(c).str();
    }
  const auto lat = peer_latency_default_grid(8, {{0, 1}});
  EXPECT_EQ(lat.size(), 56u + 1u);
  EXPECT_EQ(peer_latency_name(lat[1]).str(), "PeerLatency/src:0/dst:1/peer_access:off/bytes:4");
}

TEST(PeerModel, OnePairPerLinkClass) {
  std::vector<std::vector<gpu_link>> links(4, std::vector<gpu_link>(4));
  EXPECT_EQ(pairs_per_link_class(links), (std::vector<std::pair<int, int>>{{0, 1}}));  // unread: one class
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      if (i != j) links[i][j] = {true, std::nullopt, 18u, 478.116};
  EXPECT_EQ(pairs_per_link_class(links), (std::vector<std::pair<int, int>>{{0, 1}}));
  // GPUs 0-1 and 2-3 bridged by 4 links, the rest across the host bridge.
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      if (i != j)
        links[i][j] = (i / 2 == j / 2) ? gpu_link{true, std::nullopt, 4u, 103.1} : gpu_link{false, 30, 0u, 0.0};
  EXPECT_EQ(link_class(links[0][1]), "nvlink4");
  EXPECT_EQ(link_class(links[0][2]), "pcie_host_bridge");
  EXPECT_EQ(link_class(gpu_link{true, std::nullopt, std::nullopt, std::nullopt}), "nvlink");
  const std::vector<std::pair<int, int>> two_classes = {{0, 1}, {0, 2}};
  EXPECT_EQ(pairs_per_link_class(links), two_classes);
}

TEST(PeerModel, LatencyAndAllHostNames) {
  const auto lat = peer_latency_grid(3);
  EXPECT_EQ(lat.size(), 6u * 2);
  EXPECT_EQ(peer_latency_name(lat.front()).str(), "PeerLatency/src:0/dst:1/peer_access:on/bytes:4");
  EXPECT_EQ(peer_latency_name(lat.back()).str(), "PeerLatency/src:2/dst:1/peer_access:off/bytes:4");
  EXPECT_TRUE(peer_latency_grid(1).empty());
  EXPECT_EQ(all_host_name(direction::h2d, 268435456).str(), "AllHost/dir:h2d/bytes:268435456");
  EXPECT_EQ(all_host_name(direction::d2h, 4).str(), "AllHost/dir:d2h/bytes:4");
}

TEST(PeerModel, AReadIsIssuedByTheDestinationAndNamedSo) {
  const peer_case read{1, 0, true, peer_dir::oneway, 268435456, false, true};
  EXPECT_EQ(peer_name(read).str(), "Peer/src:1/dst:0/peer_access:on/dir:oneway/access:read/bytes:268435456");
  const peer_case read_sm{1, 0, true, peer_dir::oneway, 1048576, true, true};
  EXPECT_EQ(peer_name(read_sm).str(), "Peer/src:1/dst:0/peer_access:on/dir:oneway/access:read/engine:sm/bytes:1048576");
  EXPECT_DOUBLE_EQ(peer_bytes_moved(read), 268435456.0);
  // The plain name is the write, as before reads were measured.
  EXPECT_EQ(peer_name({1, 0, true, peer_dir::oneway, 4096}).str(),
            "Peer/src:1/dst:0/peer_access:on/dir:oneway/bytes:4096");
  // In the full grid each pair's reads follow its writes with peer access, one way.
  const auto grid = peer_grid(2, {1u << 20});
  std::vector<std::string> names;
  for (const peer_case& c : grid)
    if (c.src == 0) names.push_back(peer_name(c).str());
  const std::vector<std::string> expected = {
      "Peer/src:0/dst:1/peer_access:on/dir:oneway/bytes:1048576",
      "Peer/src:0/dst:1/peer_access:on/dir:oneway/engine:sm/bytes:1048576",
      "Peer/src:0/dst:1/peer_access:on/dir:oneway/access:read/bytes:1048576",
      "Peer/src:0/dst:1/peer_access:on/dir:oneway/access:read/engine:sm/bytes:1048576",
      "Peer/src:0/dst:1/peer_access:on/dir:bidir/bytes:1048576",
      "Peer/src:0/dst:1/peer_access:on/dir:bidir/engine:sm/bytes:1048576",
      "Peer/src:0/dst:1/peer_access:off/dir:oneway/bytes:1048576",
      "Peer/src:0/dst:1/peer_access:off/dir:bidir/bytes:1048576"};
  EXPECT_EQ(names, expected);
}

TEST(AllHostModel, BidirFollowsTheOneWayCasesAtTheirSizes) {
  std::vector<std::string> names;
  for (const all_host_case& c : all_host_grid({1u << 20, 256u << 20}))
    names.push_back(all_host_name(c.dir, c.bytes, c.pattern).str());
  const std::vector<std::string> expected = {"AllHost/dir:h2d/bytes:1048576",
                                             "AllHost/dir:h2d/bytes:268435456",
                                             "AllHost/dir:h2d/pattern:one_to_all/bytes:1048576",
                                             "AllHost/dir:h2d/pattern:one_to_all/bytes:268435456",
                                             "AllHost/dir:d2h/bytes:1048576",
                                             "AllHost/dir:d2h/bytes:268435456",
                                             "AllHost/dir:d2h/pattern:all_to_one/bytes:1048576",
                                             "AllHost/dir:d2h/pattern:all_to_one/bytes:268435456",
                                             "AllHost/dir:bidir/bytes:1048576",
                                             "AllHost/dir:bidir/bytes:268435456"};
  EXPECT_EQ(names, expected);
  EXPECT_TRUE(all_host_grid({}).empty());
}

TEST(CaseName, DeviceKeyGoesLast) {
  case_name n("Transfer");
  n.add("dir", "h2d").add("mem", "pinned").add("bytes", std::uint64_t{1048576}).add("device", 1);
  EXPECT_EQ(n.str(), "Transfer/dir:h2d/mem:pinned/bytes:1048576/device:1");
  EXPECT_THROW(n.add("device", 2), std::invalid_argument);
}

TEST(PeerModel, PatternsCopyWhatTheyName) {
  using pairs = std::vector<std::pair<int, int>>;
  EXPECT_TRUE(pattern_copies(peer_pattern::all_pairs, 1).empty());
  EXPECT_EQ(pattern_copies(peer_pattern::one_to_all, 4), (pairs{{0, 1}, {0, 2}, {0, 3}}));
  EXPECT_EQ(pattern_copies(peer_pattern::all_to_one, 3), (pairs{{1, 0}, {2, 0}}));
  // In steps: at each, every GPU sends to one other and receives from one other.
  EXPECT_EQ(pattern_copies(peer_pattern::all_pairs, 3), (pairs{{0, 1}, {1, 2}, {2, 0}, {0, 2}, {1, 0}, {2, 1}}));
  const auto four = pattern_copies(peer_pattern::all_pairs, 4);
  EXPECT_EQ(four.size(), 12u);
  for (std::size_t step = 0; step < 3; ++step) {
    std::set<int> to, from;
    for (std::size_t k = 0; k < 4; ++k) {
      from.insert(four[step * 4 + k].first);
      to.insert(four[step * 4 + k].second);
      EXPECT_NE(four[step * 4 + k].first, four[step * 4 + k].second);
    }
    EXPECT_EQ(to.size(), 4u);
    EXPECT_EQ(from.size(), 4u);
  }
  EXPECT_EQ((std::set<std::pair<int, int>>(four.begin(), four.end()).size()), 12u);
  EXPECT_EQ(pattern_gpu_of(peer_pattern::one_to_all, std::make_pair(0, 3)), 3);
  EXPECT_EQ(pattern_gpu_of(peer_pattern::all_to_one, std::make_pair(3, 0)), 3);
  EXPECT_EQ(pattern_gpu_of(peer_pattern::all_pairs, std::make_pair(2, 1)), 2);
  EXPECT_EQ(peer_pattern_name(peer_pattern::all_pairs, 1u << 28).str(),
            "PeerPattern/pattern:all_pairs/bytes:268435456");
  EXPECT_EQ(peer_pattern_name(peer_pattern::one_to_all, 1u << 28, true).str(),
            "PeerPattern/pattern:one_to_all/engine:sm/bytes:268435456");
  EXPECT_EQ(peer_pattern_name(peer_pattern::all_pairs, 1u << 28, true, true).str(),
            "PeerPattern/pattern:all_pairs/engine:sm/release:together/bytes:268435456");
  EXPECT_EQ(all_host_name(direction::h2d, 1024, host_pattern::one_to_all).str(),
            "AllHost/dir:h2d/pattern:one_to_all/bytes:1024");
  EXPECT_EQ(all_host_name(direction::d2h, 1024).str(), "AllHost/dir:d2h/bytes:1024");
}
