#include "harness/memory/host_buffer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>

#include "harness/context/host_facts.hpp"
#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"
#include "harness/memory/cache_policy.hpp"
#include "harness/memory/pattern.hpp"

namespace gpu_bench {
namespace {

constexpr std::size_t kAlign = 4096;

std::size_t round_up(std::size_t n, std::size_t a) {
  return (n + a - 1) / a * a;
}

// Malloc'd memory is only promised once touched; check first so an oversized case fails with a sentence
// rather than the kernel's OOM killer.
void* alloc_pageable(std::size_t bytes) {
  const auto avail = host_mem_available();
  if (avail && bytes > *avail)
    throw allocation_error("cannot allocate " + format_bytes(bytes) + " of pageable host memory (" +
                           format_bytes(*avail) + " available)");
  void* p = nullptr;
  if (posix_memalign(&p, kAlign, round_up(bytes, kAlign)) != 0 || p == nullptr)
    throw allocation_error("cannot allocate " + format_bytes(bytes) + " of pageable host memory");
  host_fill_bytes(p, 0, bytes);  // touch every page now, not inside a timed copy
  return p;
}

void check_host_alloc(cudaError_t rc, mem_kind kind, std::size_t bytes, const char* expr) {
  if (rc == cudaSuccess) return;
  if (rc == cudaErrorMemoryAllocation || rc == cudaErrorHostMemoryAlreadyRegistered) {
    (void)cudaGetLastError();
    throw allocation_error("cannot allocate " + format_bytes(bytes) + " of " + std::string(to_name(kind)) +
                           " host memory (" + cudaGetErrorString(rc) + ")");
  }
  throw_cuda_error(rc, expr, __FILE__, __LINE__);
}

}  // namespace

host_buffer::host_buffer(mem_kind kind, std::size_t bytes, std::optional<int> node)
    : kind_(kind), bytes_(bytes), device_(kind == mem_kind::pageable ? 0 : current_device()) {
  // Every page is faulted in below, inside the scope: the binding decides where each one lands.
  numa_bind_scope bound(node);
  try {
    allocate(kind, bytes);
  } catch (...) {
    release();  // no destructor runs for a constructor that throws
    throw;
  }
  if (host_ == nullptr) return;
  numa_node_ = page_node(host_);
  if (node && numa_node_ && *numa_node_ != *node) {
    const int landed = *numa_node_;
    release();
    throw std::runtime_error(std::string(to_name(kind)) + " host memory bound to NUMA node " + std::to_string(*node) +
                             " landed on node " + std::to_string(landed));
  }
}

void host_buffer::allocate(mem_kind kind, std::size_t bytes) {
  switch (kind) {
    case mem_kind::pageable:
      host_ = alloc_pageable(bytes);
      break;
    case mem_kind::pinned:
      check_host_alloc(cudaHostAlloc(&host_, bytes, cudaHostAllocPortable | cudaHostAllocMapped), kind, bytes,
                       "cudaHostAlloc");
      break;
    case mem_kind::write_combined:
      check_host_alloc(cudaHostAlloc(&host_, bytes, cudaHostAllocWriteCombined | cudaHostAllocMapped), kind, bytes,
                       "cudaHostAlloc(WriteCombined)");
      break;
    case mem_kind::mapped:
      check_host_alloc(cudaHostAlloc(&host_, bytes, cudaHostAllocMapped), kind, bytes, "cudaHostAlloc(Mapped)");
      break;
    case mem_kind::registered: {
      host_ = alloc_pageable(bytes);
      const cudaError_t rc = cudaHostRegister(host_, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped);
      if (rc != cudaSuccess) {
        std::free(host_);
        host_ = nullptr;
        check_host_alloc(rc, kind, bytes, "cudaHostRegister");
      }
      break;
    }
    case mem_kind::managed_prefetch:
    case mem_kind::managed_fault:
      check_host_alloc(cudaMallocManaged(&host_, bytes, cudaMemAttachGlobal), kind, bytes, "cudaMallocManaged");
      dev_ = host_;
      break;
    case mem_kind::device:
      throw std::invalid_argument("host_buffer cannot hold device memory; use device_buffer");
  }
  if (host_ == nullptr) return;
  if (kind == mem_kind::pinned || kind == mem_kind::write_combined || kind == mem_kind::mapped ||
      kind == mem_kind::registered) {
    CUDA_CHECK(cudaHostGetDevicePointer(&dev_, host_, 0));
    if (kind != mem_kind::registered) std::memset(host_, 0, bytes);  // fault the pages in before any timing
  } else if (is_managed(kind)) {
    std::memset(host_, 0, bytes);  // first touch on the host: pages start there
  }
}

host_buffer::~host_buffer() {
  release();
}

host_buffer& host_buffer::operator=(host_buffer&& o) noexcept {
  if (this != &o) {
    release();
    kind_ = o.kind_;
    host_ = std::exchange(o.host_, nullptr);
    dev_ = std::exchange(o.dev_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    numa_node_ = std::exchange(o.numa_node_, std::nullopt);
    device_ = o.device_;
  }
  return *this;
}

void host_buffer::release() noexcept {
  if (host_ == nullptr) return;
  if (kind_ == mem_kind::pageable) {
    std::free(host_);
  } else {
    release_cuda_owned();
  }
  host_ = nullptr;
  dev_ = nullptr;
  bytes_ = 0;
  numa_node_.reset();
}

void host_buffer::release_cuda_owned() noexcept {
  device_scope on(device_, std::nothrow);
  switch (kind_) {
    case mem_kind::registered:
      CUDA_CHECK_NOTHROW(cudaHostUnregister(host_));
      std::free(host_);
      break;
    case mem_kind::managed_prefetch:
    case mem_kind::managed_fault:
      CUDA_CHECK_NOTHROW(cudaFree(host_));
      break;
    default:
      CUDA_CHECK_NOTHROW(cudaFreeHost(host_));
      break;
  }
}

buffer_cache& buffer_cache::instance() {
  static buffer_cache cache;
  return cache;
}

host_buffer& buffer_cache::host(mem_kind kind, std::size_t bytes, buffer_slot slot, numa_place place) {
  return host_on(current_device(), kind, bytes, slot, place);
}

device_buffer& buffer_cache::device(std::size_t bytes, buffer_slot slot) {
  return device_on(current_device(), bytes, slot);
}

host_buffer& buffer_cache::host_on(int device, mem_kind kind, std::size_t bytes, buffer_slot slot, numa_place place) {
  const host_key key = std::make_tuple(device, kind, slot, place);
  const std::uint64_t use = ++uses_;
  auto it = host_.find(key);
  if (it != host_.end() && it->second.buffer.bytes() >= bytes) {
    it->second.last_use = use;
    return it->second.buffer;
  }
  if (it != host_.end()) host_.erase(it);  // free the small one before asking for the large one
  const std::optional<int> node = host_node_for(device, place);
  if (place == numa_place::remote && !node)
    throw std::runtime_error("no NUMA node remote from GPU " + std::to_string(device) + ": " +
                             numa_unbound_reason(device).value_or("no other node has memory"));
  std::vector<int> in_use = case_devices_;
  in_use.push_back(device);
  make_room(in_use, bytes);
  device_scope on(device);
  host_buffer fresh(kind, bytes, node);
  host_entry& e = host_[key];
  e.buffer = std::move(fresh);
  e.last_use = use;
  return e.buffer;
}

device_buffer& buffer_cache::device_on(int device, std::size_t bytes, buffer_slot slot) {
  const auto key = std::make_pair(device, slot);
  auto it = device_.find(key);
  if (it != device_.end() && it->second.bytes() >= bytes) return it->second;
  if (it != device_.end()) device_.erase(it);
  device_scope on(device);
  device_buffer fresh(bytes);
  return device_[key] = std::move(fresh);
}

void buffer_cache::clear() {
  host_.clear();
  device_.clear();
}

void buffer_cache::keep_within(std::size_t host_limit, const std::vector<int>& case_devices) {
  host_limit_ = host_limit;
  case_devices_ = case_devices;
  make_room(case_devices_, 0);
}

void buffer_cache::make_room(const std::vector<int>& in_use, std::size_t incoming_bytes) {
  if (!host_limit_) return;
  std::vector<held_buffer> held;
  std::vector<host_key> keys;
  for (const auto& [key, entry] : host_) {
    held.push_back({std::get<0>(key), entry.buffer.bytes(), entry.last_use});
    keys.push_back(key);
  }
  for (std::size_t i : buffers_to_free(held, in_use, incoming_bytes, *host_limit_)) host_.erase(keys[i]);
}

namespace {

// The GPU's node as sysfs reports it, once per device; -1 where it does not.
int gpu_node_of(int device) {
  static std::mutex m;
  static std::map<int, int> nodes;
  std::lock_guard<std::mutex> lock(m);
  auto it = nodes.find(device);
  if (it != nodes.end()) return it->second;
  char bus[32] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  return nodes[device] = parse_numa_node(gpu_numa_node(bus));
}

}  // namespace

std::optional<int> host_node_for(int device, numa_place place) {
  static const std::vector<int> nodes = host_memory_nodes();
  if (nodes.size() < 2 || !numa_binding_available() || numa_user_policy()) return std::nullopt;
  return numa_target(place, gpu_node_of(device), nodes);
}

std::optional<std::string> numa_unbound_reason(int device) {
  if (!numa_binding_available()) return "built without libnuma, or the kernel lacks NUMA support";
  if (host_memory_nodes().size() < 2) return "one node";
  if (numa_user_policy()) return "the process started with a memory policy of its own (numactl?), kept";
  if (!host_node_for(device, numa_place::local))
    return "GPU " + std::to_string(device) + "'s node is not reported, or has no memory";
  return std::nullopt;
}

std::string numa_binding_fact(int device) {
  if (const auto why = numa_unbound_reason(device)) return "none: " + *why;
  return "node " + std::to_string(*host_node_for(device, numa_place::local));
}

}  // namespace gpu_bench
