#pragma once
// AllHost's cases and names. Pure, tested without a GPU.
#include <cstdint>
#include <vector>

#include "benchmarks/transfer/model.hpp"
#include "harness/run/case_name.hpp"

namespace gpu_bench {

// How the GPUs share the host: each its own buffer (the plain name), one buffer every GPU reads
// (one_to_all, h2d), or one buffer every GPU writes a part of (all_to_one, d2h).
enum class host_pattern { own, one_to_all, all_to_one };
template <>
inline constexpr enum_entries<host_pattern, 3> enum_names<host_pattern> = {
    {{host_pattern::own, "own"}, {host_pattern::one_to_all, "one_to_all"}, {host_pattern::all_to_one, "all_to_one"}}};

// AllHost/dir:{h2d,d2h,bidir}[/pattern:{one_to_all,all_to_one}]/bytes:{N}
inline case_name all_host_name(direction d, std::uint64_t bytes, host_pattern p = host_pattern::own) {
  case_name n("AllHost");
  n.add("dir", d);
  if (p != host_pattern::own) n.add("pattern", p);
  n.add("bytes", bytes);
  return n;
}

struct all_host_case {
  direction dir;  // h2d, d2h, or bidir: an h2d and a d2h copy of N bytes on every GPU at once
  host_pattern pattern;
  std::uint64_t bytes;
};

// What the family registers, in order: h2d with its own buffers then one_to_all, d2h with its own then
// all_to_one, then bidir with its own buffers, each at every size of `sizes`.
inline std::vector<all_host_case> all_host_grid(const std::vector<std::uint64_t>& sizes) {
  std::vector<all_host_case> v;
  for (direction d : {direction::h2d, direction::d2h})
    for (host_pattern p :
         {host_pattern::own, d == direction::h2d ? host_pattern::one_to_all : host_pattern::all_to_one})
      for (std::uint64_t n : sizes) v.push_back({d, p, n});
  for (std::uint64_t n : sizes) v.push_back({direction::bidir, host_pattern::own, n});
  return v;
}

}  // namespace gpu_bench
