#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "benchmarks/transfer/model.hpp"
#include "harness/memory/mem_kind.hpp"
#include "harness/run/case_name.hpp"
#include "harness/run/sizes.hpp"

using namespace gpu_bench;

TEST(CaseName, BuildsFamilyThenAxesInOrder) {
  case_name n("Overlap");
  n.add("schedule", "breadth_first").add("mem", "pinned").add("streams", 8).add("bytes", std::uint64_t{268435456});
  EXPECT_EQ(n.str(), "Overlap/schedule:breadth_first/mem:pinned/streams:8/bytes:268435456");
}

TEST(CaseName, RejectsWhatWouldBreakParsing) {
  EXPECT_THROW(case_name("transfer"), std::invalid_argument);
  EXPECT_THROW(case_name("Trans/fer"), std::invalid_argument);
  case_name n("Transfer");
  EXPECT_THROW(n.add("Dir", "h2d"), std::invalid_argument);
  EXPECT_THROW(n.add("dir", "H2D"), std::invalid_argument);
  EXPECT_THROW(n.add("dir", "h2d/x"), std::invalid_argument);
  EXPECT_THROW(n.add("dir", "a:b"), std::invalid_argument);
  EXPECT_THROW(n.add("dir", ""), std::invalid_argument);
  EXPECT_THROW(n.add("streams", -1), std::invalid_argument);
  n.add("dir", "h2d");
  EXPECT_THROW(n.add("dir", "d2h"), std::invalid_argument);
}

TEST(MemKind, NamesRoundTripAndAreUnique) {
  std::set<std::string> seen;
  for (mem_kind k : all_values<mem_kind>()) {
    const std::string name(to_name(k));
    EXPECT_TRUE(is_name_token(name)) << name;
    EXPECT_TRUE(seen.insert(name).second) << name;
    ASSERT_TRUE(parse_name<mem_kind>(name).has_value());
    EXPECT_EQ(*parse_name<mem_kind>(name), k);
  }
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_FALSE(parse_name<mem_kind>("Pinned").has_value());
  EXPECT_FALSE(parse_name<mem_kind>("managed").has_value());
  EXPECT_TRUE(enqueue_may_block(mem_kind::pageable));
  EXPECT_FALSE(enqueue_may_block(mem_kind::pinned));
  EXPECT_FALSE(is_host_kind(mem_kind::device));
}

TEST(TransferGrid, CoversEveryValidPairOnceAndNoInvalidOne) {
  const auto sizes = parse_size_spec("pow4");
  const auto grid = transfer_grid(sizes);
  // h2d: 7 kinds, d2h: 6, bidir: 6, d2d: 1 with a cold and a warm cache; no engine twins asked for.
  EXPECT_EQ(grid.size(), (7u + 6u + 6u + 2u) * sizes.size());
  std::set<std::string> names;
  const std::regex form(
      R"(Transfer/(dir:(h2d|d2h|bidir)/mem:[a-z_]+|dir:d2d/mem:device/cache:(cold|warm))/bytes:[0-9]+)");
  for (const auto& c : grid) {
    EXPECT_TRUE(transfer_valid(c.dir, c.mem));
    const std::string n = transfer_name(c).str();
    EXPECT_TRUE(std::regex_match(n, form)) << n;
    EXPECT_TRUE(names.insert(n).second) << "duplicate " << n;
  }
  EXPECT_FALSE(transfer_valid(direction::d2h, mem_kind::managed_fault));
  EXPECT_FALSE(transfer_valid(direction::d2d, mem_kind::pinned));
  EXPECT_FALSE(transfer_valid(direction::h2d, mem_kind::device));
}

TEST(TransferGrid, BytesMovedCountsBidirTwiceAndD2dOnce) {
  EXPECT_DOUBLE_EQ(transfer_bytes_moved({direction::bidir, mem_kind::pinned, 1024}), 2048.0);
  EXPECT_DOUBLE_EQ(transfer_bytes_moved({direction::d2d, mem_kind::device, 1024}), 1024.0);
  EXPECT_DOUBLE_EQ(transfer_bytes_moved({direction::h2d, mem_kind::pinned, 1024}), 1024.0);
}

TEST(Transfer, HeldToTheLinkItCrosses) {
  device_profile p;
  p.host_link_gbps = 63.0;
  p.host_link_name = "PCIe gen5 x16";
  p.memory_gbps = 3352.0;
  p.l2_bytes = 50u << 20;
  const std::uint64_t big = 1u << 28;
  EXPECT_EQ(beyond_link_peak({direction::h2d, mem_kind::pinned, big}, p, 55.2), "");
  EXPECT_NE(beyond_link_peak({direction::h2d, mem_kind::pinned, big}, p, 70.0).find("PCIe gen5 x16 peak per direction"),
            std::string::npos);
  EXPECT_EQ(beyond_link_peak({direction::bidir, mem_kind::pinned, big}, p, 100.0), "");
  EXPECT_NE(beyond_link_peak({direction::bidir, mem_kind::pinned, big}, p, 130.0), "");
  EXPECT_EQ(beyond_link_peak({direction::d2d, mem_kind::device, 1u << 30}, p, 1500.0), "");
  EXPECT_NE(beyond_link_peak({direction::d2d, mem_kind::device, 1u << 30}, p, 1800.0).find("device memory peak"),
            std::string::npos);
  EXPECT_EQ(beyond_link_peak({direction::d2d, mem_kind::device, 16u << 20}, p, 1800.0), "");  // fits in L2
  EXPECT_EQ(beyond_link_peak({direction::h2d, mem_kind::pinned, big}, device_profile{}, 1e6), "");
}

TEST(TransferGrid, EngineTwinsNameTheOtherEngine) {
  const std::vector<std::uint64_t> sizes = {4, 1u << 20, 256u << 20};
  const auto grid = transfer_grid(sizes, false, {1u << 20});
  // pinned, registered, mapped for h2d, d2h, bidir, and device for d2d: 10 twins at the one size asked for.
  EXPECT_EQ(grid.size(), (7u + 6u + 6u + 2u) * sizes.size() + 10u);
  std::set<std::string> names;
  for (const auto& c : grid) names.insert(transfer_name(c).str());
  EXPECT_TRUE(names.count("Transfer/dir:h2d/mem:pinned/engine:sm/bytes:1048576"));
  EXPECT_TRUE(names.count("Transfer/dir:bidir/mem:mapped/engine:ce/bytes:1048576"));
  EXPECT_TRUE(names.count("Transfer/dir:d2d/mem:device/engine:sm/cache:cold/bytes:1048576"));
  EXPECT_FALSE(names.count("Transfer/dir:h2d/mem:pageable/engine:sm/bytes:1048576"));
  EXPECT_FALSE(names.count("Transfer/dir:h2d/mem:pinned/engine:sm/bytes:4"));
  EXPECT_EQ(natural_engine(mem_kind::mapped), copy_engine::sm);
  EXPECT_EQ(natural_engine(mem_kind::pinned), copy_engine::ce);
  transfer_case twin{direction::h2d, mem_kind::pinned, 4};
  twin.engine = copy_engine::sm;
  EXPECT_EQ(twin.engine_used(), copy_engine::sm);
}
