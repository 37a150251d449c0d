#include <gtest/gtest.h>

#include <vector>

#include "harness/memory/pattern.hpp"

using namespace gpu_bench;

TEST(Pattern, DetectsEveryKindOfWrongCopy) {
  const std::size_t words = 4096;
  std::vector<std::uint32_t> buf(words);
  const std::uint32_t seed = next_seed();
  host_fill_pattern(buf.data(), words * 4, seed);
  EXPECT_EQ(host_count_mismatches(buf.data(), words * 4, seed), 0u);
  // A copy that did nothing leaves the poison: every word differs.
  host_fill_poison(buf.data(), words * 4, seed);
  EXPECT_EQ(host_count_mismatches(buf.data(), words * 4, seed), words);
  // Stale data from another run.
  host_fill_pattern(buf.data(), words * 4, next_seed());
  EXPECT_GT(host_count_mismatches(buf.data(), words * 4, seed), words - 4);
  // One flipped bit, and a copy shifted by one word.
  host_fill_pattern(buf.data(), words * 4, seed);
  buf[1234] ^= 1u << 7;
  EXPECT_EQ(host_count_mismatches(buf.data(), words * 4, seed), 1u);
  std::vector<std::uint32_t> shifted(words + 1);
  host_fill_pattern(shifted.data(), (words + 1) * 4, seed);
  EXPECT_GT(host_count_mismatches(shifted.data() + 1, words * 4, seed), words - 4);
}

TEST(Pattern, NeighbouringWordsAndSeedsDiffer) {
  int equal_neighbours = 0;
  for (std::uint64_t i = 0; i < 100000; ++i) equal_neighbours += pattern_word(i, 7) == pattern_word(i + 1, 7);
  EXPECT_EQ(equal_neighbours, 0);
  EXPECT_NE(pattern_word(0, 1), pattern_word(0, 2));
  for (std::uint64_t i = 0; i < 1000; ++i) EXPECT_NE(pattern_word(i, 3), poison_word(i, 3));
}
