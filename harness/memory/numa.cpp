#include "harness/memory/numa.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "harness/context/host_facts.hpp"

#if defined(GPU_BENCH_HAVE_LIBNUMA)
#include <numa.h>
#include <numaif.h>
#endif

namespace gpu_bench {
namespace {

std::optional<int> parse_int(std::string_view s) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

#if defined(GPU_BENCH_HAVE_LIBNUMA)
// Bits in the kernel's node masks, plus one: the kernel reads maxnode - 1 bits (as libnuma passes them).
unsigned long mask_bits() {
  return static_cast<unsigned long>(numa_num_possible_nodes()) + 1;
}
std::size_t mask_words() {
  constexpr unsigned long kBits = 8 * sizeof(unsigned long);
  return static_cast<std::size_t>((mask_bits() + kBits - 1) / kBits);
}
#endif

}  // namespace

std::optional<std::vector<int>> parse_node_list(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  std::vector<int> nodes;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty()) return std::nullopt;  // "0,"
    const auto dash = item.find('-');
    const auto first = parse_int(item.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : parse_int(item.substr(dash + 1));
    if (!first || !last || *last < *first) return std::nullopt;
    for (int n = *first; n <= *last; ++n) nodes.push_back(n);
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

std::vector<int> host_memory_nodes() {
  const auto text = read_text_file("/sys/devices/system/node/has_memory");
  if (!text) return {};
  return parse_node_list(*text).value_or(std::vector<int>{});
}

bool numa_binding_available() {
#if defined(GPU_BENCH_HAVE_LIBNUMA)
  static const bool available = numa_available() >= 0;
  return available;
#else
  return false;
#endif
}

bool numa_user_policy() {
#if defined(GPU_BENCH_HAVE_LIBNUMA)
  static const bool user = [] {
    int mode = MPOL_DEFAULT;
    return numa_binding_available() && get_mempolicy(&mode, nullptr, 0, nullptr, 0) == 0 && mode != MPOL_DEFAULT;
  }();
  return user;
#else
  return false;
#endif
}

bool numa_axis_available() {
  return host_memory_nodes().size() > 1 && numa_binding_available() && !numa_user_policy();
}

std::optional<int> numa_target(numa_place p, int gpu_node, const std::vector<int>& nodes) {
  if (gpu_node < 0 || std::find(nodes.begin(), nodes.end(), gpu_node) == nodes.end()) return std::nullopt;
  if (p == numa_place::local) return gpu_node;
  for (int n : nodes)
    if (n != gpu_node) return n;
  return std::nullopt;
}

int parse_numa_node(std::string_view text) {
  return parse_int(text).value_or(-1);
}

numa_bind_scope::numa_bind_scope(std::optional<int> node) {
#if defined(GPU_BENCH_HAVE_LIBNUMA)
  if (!node || !numa_binding_available()) return;
  mask_.assign(mask_words(), 0);
  if (get_mempolicy(&mode_, mask_.data(), mask_bits(), nullptr, 0) != 0)
    throw std::runtime_error(std::string("cannot read this thread's NUMA memory policy: ") + std::strerror(errno));
  constexpr int kBits = 8 * sizeof(unsigned long);
  std::vector<unsigned long> want(mask_words(), 0);
  const auto n = static_cast<std::size_t>(*node);
  if (n / kBits >= want.size()) throw std::runtime_error("NUMA node " + std::to_string(*node) + " does not exist");
  want[n / kBits] = 1UL << (n % kBits);
  if (set_mempolicy(MPOL_BIND, want.data(), mask_bits()) != 0)
    throw std::runtime_error("cannot bind host memory to NUMA node " + std::to_string(*node) + ": " +
                             std::strerror(errno));
  active_ = true;
#else
  (void)node;
  (void)mode_;
  (void)active_;
#endif
}

numa_bind_scope::~numa_bind_scope() {
#if defined(GPU_BENCH_HAVE_LIBNUMA)
  if (!active_) return;
  // A restore that fails leaves the thread bound; say so rather than go on quietly.
  const bool plain = (mode_ & 0xff) == MPOL_DEFAULT;
  if (set_mempolicy(mode_, plain ? nullptr : mask_.data(), plain ? 0 : mask_bits()) != 0)
    std::fprintf(stderr, "gpu_bench: warning: cannot restore the NUMA memory policy: %s\n", std::strerror(errno));
#endif
}

std::optional<int> page_node(const void* p) {
#if defined(GPU_BENCH_HAVE_LIBNUMA)
  if (p == nullptr || !numa_binding_available()) return std::nullopt;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  void* pages[1] = {reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(p) / page * page)};
  int status[1] = {-1};
  // With no target nodes, move_pages only reports where each page is (or a negative errno).
  if (move_pages(0, 1, pages, nullptr, status, 0) != 0 || status[0] < 0) return std::nullopt;
  return status[0];
#else
  (void)p;
  return std::nullopt;
#endif
}

std::string run_on_node(int node) {
#if defined(GPU_BENCH_HAVE_LIBNUMA)
  if (!numa_binding_available()) return "the kernel has no NUMA support";
  if (numa_run_on_node(node) != 0) return std::string("numa_run_on_node failed: ") + std::strerror(errno);
  return {};
#else
  (void)node;
  return "built without libnuma";
#endif
}

}  // namespace gpu_bench
