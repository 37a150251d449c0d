// AllHost: every visible GPU copies N bytes between its own pinned host buffer and its memory at once
// (h2d or d2h), one stream per GPU; N counted per GPU. Each GPU's time from events on its own stream; the
// aggregate time is the longest of them, every GPU having been held by its gate and released together.
// gbps = N x GPUs / aggregate time, gbps_gpu{i} = N / GPU i's own time, GB = 1e9 bytes.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/all_host/model.hpp"
#include "fixtures/context/profile.hpp"
#include "fixtures/cuda/check.hpp"
#include "fixtures/cuda/device.hpp"
#include "fixtures/measure/loop.hpp"
#include "fixtures/measure/rates.hpp"
#include "fixtures/measure/streams.hpp"
#include "fixtures/measure/verify.hpp"
#include "fixtures/memory/host_buffer.hpp"
#include "fixtures/memory/pattern.hpp"
#include "fixtures/run/failures.hpp"
#include "fixtures/run/options.hpp"
#include "fixtures/run/registry.hpp"

namespace gpu_bench {
namespace {

// One GPU's share: its host and device buffers, and a small pair of its own for priming its copy engine.
struct gpu_lane {
  int device;
  region src, dst, prime_src, prime_dst;
  side src_side, dst_side;
  cudaMemcpyKind kind;

