#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
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

// --cpu=fast holds the thread that drives the GPU on one CPU; the workers that fill and check its buffers
// must not all land there with it.
TEST(Pattern, WorkersRunOnEveryStartCpuWhileTheCallerIsPinned) {
  if (start_cpu_count() < 2) GTEST_SKIP() << "this process may use fewer than two CPUs";
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  std::atomic<int> slices{0}, narrow{0};
  parallel_slices(1000, 100, [&](std::size_t, std::size_t) {
    cpu_set_t mine;
    CPU_ZERO(&mine);
    if (sched_getaffinity(0, sizeof mine, &mine) != 0 || CPU_COUNT(&mine) != start_cpu_count()) ++narrow;
    ++slices;
  });
  ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
  EXPECT_EQ(slices.load(), start_cpu_count());  // one slice a CPU
  EXPECT_EQ(narrow.load(), 0) << "workers inherited the caller's one CPU";
}
