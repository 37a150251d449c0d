// The bound on the buffer cache under --device=all: which host buffers go when a case needs room, and the
// default bound.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "harness/memory/cache_policy.hpp"

namespace gpu_bench {
namespace {

constexpr std::size_t kGiB = std::size_t{1} << 30;

TEST(CachePolicy, KeepsOtherGpusBuffersWhileTheyFitTheLimit) {
  // A case on GPU 0 after cases on GPUs 1 and 2: their buffers stay, as the held bytes and the new buffer
  // come within the limit.
  const std::vector<held_buffer> held = {{1, kGiB, 1}, {2, kGiB, 2}};
  EXPECT_TRUE(buffers_to_free(held, {0}, kGiB, 4 * kGiB).empty());
  EXPECT_TRUE(buffers_to_free(held, {0}, 0, 2 * kGiB).empty());
  EXPECT_TRUE(buffers_to_free(held, {0}, kGiB, 3 * kGiB).empty());  // exactly at the limit
}

TEST(CachePolicy, FreesTheLeastRecentlyUsedBuffersOfOtherGpusFirst) {
  const std::vector<held_buffer> held = {{1, kGiB, 5}, {2, kGiB, 2}, {3, kGiB, 9}, {0, kGiB, 1}};
  // 5 GiB with the new one against 4: one goes, GPU 2's, the least recently used of the other GPUs' (GPU 0's
  // is older, but the case runs on GPU 0).
  EXPECT_EQ(buffers_to_free(held, {0}, kGiB, 4 * kGiB), (std::vector<std::size_t>{1}));
  EXPECT_EQ(buffers_to_free(held, {0}, kGiB, 3 * kGiB), (std::vector<std::size_t>{1, 0}));
  // A case between GPUs 0 and 2 keeps GPU 2's.
  EXPECT_EQ(buffers_to_free(held, {0, 2}, kGiB, 3 * kGiB), (std::vector<std::size_t>{0, 2}));
}

TEST(CachePolicy, FreesNoMoreThanTheNewBufferNeeds) {
  // One large old buffer makes room for the new one alone; the smaller, more recent ones stay.
  const std::vector<held_buffer> held = {{1, kGiB / 4, 7}, {2, 2 * kGiB, 3}, {3, kGiB / 4, 8}};
  EXPECT_EQ(buffers_to_free(held, {0}, kGiB, 2 * kGiB), (std::vector<std::size_t>{1}));
}

TEST(CachePolicy, NeverFreesTheRunningCasesBuffersForTheBound) {
  // GPU 0's 3 GiB alone pass the limit of 2 GiB: GPU 1's buffer goes, GPU 0's stay (the case may hold
  // references to them), and the total stays above the limit.
  const std::vector<held_buffer> held = {{0, 3 * kGiB, 1}, {1, kGiB, 2}, {0, kGiB, 3}};
  EXPECT_EQ(buffers_to_free(held, {0}, kGiB, 2 * kGiB), (std::vector<std::size_t>{1}));
  EXPECT_TRUE(buffers_to_free(held, {0, 1}, kGiB, 2 * kGiB).empty());
}

TEST(CachePolicy, LimitIsAQuarterOfTheHostAndAtMostHalfOfWhatIsAvailable) {
  EXPECT_EQ(host_cache_limit(std::uint64_t{64} * kGiB, std::nullopt), 16 * kGiB);
  EXPECT_EQ(host_cache_limit(std::uint64_t{64} * kGiB, std::uint64_t{60} * kGiB), 16 * kGiB);
  EXPECT_EQ(host_cache_limit(std::uint64_t{64} * kGiB, std::uint64_t{20} * kGiB), 10 * kGiB);
  EXPECT_EQ(host_cache_limit(0, std::nullopt), 0u);

  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  ASSERT_GT(pages, 0);
  ASSERT_GT(page_size, 0);
  const std::uint64_t total = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
  EXPECT_GT(default_host_cache_limit(), 0u);
  EXPECT_LE(default_host_cache_limit(), total / 4);
}

// The cache as buffer_cache keeps host buffers under --device=all, one buffer per (device, slot): at each
// case's start it frees for the bound, and before each allocation it makes room for the new buffer.
class cache_model {
 public:
  explicit cache_model(std::size_t limit) : limit_(limit) {}

