#include "harness/memory/cache_policy.hpp"

#include <unistd.h>

#include <algorithm>
#include <limits>

#include "harness/context/host_facts.hpp"

namespace gpu_bench {

std::vector<std::size_t> buffers_to_free(const std::vector<held_buffer>& held, const std::vector<int>& case_devices,
                                         std::size_t incoming_bytes, std::size_t limit_bytes) {
  std::size_t total = incoming_bytes;
  for (const held_buffer& b : held) total += b.bytes;
  std::vector<std::size_t> others;
  for (std::size_t i = 0; i < held.size(); ++i)
    if (std::find(case_devices.begin(), case_devices.end(), held[i].device) == case_devices.end()) others.push_back(i);
  std::stable_sort(others.begin(), others.end(),
                   [&](std::size_t a, std::size_t b) { return held[a].last_use < held[b].last_use; });
  std::vector<std::size_t> freed;
  for (std::size_t i : others) {
    if (total <= limit_bytes) break;
    total -= held[i].bytes;
    freed.push_back(i);
  }
  return freed;
}

// Pinned, mapped and registered pages can be neither swapped nor migrated, and the running case's own
// buffers come on top of the bound (they are never freed for it), as does everything else the host runs: a
// quarter of the host's memory leaves the rest to them while holding as many GPUs' sets of host buffers (one
// buffer per memory kind, slot and placement, each at most the largest size a case asks for) as fit, so a
// shuffled round over every GPU need not pin and fill a GPU's set again at nearly every case. Half of what
// is available when the first case starts keeps a host that is already busy out of reclaim.
std::size_t host_cache_limit(std::uint64_t total_bytes, std::optional<std::uint64_t> available_bytes) {
  std::uint64_t limit = total_bytes / 4;
  if (available_bytes) limit = std::min(limit, *available_bytes / 2);
  return static_cast<std::size_t>(std::min<std::uint64_t>(limit, std::numeric_limits<std::size_t>::max()));
}

std::size_t default_host_cache_limit() {
  static const std::size_t limit = [] {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGE_SIZE);
    const std::uint64_t total =
        pages > 0 && page_size > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) : 0;
    return host_cache_limit(total, host_mem_available());
  }();
  return limit;
}

}  // namespace gpu_bench
