#pragma once
// The Latency family's arithmetic, apart from any GPU: the cycle of lines a chase follows, and how a sample's
// two chase lengths give the time of the loads alone.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/run/enum_names.hpp"

namespace gpu_bench {

// One load per line: a line is the unit the GPU's caches and the host link move, so two consecutive
// pointers never share one.
inline constexpr std::uint64_t kChaseLineBytes = 128;
// The random order's seed: fixed, so every run and every GPU follows the same cycle.
inline constexpr std::uint64_t kChaseSeed = 0x6c6174656e6379ull;

// stride: the lines in address order (what a prefetcher would follow); random: a random cyclic order.
enum class chase_pattern { stride, random };
template <>
inline constexpr enum_entries<chase_pattern, 2> enum_names<chase_pattern> = {
    {{chase_pattern::stride, "stride"}, {chase_pattern::random, "random"}}};

// How many whole lines `footprint` bytes hold.
std::uint64_t chase_lines(std::uint64_t footprint);

// next[i]: the line that follows line i, such that from any line the chase visits every line of the
// footprint exactly once before it returns (one cycle). random is Sattolo's algorithm, which draws
// uniformly among the cyclic orders, from `seed`. Throws std::invalid_argument for a footprint under
// one line or of more lines than 32 bits count.
std::vector<std::uint32_t> chase_cycle(std::uint64_t footprint, chase_pattern pattern, std::uint64_t seed = kChaseSeed);

// "" when `next` is one cycle through every line, else what is wrong.
std::string cycle_problem(const std::vector<std::uint32_t>& next);

// A sample times a chase of N loads and one of 2N, each between its own events: both pay the same
// launch and event costs, so their difference is the time of N loads alone.
double chase_difference_s(double n_loads_s, double twice_n_loads_s);
// The latency of one load, from the time of `loads` loads alone.
double latency_ns(double loads_s, std::uint64_t loads);

// Where a chase that started at line 0 stands after a number of loads, followed along `next` incrementally
// from where it was last asked (under --verify=each it is asked after every sample).
class chase_position {
 public:
  explicit chase_position(const std::vector<std::uint32_t>& next) : next_(next) {}
  // "" when a chase whose pointer stands `offset` bytes from the footprint's start after `walked` loads (never
  // fewer than last asked) is at the line they lead to, else why not. Every load counted must have run, and
  // none run uncounted, for the two to meet.
  std::string problem(std::int64_t offset, std::uint64_t walked);

 private:
  const std::vector<std::uint32_t>& next_;
  std::uint64_t walked_ = 0;
  std::uint32_t line_ = 0;
};

// A rough latency per load, only to size the chases: a microsecond for memory across a link (the host's, or
// another GPU's through peer access); the GPU's own memory by the cache its footprint fits in (L1 up to
// 128 KiB, L2 up to 64 MiB, else DRAM), as on H100-class GPUs.
double expected_latency_s(bool across_link, std::uint64_t footprint);

// The loads per chase that make the difference last about `target_s` at `latency_s` a load: a power of
// two from kMinChaseLoads to kMaxChaseLoads.
inline constexpr std::uint64_t kMinChaseLoads = 64;
inline constexpr std::uint64_t kMaxChaseLoads = std::uint64_t{1} << 22;
std::uint64_t chase_loads_for(double latency_s, double target_s);

// The loads of the walk before any sample: the whole cycle once (it ends back at line 0), so that every
// sample times the steady state of a chase through the footprint, whatever the state the writing of the
// cycle left the caches and TLBs in, and however many samples a case takes (30 samples of a 32 MiB case walk
// a third of its cycle, 250 samples three times all of it). 0 where the whole cycle would take longer than
// kWarmWalkS at the expected latency: so large a footprint has no cache to settle in.
inline constexpr double kWarmWalkS = 0.2;
std::uint64_t chase_warm_loads(bool across_link, std::uint64_t footprint);

}  // namespace gpu_bench
