#pragma once
// AllHost's case names. Pure, tested without a GPU.
#include <cstdint>

#include "benchmarks/transfer/model.hpp"
#include "fixtures/run/case_name.hpp"

namespace gpu_bench {

// AllHost/dir:{h2d,d2h}/bytes:{N}
inline case_name all_host_name(direction d, std::uint64_t bytes) {
  case_name n("AllHost");
  n.add("dir", d).add("bytes", bytes);
  return n;
}

}  // namespace gpu_bench
