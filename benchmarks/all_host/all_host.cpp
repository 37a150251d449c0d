// AllHost: every visible GPU copies N bytes between its own pinned host buffers and its memory at once: h2d,
// d2h, or both (bidir: an h2d and a d2h copy per GPU, each on its own stream); N counted per copy. Each
// stream's time from events on it; a GPU's time is the longest of its streams', the aggregate time the longest
// GPU's, every GPU having been held by its gate and released together. gbps = N x copies / aggregate time,
// gbps_gpu{i} = N x GPU i's copies / its own time; bidir's gbps_h2d and gbps_d2h add each GPU's N / that
// direction's own time. GB = 1e9 bytes.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/all_host/model.hpp"
#include "harness/context/profile.hpp"
#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"
#include "harness/measure/loop.hpp"
#include "harness/measure/rates.hpp"
#include "harness/measure/streams.hpp"
#include "harness/measure/verify.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/memory/pattern.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/options.hpp"
#include "harness/run/registry.hpp"

namespace gpu_bench {
namespace {

// One copy of one GPU's: its host and device buffers, and a small pair of its own for priming its copy engine.
struct gpu_lane {
  int device;
  direction dir;  // h2d or d2h
  region src, dst, prime_src, prime_dst;
  side src_side, dst_side;

  void copy(const region& from, const region& to, cudaStream_t s) const {
    if (dir == direction::h2d)
      CUDA_CHECK(cudaMemcpyAsync(to.dev, from.host, from.bytes, cudaMemcpyHostToDevice, s));
    else
      CUDA_CHECK(cudaMemcpyAsync(to.host, from.dev, from.bytes, cudaMemcpyDeviceToHost, s));
  }
};

// GPU g's copy in `dir` between `host` and its device buffer in `slot`, primed through its buffers in
// `prime_slot` (pinned host memory, portable so any GPU may copy it, allocated with its own GPU current).
gpu_lane make_lane(int g, direction dir, const region& host, buffer_slot slot, buffer_slot prime_slot) {
  auto& cache = buffer_cache::instance();
  const std::size_t n = host.bytes;
  const std::size_t small = std::min<std::size_t>(n, 64 << 10);
  const region dev = region_of(cache.device_on(g, n, slot), n);
  const region prime_host = region_of(cache.host_on(g, mem_kind::pinned, small, prime_slot), small);
  const region prime_dev = region_of(cache.device_on(g, small, prime_slot), small);
  const side host_side = natural_side(mem_kind::pinned);
  if (dir == direction::h2d) return {g, dir, host, dev, prime_host, prime_dev, host_side, side::gpu};
  return {g, dir, dev, host, prime_dev, prime_host, side::gpu, host_side};
}

// Every GPU's copies, GPU 0 to the last, and for bidir every GPU's h2d copy before every GPU's d2h copy.
// One direction copies between the same pair of each GPU's buffers whichever it is (the h2d slots): each
// case fills its source and poisons its destination before it starts, so a round pins and fills a GPU's
// 256 MiB once rather than once per direction. bidir's d2h copies take the d2h slots, which Transfer's
// pinned copies out of the GPU take too.
// one_to_all: every GPU reads GPU 0's host buffer; all_to_one: GPU g writes part g of one buffer of GPU 0's.
std::vector<gpu_lane> make_lanes(direction dir, std::size_t n, int gpus, host_pattern pattern) {
  auto& cache = buffer_cache::instance();
  std::vector<gpu_lane> lanes;
  if (dir == direction::bidir) {
    for (direction d : {direction::h2d, direction::d2h}) {
      const buffer_slot slot = d == direction::h2d ? buffer_slot::h2d : buffer_slot::d2h;
      const buffer_slot prime = d == direction::h2d ? buffer_slot::h2d_prime : buffer_slot::d2h_prime;
      for (int g = 0; g < gpus; ++g)
        lanes.push_back(make_lane(g, d, region_of(cache.host_on(g, mem_kind::pinned, n, slot), n), slot, prime));
    }
    return lanes;
  }
  const buffer_slot prime_slot = dir == direction::h2d ? buffer_slot::h2d_prime : buffer_slot::d2h_prime;
  char* shared = nullptr;
  char* shared_dev = nullptr;
  if (pattern == host_pattern::all_to_one) {
    // GPU 0's d2h slot, which Transfer's pinned copies out of GPU 0 use too: a round pins it once for both.
    host_buffer& b = cache.host_on(0, mem_kind::pinned, n * static_cast<std::size_t>(gpus), buffer_slot::d2h);
    shared = static_cast<char*>(b.data());
    shared_dev = static_cast<char*>(b.device_ptr());
  }
  for (int g = 0; g < gpus; ++g) {
    region host =
        region_of(cache.host_on(pattern == host_pattern::one_to_all ? 0 : g, mem_kind::pinned, n, buffer_slot::h2d), n);
    if (shared)
      host = region{shared + static_cast<std::size_t>(g) * n, shared_dev + static_cast<std::size_t>(g) * n, n};
    lanes.push_back(make_lane(g, dir, host, buffer_slot::h2d, prime_slot));
  }
  return lanes;
}

// One stream per copy, each held by its own GPU's gate and timed by its own GPU's events; the gates open
// together (their flags are written within nanoseconds and each spin kernel sees its flag within about a
// microsecond), so the longest GPU's time stands for the span from the first start to the last end, which
// events on different GPUs cannot measure.
void run_all_host(benchmark::State& state, direction dir, std::uint64_t bytes, int gpus, host_pattern pattern) {
  const std::size_t n = bytes;
  const std::vector<gpu_lane> lanes =
      buffer_cache::instance().acquire_with_retry([&] { return make_lanes(dir, n, gpus, pattern); });
  std::vector<int> stream_devices;
  for (const gpu_lane& l : lanes) stream_devices.push_back(l.device);
  stream_set& streams = stream_set::cached(stream_devices);
  std::uint32_t seed = next_seed();
  auto fill = [&] {
    for (std::size_t i = 0; i < lanes.size(); ++i) {
      const gpu_lane& l = lanes[i];
      device_scope on(l.device);
      fill_pattern(l.src, seed, l.src_side, streams[static_cast<int>(i)]);
      fill_poison(l.dst, seed, l.dst_side, streams[static_cast<int>(i)]);
    }
    streams.synchronize();
  };
  fill();
  case_plan plan;
  plan.reset_output = fill;
  stream_set::hooks hooks;
  hooks.longest_stream = true;  // a GPU's time is its longest stream's, as Transfer's bidir copy
  hooks.prime = [&](int i) {
    const gpu_lane& l = lanes[static_cast<std::size_t>(i)];
    l.copy(l.prime_src, l.prime_dst, streams[i]);
  };
  plan.measure = [&] {
    return streams.measure(
        true,
        [&] {
          for (std::size_t i = 0; i < lanes.size(); ++i) {
            device_scope on(lanes[i].device);
            lanes[i].copy(lanes[i].src, lanes[i].dst, streams[static_cast<int>(i)]);
          }
        },
        hooks);
  };
  plan.verify = [&] {
    for (std::size_t i = 0; i < lanes.size(); ++i) {
      const gpu_lane& l = lanes[i];
      device_scope on(l.device);
      std::string bad = verify_message(l.dst, seed, l.dst_side, streams[static_cast<int>(i)],
                                       std::string(to_name(l.dir)) + " destination of GPU " + std::to_string(l.device));
      if (!bad.empty()) return bad;
    }
    return std::string();
  };
  const auto set = run_case(state, plan);
  if (!set) return;
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    const gpu_lane& l = lanes[i];
    const double gbps =
        rate_gbps(static_cast<double>(n), set->median_of([i](const sample& s) { return s.spans.at(i); }));
    const device_profile& p = profile_of(l.device);
    const std::string impossible = beyond_peak(gbps, p.host_link_gbps, p.host_link_name + " peak per direction");
    if (!impossible.empty())
      return fail_case(state,
                       "GPU " + std::to_string(l.device) + " " + std::string(to_name(l.dir)) + ": " + impossible);
  }
  // Each GPU's own time in each sample is the longest of its copies' spans (all start as its gate opens).
  for (int g = 0; g < gpus; ++g) {
    std::vector<std::size_t> own;
    for (std::size_t i = 0; i < lanes.size(); ++i)
      if (lanes[i].device == g) own.push_back(i);
    const double own_s = set->median_of([&own](const sample& s) {
      double longest = 0;
      for (std::size_t i : own) longest = std::max(longest, s.spans.at(i));
      return longest;
    });
    state.counters["gbps_gpu" + std::to_string(g)] = rate_gbps(static_cast<double>(n * own.size()), own_s);
  }
  if (dir == direction::bidir) {
    // Each direction: every GPU's N over that copy's own span, added, in each sample (the median of those
    // sums), carried to the rounds' center as the case's time is. A copy that outlasts its GPU's other
    // direction ran its tail alone, at more than it carries while both run: docs/multi_gpu.md.
    const double to_rounds = set->own_time_s() > 0 ? set->time_s() / set->own_time_s() : 1.0;
    for (direction d : {direction::h2d, direction::d2h}) {
      const double sum = set->median_of([&](const sample& s) {
        double gbps = 0;
        for (std::size_t i = 0; i < lanes.size(); ++i)
          if (lanes[i].dir == d) gbps += rate_gbps(static_cast<double>(n), s.spans.at(i));
        return gbps;
      });
      state.counters["gbps_" + std::string(to_name(d))] = sum / to_rounds;
    }
  }
  case_rates rates;
  rates.bytes = static_cast<double>(n) * static_cast<double>(lanes.size());
  report_rates(state, *set, rates);
  state.counters["gpus"] = static_cast<double>(gpus);
}

const family_registration registration{[](family_descriptor& f) {
  f.name = "AllHost";
  f.summary = "every visible GPU copying to or from the host, or both ways, at once";
  f.axes = {{"dir", "{h2d,d2h,bidir}"}, optional_axis("pattern", "{one_to_all,all_to_one}"), {"bytes", "{N}"}};
  f.help = f.name_pattern() +
           "    each GPU copies N bytes between a pinned host buffer of its own and its memory (cudaMemcpyAsync on a\n"
           "    stream of its own), all at once; bidir: each GPU an h2d and a d2h copy of N bytes, each on its own\n"
           "    stream and between buffers of its own. Each GPU is held by its own gate while the host enqueues, and\n"
           "    every gate opens together; each stream is timed by its own GPU's events, and a GPU's time is its\n"
           "    streams' longest. The aggregate time is the longest GPU's: events of different GPUs cannot be\n"
           "    compared, and this assumes the gates release the GPUs within microseconds of each other. Where the\n"
           "    host has several NUMA nodes, each GPU's host buffers are bound to that GPU's node.\n"
           "    pattern:one_to_all (h2d): every GPU reads the same host buffer; pattern:all_to_one (d2h): every GPU\n"
           "    writes its part of one host buffer.\n"
           "    counters  gbps (N x copies / aggregate time, GB = 1e9 B), gbps_gpu{i} (N x GPU i's copies / its own\n"
           "              time), gpus, host_blocked_us (all GPUs' enqueues), bytes_per_second; bidir also gbps_h2d\n"
           "              and gbps_d2h (each GPU's N over that copy's own time, summed over the GPUs; a copy that\n"
           "              outlasts its GPU's other one ran its tail alone).\n"
           "    256 MiB unless --sizes is given. Every visible GPU, whatever --device says; with one GPU it is that\n"
           "    GPU's pinned Transfer.\n";
  f.headline = "gbps";
  f.unit = "GB/s";
  f.better_is = better::higher;
  f.kind = headline_kind::rate;
  f.host_link = "yes";
  f.link_bound = "yes";
  f.link_span = "dir:bidir";
  f.revisions = "2=dir:bidir";  // way 2: a GPU's time is its longest stream's own span, as Transfer's bidir copy
  f.plot = "x=bytes;series=dir,pattern";
  f.scope = family_scope::multi_gpu;
  f.smoke = "^AllHost/";
  f.register_cases = [] {
    const int gpus = visible_gpu_count();
    if (gpus < 1) return;
    for (const all_host_case& c : all_host_grid(sizes_or({256u << 20})))
      register_case(
          all_host_name(c.dir, c.bytes, c.pattern),
          [c, gpus](benchmark::State& st) { run_all_host(st, c.dir, c.bytes, gpus, c.pattern); }, device_range(gpus));
  };
}};

}  // namespace
}  // namespace gpu_bench
