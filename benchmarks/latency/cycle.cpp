#include "benchmarks/latency/cycle.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace gpu_bench {

std::uint64_t chase_lines(std::uint64_t footprint) {
  return footprint / kChaseLineBytes;
}

namespace {
// splitmix64: a fast generator whose every output is well mixed, enough to order lines.
std::uint64_t next_random(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace

std::vector<std::uint32_t> chase_cycle(std::uint64_t footprint, chase_pattern pattern, std::uint64_t seed) {
  const std::uint64_t lines = chase_lines(footprint);
  if (lines == 0)
    throw std::invalid_argument("a chase needs at least one line of " + std::to_string(kChaseLineBytes) + " bytes");
  if (lines > std::numeric_limits<std::uint32_t>::max()) throw std::invalid_argument("a chase of more than 2^32 lines");
  const auto n = static_cast<std::uint32_t>(lines);
  std::vector<std::uint32_t> next(n);
  if (pattern == chase_pattern::stride) {
    for (std::uint32_t i = 0; i < n; ++i) next[i] = i + 1 == n ? 0 : i + 1;
    return next;
  }
  // Sattolo: a Fisher-Yates shuffle that never leaves an element in place, so the permutation it makes of
  // the identity is a single cycle. The swaps touch memory at random but never wait on one another: 8M
  // lines (1 GiB) take about 0.1 s.
  for (std::uint32_t i = 0; i < n; ++i) next[i] = i;
  std::uint64_t state = seed;
  for (std::uint32_t i = n - 1; i > 0; --i) {
    // j uniform in [0, i) by a multiply-shift of 32 random bits.
    const auto j = static_cast<std::uint32_t>(((next_random(state) >> 32) * i) >> 32);
    std::swap(next[i], next[j]);
  }
  return next;
}

std::string cycle_problem(const std::vector<std::uint32_t>& next) {
  const std::size_t n = next.size();
  if (n == 0) return "no lines";
  std::vector<bool> seen(n, false);
  std::size_t at = 0;
  for (std::size_t step = 0; step < n; ++step) {
    if (next[at] >= n) return "line " + std::to_string(at) + " points outside the footprint";
    if (seen[at]) return "line " + std::to_string(at) + " is visited twice";
    seen[at] = true;
    at = next[at];
  }
  if (at != 0) return "after every line the chase is at line " + std::to_string(at) + ", not back at its start";
  return {};
}

std::string chase_position::problem(std::int64_t offset, std::uint64_t walked) {
  const std::uint64_t lines = next_.size();
  const auto line_bytes = static_cast<std::int64_t>(kChaseLineBytes);
  if (offset < 0 || static_cast<std::uint64_t>(offset) >= lines * kChaseLineBytes || offset % line_bytes != 0)
    return "the chase ended " + std::to_string(offset) +
           " bytes from the footprint's start, not at a line of its cycle: its loads did not follow the pointers "
           "written";
  if (walked < walked_)
    return "the chase was asked for after " + std::to_string(walked) + " loads, after " + std::to_string(walked_) +
           " before";
  for (std::uint64_t k = (walked - walked_) % lines; k > 0; --k) line_ = next_[line_];
  walked_ = walked;
  const auto at = static_cast<std::uint64_t>(offset / line_bytes);
  if (at != line_)
    return "the chase ended at line " + std::to_string(at) + ", not at line " + std::to_string(line_) + " where its " +
           std::to_string(walked) + " loads lead";
  return {};
}

double chase_difference_s(double n_loads_s, double twice_n_loads_s) {
  return twice_n_loads_s - n_loads_s;
}

double latency_ns(double loads_s, std::uint64_t loads) {
  return loads == 0 ? 0 : loads_s / static_cast<double>(loads) * 1e9;
}

double expected_latency_s(bool across_link, std::uint64_t footprint) {
  if (across_link) return 1e-6;
  if (footprint <= (std::uint64_t{128} << 10)) return 40e-9;
  if (footprint <= (std::uint64_t{64} << 20)) return 300e-9;
  return 700e-9;
}

std::uint64_t chase_loads_for(double latency_s, double target_s) {
  if (!(latency_s > 0) || !(target_s > 0)) return kMinChaseLoads;
  const double want = target_s / latency_s;
  const double rounded = std::exp2(std::round(std::log2(std::max(want, 1.0))));
  if (rounded <= static_cast<double>(kMinChaseLoads)) return kMinChaseLoads;
  if (rounded >= static_cast<double>(kMaxChaseLoads)) return kMaxChaseLoads;
  return static_cast<std::uint64_t>(rounded);
}

std::uint64_t chase_warm_loads(bool across_link, std::uint64_t footprint) {
  const std::uint64_t lines = chase_lines(footprint);
  return static_cast<double>(lines) * expected_latency_s(across_link, footprint) <= kWarmWalkS ? lines : 0;
}

}  // namespace gpu_bench