  struct need {
    int device;
    int slot;
    std::size_t bytes;
  };
  void run_case(const std::vector<int>& gpus, const std::vector<need>& needs) {
    free_for(gpus, 0);
    for (const need& n : needs) {
      const std::pair<int, int> key{n.device, n.slot};
      const std::uint64_t use = ++uses_;
      auto it = held_.find(key);
      if (it != held_.end() && it->second.bytes >= n.bytes) {
        it->second.last_use = use;
        continue;
      }
      if (it != held_.end()) held_.erase(it);
      std::vector<int> in_use = gpus;
      in_use.push_back(n.device);
      free_for(in_use, n.bytes);
      held_[key] = {n.device, n.bytes, use};
      ++allocations_;
    }
  }
  int allocations() const { return allocations_; }
  std::size_t bytes_held() const {
    std::size_t total = 0;
    for (const auto& [key, b] : held_) total += b.bytes;
    return total;
  }

 private:
  void free_for(const std::vector<int>& in_use, std::size_t incoming) {
    std::vector<held_buffer> held;
    std::vector<std::pair<int, int>> keys;
    for (const auto& [key, b] : held_) {
      held.push_back(b);
      keys.push_back(key);
    }
    for (std::size_t i : buffers_to_free(held, in_use, incoming, limit_)) held_.erase(keys[i]);
  }
  std::size_t limit_;
  std::map<std::pair<int, int>, held_buffer> held_;
  std::uint64_t uses_ = 0;
  int allocations_ = 0;
};

// A round over four GPUs: three single-GPU cases per GPU, each taking 1 GiB in each of two slots, and a
// copy between each pair taking 512 MiB in a third slot on each of its GPUs (2.5 GiB per GPU), shuffled.
std::vector<std::pair<std::vector<int>, std::vector<cache_model::need>>> shuffled_round(unsigned seed) {
  std::vector<std::pair<std::vector<int>, std::vector<cache_model::need>>> cases;
  for (int g = 0; g < 4; ++g)
    for (int i = 0; i < 3; ++i) cases.push_back({{g}, {{g, 0, kGiB}, {g, 1, kGiB}}});
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) cases.push_back({{a, b}, {{a, 2, kGiB / 2}, {b, 2, kGiB / 2}}});
  std::mt19937 rng(seed);
  std::shuffle(cases.begin(), cases.end(), rng);
  return cases;
}

TEST(CachePolicy, AShuffledRoundOverEveryGpuAllocatesEachBufferOnceWhereAllFit) {
  // Four GPUs' sets of 2.5 GiB fit a bound of 16 GiB: each of the twelve buffers is allocated once, in the
  // first round, and the next round allocates none.
  cache_model cache(16 * kGiB);
  for (const auto& [gpus, needs] : shuffled_round(1)) cache.run_case(gpus, needs);
  EXPECT_EQ(cache.allocations(), 4 * 3);
  for (const auto& [gpus, needs] : shuffled_round(2)) cache.run_case(gpus, needs);
  EXPECT_EQ(cache.allocations(), 4 * 3);
}

TEST(CachePolicy, AShuffledRoundHoldsNoMoreThanTheBoundAndTheRunningCasesBuffers) {
  // A bound below four GPUs' sets: buffers are allocated again, but what is held past the bound is never
  // more than the running case's own buffers.
  const std::size_t limit = 6 * kGiB;
  cache_model cache(limit);
  for (unsigned seed = 1; seed <= 3; ++seed)
    for (const auto& [gpus, needs] : shuffled_round(seed)) {
      cache.run_case(gpus, needs);
      std::size_t own = 0;
      for (const auto& n : needs) own += n.bytes;
      EXPECT_LE(cache.bytes_held(), limit + own);
    }
  EXPECT_GT(cache.allocations(), 4 * 3);
}

}  // namespace
}  // namespace gpu_bench
