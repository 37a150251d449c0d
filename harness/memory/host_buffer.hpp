#pragma once
// Host memory of every kind, behind one type, and a cache that keeps the largest buffer of each kind so a
// size sweep pays for allocation and pinning once rather than once per case.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "harness/cuda/check.hpp"
#include "harness/cuda/handles.hpp"
#include "harness/memory/mem_kind.hpp"
#include "harness/memory/numa.hpp"

namespace gpu_bench {

class host_buffer {
 public:
  host_buffer() = default;
  // Allocates `bytes` of `kind` (any kind but device) with every page touched, on NUMA node `node` where
  // one is given. Throws allocation_error when it does not fit, std::runtime_error when its pages did not
  // land on `node`.
  host_buffer(mem_kind kind, std::size_t bytes, std::optional<int> node = std::nullopt);
  ~host_buffer();
  host_buffer(host_buffer&& o) noexcept { *this = std::move(o); }
  host_buffer& operator=(host_buffer&& o) noexcept;
  host_buffer(const host_buffer&) = delete;
  host_buffer& operator=(const host_buffer&) = delete;

  mem_kind kind() const { return kind_; }
  void* data() const { return host_; }
  std::size_t bytes() const { return bytes_; }
  // The address a kernel uses for this memory, or nullptr where the GPU cannot address it (pageable).
  void* device_ptr() const { return dev_; }
  // The NUMA node its first page lies on, where the kernel can say (not for every kind: see numa.hpp).
  std::optional<int> numa_node() const { return numa_node_; }

 private:
  void allocate(mem_kind kind, std::size_t bytes);
  void release() noexcept;
  void release_cuda_owned() noexcept;
  mem_kind kind_ = mem_kind::pageable;
  void* host_ = nullptr;
  void* dev_ = nullptr;
  std::size_t bytes_ = 0;
  std::optional<int> numa_node_;
  int device_ = 0;  // the context it was pinned or mapped in, current again when it is freed
};

// Which of the cached buffers of one device (and, for host memory, of one kind and placement) a case
// takes. Buffers a case holds at once take different slots; cases whose buffers play the same part take
// the same slot, so a sweep reuses (and grows) one buffer rather than holding one per case.
enum class buffer_slot : int {
  h2d = 0,        // an h2d copy's buffers on both sides; a case's first buffer of a kind (a GPU's peer send buffer)
  d2h = 1,        // a d2h copy's buffers on both sides; a case's second buffer of a kind (its peer receive buffer)
  h2d_prime = 2,  // small buffers a priming copy uses, apart from the measured ones it must not touch
  d2h_prime = 3,
  l2_flush = 4,  // device memory written over before each cold-cache sample
  spans = 5,     // per-direction timer spans read back after each sample
  batch = 6,     // Batch's scattered copies, both sides
  batch_table = 7,
  batch_prime = 8,
  peer_source = 10,  // PeerPattern: each GPU's one source, read by every copy out of it
  chase = 11,        // Latency: the lines a chase follows (managed pages advised to stay on the host)
};
// PeerPattern: the buffer a GPU receives into from `source_gpu`, one per source so no two copies share one.
inline buffer_slot peer_destination_slot(int source_gpu) {
  return static_cast<buffer_slot>(20 + source_gpu);
}
// A copy that rotates over placements (copy_case.cpp): placement 0 takes `slot` itself (h2d or d2h), each
// further one a pair of slots of its own, from 64 on.
inline buffer_slot placement_slot(buffer_slot slot, int placement) {
  if (placement == 0) return slot;
  return static_cast<buffer_slot>(64 + 2 * (placement - 1) + (slot == buffer_slot::d2h ? 1 : 0));
}

class buffer_cache {
 public:
  static buffer_cache& instance();
  // A buffer of at least `bytes` for the current device in `slot`. A buffer that is too small is freed before the
  // larger one is asked for. On allocation_error the caller may clear() the cache and ask again: references taken
  // earlier are invalid after clear(). Host buffers go to the NUMA node numa_target() picks for `place` and the
  // buffer's GPU (where the host has one node, or the GPU's node is unknown, wherever the kernel puts them;
  // numa_place::remote then throws, as there is no such node).
  host_buffer& host(mem_kind kind, std::size_t bytes, buffer_slot slot, numa_place place = numa_place::local);
  device_buffer& device(std::size_t bytes, buffer_slot slot);
  // The same for `device`, whichever is current. Every buffer is kept per device: device memory belongs
  // to its GPU, and mapped or write-combined host memory is mapped into the context that made it only.
  host_buffer& host_on(int device, mem_kind kind, std::size_t bytes, buffer_slot slot,
                       numa_place place = numa_place::local);
  device_buffer& device_on(int device, std::size_t bytes, buffer_slot slot);
  void clear();
  // From now on keeps the buffers of every device, while the host buffers held stay within
  // `host_limit` bytes: now, and before each host buffer is allocated, the least recently used host buffers
  // of devices outside `case_devices` (and the device being allocated for) are freed until they fit
  // (buffers_to_free). Device buffers are all kept: they lie in their own GPU's memory, where that GPU's
  // cases would hold them anyway.
  void keep_within(std::size_t host_limit, const std::vector<int>& case_devices);

  // Runs `acquire` (which takes buffers from the cache); if an allocation does not fit, empties the cache,
  // whose other buffers may hold the memory, and runs it once more.
  template <class F>
  auto acquire_with_retry(F&& acquire) {
    try {
      return acquire();
    } catch (const allocation_error&) {
      clear();
      return acquire();
    }
  }

 private:
  using host_key = std::tuple<int, mem_kind, buffer_slot, numa_place>;  // (device, kind, slot, place)
  struct host_entry {
    host_buffer buffer;
    std::uint64_t last_use = 0;  // uses_ when it was last handed out
  };
  // Frees host buffers of devices outside `in_use` until those held and `incoming_bytes` fit host_limit_.
  void make_room(const std::vector<int>& in_use, std::size_t incoming_bytes);

  std::map<host_key, host_entry> host_;
  std::map<std::pair<int, buffer_slot>, device_buffer> device_;  // (device, slot)
  std::uint64_t uses_ = 0;
  std::optional<std::size_t> host_limit_;  // set by keep_within; unbounded until then
  std::vector<int> case_devices_;
};

// The NUMA node host buffers for `device` are bound to for `place`; nullopt where none is (one node, a
// build that cannot bind, or a GPU whose node the system does not report).
std::optional<int> host_node_for(int device, numa_place place);

// Why host buffers for `device` are not bound to its node; nullopt where they are.
std::optional<std::string> numa_unbound_reason(int device);

// What the context records as host.numa_binding for `device`: "node N", or "none: " and why not.
std::string numa_binding_fact(int device);

}  // namespace gpu_bench
