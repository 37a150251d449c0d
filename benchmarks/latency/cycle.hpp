#pragma once
// The Latency family's arithmetic, apart from any GPU: the cycle of lines a chase follows, and how a sample's
// two chase lengths give the time of the loads alone.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fixtures/run/enum_names.hpp"

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

// A rough latency per load, only to size the chases: host memory across the link; device memory by the
// cache its footprint fits in (L1 up to 128 KiB, L2 up to 64 MiB, else DRAM), as on H100-class GPUs.
double expected_latency_s(bool host_memory, std::uint64_t footprint);

// The loads per chase that make the difference last about `target_s` at `latency_s` a load: a power of
// two from kMinChaseLoads to kMaxChaseLoads.
inline constexpr std::uint64_t kMinChaseLoads = 64;
inline constexpr std::uint64_t kMaxChaseLoads = std::uint64_t{1} << 22;
std::uint64_t chase_loads_for(double latency_s, double target_s);

}  // namespace gpu_bench
