#include "harness/memory/pattern.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace gpu_bench {
namespace {
constexpr std::size_t kMinWordsPerThread = std::size_t{4} << 20;  // 16 MiB: below that a thread costs more

// The CPUs the process may use as it starts, before --cpu pins the thread that drives the GPU. Read while
// static objects are made, before main runs. Empty where the kernel does not say.
cpu_set_t read_start_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) CPU_ZERO(&set);
  return set;
}
const cpu_set_t g_start_cpus = read_start_cpus();
}  // namespace

int start_cpu_count() {
  return CPU_COUNT(&g_start_cpus);
}

void parallel_slices(std::size_t n, std::size_t min_per_thread,
                     const std::function<void(std::size_t, std::size_t)>& body) {
  const int start_cpus = start_cpu_count();
  const std::size_t cores = start_cpus > 0 ? start_cpus : std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads = std::min(cores, std::max<std::size_t>(1, n / std::max<std::size_t>(1, min_per_thread)));
  if (threads <= 1) return body(std::size_t{0}, n);
  std::vector<std::thread> pool;
  const std::size_t per = (n + threads - 1) / threads;
  for (std::size_t t = 0; t < threads; ++t) {
    const std::size_t first = t * per, last = std::min(n, first + per);
    if (first >= last) continue;
    pool.emplace_back([=, &body] {
      // A thread starts on its creator's CPUs. Held on one CPU in its fast state, the creator would put every
      // worker on that one CPU, and a fill or check of a GiB would take seconds more.
      if (start_cpus > 0) (void)sched_setaffinity(0, sizeof g_start_cpus, &g_start_cpus);
      body(first, last);
    });
  }
  for (auto& th : pool) th.join();
}

void host_fill_bytes(void* dst, int value, std::size_t bytes) {
  auto* b = static_cast<unsigned char*>(dst);
  parallel_slices(bytes, 4 * kMinWordsPerThread,
                  [=](std::size_t first, std::size_t last) { std::memset(b + first, value, last - first); });
}

void host_fill_pattern(void* dst, std::size_t bytes, std::uint32_t seed) {
  auto* w = static_cast<std::uint32_t*>(dst);
  parallel_slices(bytes / sizeof(std::uint32_t), kMinWordsPerThread, [=](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) w[i] = pattern_word(i, seed);
  });
}

void host_fill_poison(void* dst, std::size_t bytes, std::uint32_t seed) {
  auto* w = static_cast<std::uint32_t*>(dst);
  parallel_slices(bytes / sizeof(std::uint32_t), kMinWordsPerThread, [=](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) w[i] = poison_word(i, seed);
  });
}

std::uint64_t host_count_mismatches(const void* src, std::size_t bytes, std::uint32_t seed) {
  const auto* w = static_cast<const std::uint32_t*>(src);
  std::atomic<std::uint64_t> bad{0};
  parallel_slices(bytes / sizeof(std::uint32_t), kMinWordsPerThread, [&](std::size_t first, std::size_t last) {
    std::uint64_t mine = 0;
    for (std::size_t i = first; i < last; ++i) mine += (w[i] != pattern_word(i, seed));
    bad += mine;
  });
  return bad.load();
}

std::uint32_t next_seed() {
  static std::atomic<std::uint32_t> counter{0x5eed};
  return counter.fetch_add(0x9E3779B9u) + 0x9E3779B9u;
}

}  // namespace gpu_bench
