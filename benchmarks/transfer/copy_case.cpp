#include "benchmarks/transfer/copy_case.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "fixtures/cuda/check.hpp"
#include "fixtures/cuda/device.hpp"
#include "fixtures/run/failures.hpp"
#include "fixtures/context/profile.hpp"
#include "fixtures/memory/host_buffer.hpp"
#include "fixtures/memory/pattern.hpp"
#include "fixtures/measure/gate.hpp"
#include "fixtures/measure/streams.hpp"
#include "fixtures/measure/verify.hpp"
#include "kernels/kernels.hpp"

namespace gpu_bench {
namespace {

// One copy in one direction: where it reads, where it writes, and how it is issued for its memory kind.
struct leg {
  direction dir;  // h2d, d2h or d2d
  mem_kind kind;  // the host side's kind (device for d2d)
  region src, dst;
  side src_side, dst_side;
  int device;
  std::optional<int> host_node = std::nullopt;  // the NUMA node of the host side's first page, if known

  bool in_place() const { return kind == mem_kind::managed_prefetch; }  // prefetch moves pages, not bytes

  void fill(std::uint32_t seed, cudaStream_t s) const {
    fill_pattern(src, seed, src_side, s);
    if (!in_place()) fill_poison(dst, seed, dst_side, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
  }

  // Puts managed pages where the copy starts from; untimed.
  void reset(cudaStream_t s) const {
    if (!is_managed(kind)) return;
    cudaMemLocation from{};
    if (dir == direction::h2d) {
      from.type = cudaMemLocationTypeHost;
    } else {
      from.type = cudaMemLocationTypeDevice;
      from.id = device;
    }
    CUDA_CHECK(cudaMemPrefetchAsync(src.dev, src.bytes, from, 0, s));
  }

  void enqueue(cudaStream_t s) const {
    const std::size_t n = src.bytes;
    switch (kind) {
      case mem_kind::mapped:
      case mem_kind::managed_fault:
        kernels::copy(dst.dev, src.dev, n, s);
        return;
      case mem_kind::managed_prefetch: {
        cudaMemLocation to{};
        if (dir == direction::h2d) {
          to.type = cudaMemLocationTypeDevice;
          to.id = device;
        } else {
          to.type = cudaMemLocationTypeHost;
        }
        CUDA_CHECK(cudaMemPrefetchAsync(src.dev, n, to, 0, s));
        return;
      }
      default: {
        const cudaMemcpyKind k = dir == direction::h2d   ? cudaMemcpyHostToDevice
                                 : dir == direction::d2h ? cudaMemcpyDeviceToHost
                                                         : cudaMemcpyDeviceToDevice;
        void* d = dir == direction::d2d || dir == direction::h2d ? dst.dev : dst.host;
        const void* from = dir == direction::d2d || dir == direction::d2h ? src.dev : src.host;
        CUDA_CHECK(cudaMemcpyAsync(d, from, n, k, s));
        return;
      }
    }
  }

  // The same copy over at most 64 KiB of the same buffers: it leaves the stream on the copy engine the
  // measured copy uses. Kernel-driven and managed legs need none (the gate is a kernel; prefetching a
  // prefix would move pages the measurement should move).
  void prime(cudaStream_t s) const {
    if (kind == mem_kind::mapped || is_managed(kind)) return;
    leg small = *this;
    small.src.bytes = small.dst.bytes = std::min<std::size_t>(src.bytes, 64 << 10);
    small.enqueue(s);
  }

  std::string verify(std::uint32_t seed, cudaStream_t s) const {
    // After a prefetch to the GPU the GPU checks; after one to the host, the host does.
    const side by = in_place() ? (dir == direction::h2d ? side::gpu : side::host) : dst_side;
    return verify_message(dst, seed, by, s, std::string(to_name(dir)) + " destination");
  }
};

std::vector<leg> make_legs(const transfer_case& c, int device) {
  auto& cache = buffer_cache::instance();
  const std::size_t n = c.bytes;
  std::vector<leg> legs;
  auto host_leg = [&](direction d, int slot) {
    host_buffer& h = cache.host(c.mem, n, slot, c.numa);
    const region hr = region_of(h, n);
    const side hs = natural_side(c.mem);
    const std::optional<int> node = h.numa_node();
    if (c.mem == mem_kind::managed_prefetch) return leg{d, c.mem, hr, hr, hs, hs, device, node};
    const region dr = region_of(cache.device(n, slot), n);
    return d == direction::h2d ? leg{d, c.mem, hr, dr, hs, side::gpu, device, node}
                               : leg{d, c.mem, dr, hr, side::gpu, hs, device, node};
  };
  switch (c.dir) {
    case direction::h2d:
      legs.push_back(host_leg(direction::h2d, 0));
      break;
    case direction::d2h:
      legs.push_back(host_leg(direction::d2h, 1));
      break;
    case direction::bidir:
      legs.push_back(host_leg(direction::h2d, 0));
      legs.push_back(host_leg(direction::d2h, 1));
      break;
    case direction::d2d:
      legs.push_back(leg{direction::d2d, mem_kind::device, region_of(cache.device(n, 0), n),
                         region_of(cache.device(n, 1), n), side::gpu, side::gpu, device});
      break;
  }
  return legs;
}

}  // namespace

std::optional<sample_set> run_copy_case(benchmark::State& state, const transfer_case& c) {
  const int device = current_device();
  const std::vector<leg> legs = buffer_cache::instance().acquire_with_retry([&] { return make_legs(c, device); });
  stream_set streams(static_cast<int>(legs.size()));
  const std::uint32_t seed = next_seed();
  for (std::size_t i = 0; i < legs.size(); ++i) legs[i].fill(seed, streams[static_cast<int>(i)]);

  gate* g = enqueue_may_block(c.mem) ? nullptr : &process_gate();
  case_plan plan;
  if (!g) plan.notes.emplace_back("ungated");
  if (is_managed(c.mem))
    plan.prepare = [&] {
      for (std::size_t i = 0; i < legs.size(); ++i) legs[i].reset(streams[static_cast<int>(i)]);
      streams.synchronize();
    };
  plan.measure = [&] {
    return streams.measure(
        g,
        [&] {
          for (std::size_t i = 0; i < legs.size(); ++i) legs[i].enqueue(streams[static_cast<int>(i)]);
        },
        {[&] { legs.front().prime(streams.origin()); }, {}});
  };
  plan.verify = [&] {
    for (std::size_t i = 0; i < legs.size(); ++i)
      if (std::string bad = legs[i].verify(seed, streams[static_cast<int>(i)]); !bad.empty()) return bad;
    return std::string();
  };
  const auto set = run_case(state, plan);
  if (!set) return std::nullopt;

  const double moved = transfer_bytes_moved(c);
  const double gbps = moved / set->time_s() / 1e9;
  if (const std::string impossible = beyond_link_peak(c, profile_of(device), gbps); !impossible.empty()) {
    fail_case(state, impossible);
    return std::nullopt;
  }
  state.counters["gbps"] = gbps;
  state.counters["host_blocked_us"] = set->mean_host_s() * 1e6;
  // Where the host side's pages are, read back from the kernel where it can say: the numa axis's proof.
  if (const auto node = legs.front().host_node) state.counters["numa_node"] = *node;
  state.SetBytesProcessed(static_cast<std::int64_t>(moved * static_cast<double>(set->size())));
  return set;
}

}  // namespace gpu_bench
