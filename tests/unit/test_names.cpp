#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "fixtures/case_name.hpp"
#include "fixtures/mem_kind.hpp"
#include "fixtures/sizes.hpp"
#include "fixtures/transfer_model.hpp"

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
  for (mem_kind k : all_mem_kinds()) {
    const std::string name(to_string(k));
    EXPECT_TRUE(is_name_token(name)) << name;
    EXPECT_TRUE(seen.insert(name).second) << name;
    ASSERT_TRUE(parse_mem_kind(name).has_value());
    EXPECT_EQ(*parse_mem_kind(name), k);
  }
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_FALSE(parse_mem_kind("Pinned").has_value());
  EXPECT_FALSE(parse_mem_kind("managed").has_value());
  EXPECT_TRUE(enqueue_may_block(mem_kind::pageable));
  EXPECT_FALSE(enqueue_may_block(mem_kind::pinned));
  EXPECT_FALSE(is_host_kind(mem_kind::device));
}

TEST(TransferGrid, CoversEveryValidPairOnceAndNoInvalidOne) {
  const auto sizes = parse_size_spec("pow4");
  const auto grid = transfer_grid(sizes);
  // h2d: 7 kinds, d2h: 6, bidir: 6, d2d: 1.
  EXPECT_EQ(grid.size(), (7u + 6u + 6u + 1u) * sizes.size());
  std::set<std::string> names;
  const std::regex form(R"(Transfer/dir:(h2d|d2h|bidir|d2d)/mem:[a-z_]+/bytes:[0-9]+)");
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
