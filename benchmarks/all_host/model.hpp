#pragma once
// AllHost's cases and names. Pure, tested without a GPU.
#include <cstdint>

#include "benchmarks/transfer/model.hpp"
#include "fixtures/run/case_name.hpp"

namespace gpu_bench {

// How the GPUs share the host: each its own buffer (the plain name), one buffer every GPU reads
// (one_to_all, h2d), or one buffer every GPU writes a part of (all_to_one, d2h).
enum class host_pattern { own, one_to_all, all_to_one };
template <>
inline constexpr enum_entries<host_pattern, 3> enum_names<host_pattern> = {
    {{host_pattern::own, "own"}, {host_pattern::one_to_all, "one_to_all"}, {host_pattern::all_to_one, "all_to_one"}}};

// AllHost/dir:{h2d,d2h}[/pattern:{one_to_all,all_to_one}]/bytes:{N}
inline case_name all_host_name(direction d, std::uint64_t bytes, host_pattern p = host_pattern::own) {
  case_name n("AllHost");
  n.add("dir", d);
  if (p != host_pattern::own) n.add("pattern", p);
  n.add("bytes", bytes);
  return n;
}

}  // namespace gpu_bench
