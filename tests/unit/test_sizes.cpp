#include <gtest/gtest.h>

#include "harness/run/sizes.hpp"

using namespace gpu_bench;

TEST(Sizes, ParsesSuffixes) {
  EXPECT_EQ(parse_size("4"), 4u);
  EXPECT_EQ(parse_size("64K"), 65536u);
  EXPECT_EQ(parse_size("1M"), 1048576u);
  EXPECT_EQ(parse_size("1MiB"), 1048576u);
  EXPECT_EQ(parse_size("1mb"), 1048576u);
  EXPECT_EQ(parse_size("1G"), 1073741824u);
  EXPECT_EQ(parse_size("8B"), 8u);
}

TEST(Sizes, RejectsBadInputWithASentence) {
  for (const char* bad : {"", "-4", "0", "2", "6", "1X", "abc", "1.5M", "2T1", "99999999999999999999", "2048G"}) {
    try {
      parse_size(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("bad size"), std::string::npos);
    }
  }
}

TEST(Sizes, DefaultSweepIsPowersOfFourFrom4BTo1GiB) {
  const auto v = parse_size_spec("pow4");
  ASSERT_EQ(v.size(), 15u);
  EXPECT_EQ(v.front(), 4u);
  EXPECT_EQ(v.back(), 1u << 30);
  for (std::size_t i = 1; i < v.size(); ++i) EXPECT_EQ(v[i], v[i - 1] * 4);
}

TEST(Sizes, DenseSweepIsPowersOfTwo) {
  const auto v = parse_size_spec("pow2");
  ASSERT_EQ(v.size(), 29u);
  EXPECT_EQ(v[1], 8u);
  EXPECT_EQ(v.back(), 1u << 30);
}

TEST(Sizes, ListIsSortedWithoutRepeats) {
  const auto v = parse_size_spec("1M,4,1M,64K");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], 4u);
  EXPECT_EQ(v[1], 65536u);
  EXPECT_EQ(v[2], 1048576u);
  EXPECT_THROW(parse_size_spec("4,,8"), std::invalid_argument);
  EXPECT_THROW(parse_size_spec("pow3"), std::invalid_argument);
}
