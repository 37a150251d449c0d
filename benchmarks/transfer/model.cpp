#include "benchmarks/transfer/model.hpp"

#include <algorithm>

namespace gpu_bench {

const std::vector<mem_kind>& transfer_kinds(direction d) {
  using k = mem_kind;
  static const std::vector<mem_kind> h2d = {k::pageable, k::pinned,           k::write_combined, k::registered,
                                            k::mapped,   k::managed_prefetch, k::managed_fault};
  static const std::vector<mem_kind> d2h = {k::pageable,   k::pinned, k::write_combined,
                                            k::registered, k::mapped, k::managed_prefetch};
  static const std::vector<mem_kind> d2d = {k::device};
  switch (d) {
    case direction::h2d:
      return h2d;
    case direction::d2h:
    case direction::bidir:
      return d2h;
    case direction::d2d:
      return d2d;
  }
  return d2d;
}

bool transfer_valid(direction d, mem_kind k) {
  for (mem_kind x : transfer_kinds(d))
    if (x == k) return true;
  return false;
}

bool numa_kind(mem_kind k) {
  return k != mem_kind::device && !is_managed(k);
}

copy_engine natural_engine(mem_kind k) {
  return k == mem_kind::mapped || k == mem_kind::managed_fault ? copy_engine::sm : copy_engine::ce;
}

bool has_engine_twin(mem_kind k) {
  return k == mem_kind::pinned || k == mem_kind::registered || k == mem_kind::mapped || k == mem_kind::device;
}

std::vector<transfer_case> transfer_grid(const std::vector<std::uint64_t>& sizes, bool numa_axis,
                                         const std::vector<std::uint64_t>& engine_sizes) {
  std::vector<transfer_case> v;
  for (direction d : {direction::h2d, direction::d2h, direction::bidir, direction::d2d})
    for (mem_kind k : transfer_kinds(d)) {
      if (numa_axis && numa_kind(k)) {
        for (numa_place p : {numa_place::local, numa_place::remote})
          for (std::uint64_t n : sizes) v.push_back({d, k, n, p});
      } else if (d == direction::d2d) {
        for (cache_state c : {cache_state::cold, cache_state::warm})
          for (std::uint64_t n : sizes) v.push_back({d, k, n, numa_place::local, c});
      } else {
        for (std::uint64_t n : sizes) v.push_back({d, k, n});
      }
    }
  for (direction d : {direction::h2d, direction::d2h, direction::bidir, direction::d2d})
    for (mem_kind k : transfer_kinds(d)) {
      if (!has_engine_twin(k)) continue;
      const copy_engine other = natural_engine(k) == copy_engine::ce ? copy_engine::sm : copy_engine::ce;
      for (std::uint64_t n : sizes)
        if (std::find(engine_sizes.begin(), engine_sizes.end(), n) != engine_sizes.end())
          v.push_back({d, k, n, numa_place::local, cache_state::cold, other});
    }
  return v;
}

case_name transfer_name(const transfer_case& c) {
  case_name n("Transfer");
  n.add("dir", c.dir).add("mem", c.mem);
  if (c.numa == numa_place::remote) n.add("numa", c.numa);
  if (c.engine) n.add("engine", *c.engine);
  if (c.dir == direction::d2d) n.add("cache", c.cache);
  n.add("bytes", c.bytes);
  return n;
}

double transfer_bytes_moved(const transfer_case& c) {
  const auto n = static_cast<double>(c.bytes);
  return c.dir == direction::bidir ? 2 * n : n;
}

std::string beyond_link_peak(const transfer_case& c, const device_profile& p, double gbps) {
  if (c.dir == direction::d2d) {
    if (2 * c.bytes <= p.l2_bytes) return {};
    return beyond_peak(2 * gbps, p.memory_gbps, "device memory peak (read and written)");
  }
  if (!p.host_link_gbps) return {};
  if (c.dir == direction::bidir)
    return beyond_peak(gbps, 2 * *p.host_link_gbps, p.host_link_name + " peak (both directions)");
  return beyond_peak(gbps, p.host_link_gbps, p.host_link_name + " peak per direction");
}

}  // namespace gpu_bench