  void copy(const region& from, const region& to, cudaStream_t s) const {
    CUDA_CHECK(cudaMemcpyAsync(kind == cudaMemcpyHostToDevice ? to.dev : to.host,
                               kind == cudaMemcpyHostToDevice ? from.host : from.dev, from.bytes, kind, s));
  }
};

// Pinned host memory (portable, so any GPU may copy it; allocated with its own GPU current) and device
// memory, and priming buffers in the priming slots. Both directions copy between the same pair of each
// GPU's buffers (the h2d slots): each case fills its source and poisons its destination before it starts,
// so a round pins and fills a GPU's 256 MiB once rather than once per direction.
// one_to_all: every GPU reads GPU 0's host buffer; all_to_one: GPU g writes part g of one buffer of GPU 0's.
std::vector<gpu_lane> make_lanes(direction dir, std::size_t n, int gpus, host_pattern pattern) {
  auto& cache = buffer_cache::instance();
  const buffer_slot slot = buffer_slot::h2d;
  const buffer_slot prime_slot = dir == direction::h2d ? buffer_slot::h2d_prime : buffer_slot::d2h_prime;
  const std::size_t small = std::min<std::size_t>(n, 64 << 10);
  char* shared = nullptr;
  char* shared_dev = nullptr;
  if (pattern == host_pattern::all_to_one) {
    // GPU 0's d2h slot, which Transfer's pinned copies out of GPU 0 use too: a round pins it once for both.
    host_buffer& b = cache.host_on(0, mem_kind::pinned, n * static_cast<std::size_t>(gpus), buffer_slot::d2h);
    shared = static_cast<char*>(b.data());
    shared_dev = static_cast<char*>(b.device_ptr());
  }
  std::vector<gpu_lane> lanes;
  for (int g = 0; g < gpus; ++g) {
    region host = region_of(cache.host_on(pattern == host_pattern::one_to_all ? 0 : g, mem_kind::pinned, n, slot), n);
    if (shared)
      host = region{shared + static_cast<std::size_t>(g) * n, shared_dev + static_cast<std::size_t>(g) * n, n};
    const region dev = region_of(cache.device_on(g, n, slot), n);
    const region prime_host = region_of(cache.host_on(g, mem_kind::pinned, small, prime_slot), small);
    const region prime_dev = region_of(cache.device_on(g, small, prime_slot), small);
    if (dir == direction::h2d)
      lanes.push_back(
          {g, host, dev, prime_host, prime_dev, natural_side(mem_kind::pinned), side::gpu, cudaMemcpyHostToDevice});
    else
      lanes.push_back(
          {g, dev, host, prime_dev, prime_host, side::gpu, natural_side(mem_kind::pinned), cudaMemcpyDeviceToHost});
  }
  return lanes;
}

// One stream per GPU, each held by its own GPU's gate and timed by its own GPU's events; the gates open
// together (their flags are written within nanoseconds and each spin kernel sees its flag within about a
// microsecond), so the longest GPU's time stands for the span from the first start to the last end, which
// events on different GPUs cannot measure.
void run_all_host(benchmark::State& state, direction dir, std::uint64_t bytes, int gpus, host_pattern pattern) {
  const std::size_t n = bytes;
  const std::vector<gpu_lane> lanes =
      buffer_cache::instance().acquire_with_retry([&] { return make_lanes(dir, n, gpus, pattern); });
  stream_set& streams = stream_set::cached(device_range(gpus));
  std::uint32_t seed = next_seed();
  auto fill = [&] {
    for (std::size_t g = 0; g < lanes.size(); ++g) {
      const gpu_lane& l = lanes[g];
      device_scope on(l.device);
      fill_pattern(l.src, seed, l.src_side, streams[static_cast<int>(g)]);
      fill_poison(l.dst, seed, l.dst_side, streams[static_cast<int>(g)]);
    }
    streams.synchronize();
  };
  fill();
  case_plan plan;
  plan.reset_output = fill;
  stream_set::hooks hooks;
  hooks.prime = [&](int g) {
    const gpu_lane& l = lanes[static_cast<std::size_t>(g)];
    l.copy(l.prime_src, l.prime_dst, streams[g]);
  };
  plan.measure = [&] {
    return streams.measure(
        true,
        [&] {
          for (std::size_t g = 0; g < lanes.size(); ++g) {
            device_scope on(lanes[g].device);
            lanes[g].copy(lanes[g].src, lanes[g].dst, streams[static_cast<int>(g)]);
          }
        },
        hooks);
  };
  plan.verify = [&] {
    for (std::size_t g = 0; g < lanes.size(); ++g) {
      const gpu_lane& l = lanes[g];
      device_scope on(l.device);
      std::string bad = verify_message(l.dst, seed, l.dst_side, streams[static_cast<int>(g)],
                                       std::string(to_name(dir)) + " destination of GPU " + std::to_string(l.device));
      if (!bad.empty()) return bad;
    }
    return std::string();
  };
  const auto set = run_case(state, plan);
  if (!set) return;
  for (std::size_t g = 0; g < lanes.size(); ++g) {
    const double own_s = set->median_of([g](const sample& s) { return s.spans.at(g); });
    const double gbps = rate_gbps(static_cast<double>(n), own_s);
    const int device = lanes[g].device;
    const device_profile& p = profile_of(device);
    const std::string impossible = beyond_peak(gbps, p.host_link_gbps, p.host_link_name + " peak per direction");
    if (!impossible.empty()) return fail_case(state, "GPU " + std::to_string(device) + ": " + impossible);
    state.counters["gbps_gpu" + std::to_string(device)] = gbps;
  }
  case_rates rates;
  rates.bytes = static_cast<double>(n) * static_cast<double>(lanes.size());
  report_rates(state, *set, rates);
  state.counters["gpus"] = static_cast<double>(lanes.size());
}

const family_registration registration{[](family_descriptor& f) {
  f.name = "AllHost";
  f.summary = "every visible GPU copying to or from the host at once";
  f.axes = {{"dir", "{h2d,d2h}"}, optional_axis("pattern", "{one_to_all,all_to_one}"), {"bytes", "{N}"}};
  f.help = f.name_pattern() +
           "    each GPU copies N bytes between a pinned host buffer of its own and its memory (cudaMemcpyAsync on a\n"
           "    stream of its own), all at once. Each GPU is held by its own gate while the host enqueues, and every\n"
           "    gate opens together; each GPU times its copy with its own events. The aggregate time is the longest\n"
           "    GPU's: events of different GPUs cannot be compared, and this assumes the gates release the GPUs\n"
           "    within microseconds of each other. Where the host has several NUMA nodes, each GPU's host buffer is\n"
           "    bound to that GPU's node. pattern:one_to_all (h2d): every GPU reads the same host buffer;\n"
           "    pattern:all_to_one (d2h): every GPU writes its part of one host buffer.\n"
           "    counters  gbps (N x GPUs / aggregate time, GB = 1e9 B), gbps_gpu{i} (N / GPU i's own time), gpus,\n"
           "              host_blocked_us (all GPUs' enqueues), bytes_per_second.\n"
           "    256 MiB unless --sizes is given. Every visible GPU, whatever --device says; with one GPU it is that\n"
           "    GPU's pinned Transfer.\n";
  f.headline = "gbps";
  f.unit = "GB/s";
  f.better_is = better::higher;
  f.kind = headline_kind::rate;
  f.host_link = "yes";
  f.link_bound = "yes";
  f.plot = "x=bytes;series=dir,pattern";
  f.scope = family_scope::multi_gpu;
  f.smoke = "^AllHost/";
  f.register_cases = [] {
    const int gpus = visible_gpu_count();
    if (gpus < 1) return;
    for (direction d : {direction::h2d, direction::d2h})
      for (host_pattern p :
           {host_pattern::own, d == direction::h2d ? host_pattern::one_to_all : host_pattern::all_to_one})
        for (std::uint64_t n : sizes_or({256u << 20}))
          register_case(
              all_host_name(d, n, p), [d, n, gpus, p](benchmark::State& st) { run_all_host(st, d, n, gpus, p); },
              device_range(gpus));
  };
}};

}  // namespace
}  // namespace gpu_bench
