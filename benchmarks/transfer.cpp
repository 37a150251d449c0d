// Transfer: one copy of N bytes per iteration between host memory of each kind and the GPU (h2d, d2h),
// both ways at once on two streams (bidir, 2N bytes counted), or within the GPU (d2d, N bytes counted once).
// GPU time from CUDA events around the copy, behind the gate except for pageable memory, whose enqueue
// waits for the copy; gbps = bytes moved / GPU time, GB = 1e9 bytes.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fixtures/cuda_check.hpp"
#include "fixtures/failures.hpp"
#include "fixtures/host_buffer.hpp"
#include "fixtures/options.hpp"
#include "fixtures/pattern.hpp"
#include "fixtures/registry.hpp"
#include "fixtures/transfer_model.hpp"
#include "fixtures/verify.hpp"
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
    return verify_message(dst, seed, by, s, std::string(to_string(dir)) + " destination");
  }
};

std::vector<leg> make_legs(const transfer_case& c, int device) {
  auto& cache = buffer_cache::instance();
  const std::size_t n = c.bytes;
  std::vector<leg> legs;
  auto host_leg = [&](direction d, int slot) {
    host_buffer& h = cache.host(c.mem, n, slot);
    const region hr = region_of(h, n);
    const side hs = natural_side(c.mem);
    if (c.mem == mem_kind::managed_prefetch) return leg{d, c.mem, hr, hr, hs, hs, device};
    const region dr = region_of(cache.device(n, slot), n);
    return d == direction::h2d ? leg{d, c.mem, hr, dr, hs, side::gpu, device}
                               : leg{d, c.mem, dr, hr, side::gpu, hs, device};
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

void run_transfer(benchmark::State& state, const transfer_case& c) {
  try {
    const int device = current_options().device;
    std::vector<leg> legs;
    try {
      legs = make_legs(c, device);
    } catch (const allocation_error&) {
      buffer_cache::instance().clear();  // memory may be held by buffers of other kinds: try once more
      legs = make_legs(c, device);
    }
    stream_set streams(static_cast<int>(legs.size()));
    const std::uint32_t seed = next_seed();
    for (std::size_t i = 0; i < legs.size(); ++i) legs[i].fill(seed, streams[static_cast<int>(i)]);

    gate* g = enqueue_may_block(c.mem) ? nullptr : &process_gate();
    if (!g) state.SetLabel("ungated");
    const bool managed = is_managed(c.mem);
    auto prepare = [&] {
      for (std::size_t i = 0; i < legs.size(); ++i) legs[i].reset(streams[static_cast<int>(i)]);
      streams.synchronize();
    };
    const sample_totals t = run_timed_loop(
        state,
        [&] {
          return streams.measure(g,
                                 [&] {
                                   for (std::size_t i = 0; i < legs.size(); ++i)
                                     legs[i].enqueue(streams[static_cast<int>(i)]);
                                 },
                                 {[&] { legs.front().prime(streams.origin()); }, {}});
        },
        managed ? std::function<void()>(prepare) : std::function<void()>());

    for (std::size_t i = 0; i < legs.size(); ++i) {
      const std::string bad = legs[i].verify(seed, streams[static_cast<int>(i)]);
      if (!bad.empty()) return fail_case(state, bad);
    }
    const double moved = transfer_bytes_moved(c);
    state.counters["gbps"] = t.gbps(moved);
    state.counters["host_blocked_us"] = t.mean_host_us();
    state.SetBytesProcessed(static_cast<std::int64_t>(moved * static_cast<double>(t.n)));
  } catch (const std::exception& e) {
    fail_case(state, e.what());
  }
}

const family_registration registration{{
    "Transfer",
    "one copy per iteration: host<->GPU for every host memory kind, both ways at once, and GPU<->GPU",
    "  Transfer/dir:{h2d,d2h,bidir,d2d}/mem:{kind}/bytes:{N}\n"
    "    h2d, d2h   cudaMemcpyAsync for pageable, pinned, write_combined, registered; an SM copy kernel for\n"
    "               mapped; cudaMemPrefetchAsync for managed_prefetch; a kernel faulting the pages over for\n"
    "               managed_fault (h2d only). N bytes counted.\n"
    "    bidir      one h2d and one d2h of N bytes each, at once on two streams; 2N bytes counted.\n"
    "    d2d        cudaMemcpyAsync within the GPU (mem:device); N bytes counted once, though 2N cross\n"
    "               the memory bus (read and write).\n"
    "    counters   gbps (bytes counted / GPU time, GB = 1e9 B), host_blocked_us (mean time the enqueue\n"
    "               held the CPU), bytes_per_second (Google Benchmark's own).\n"
    "    Pageable cases run without the gate (their enqueue waits for the copy) and are labelled ungated.\n",
    [] {
      for (const transfer_case& c : transfer_grid(current_options().sizes))
        register_case(transfer_name(c), [c](benchmark::State& st) { run_transfer(st, c); });
    },
}};

}  // namespace
}  // namespace gpu_bench
