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

#include "fixtures/cuda/check.hpp"
#include "fixtures/cuda/device.hpp"
#include "fixtures/run/failures.hpp"
#include "fixtures/context/profile.hpp"
#include "fixtures/memory/host_buffer.hpp"
#include "benchmarks/all_host/model.hpp"
#include "fixtures/run/options.hpp"
#include "fixtures/memory/pattern.hpp"
#include "fixtures/measure/gate.hpp"
#include "fixtures/measure/loop.hpp"
#include "fixtures/run/registry.hpp"
#include "fixtures/measure/verify.hpp"

namespace gpu_bench {
namespace {

// One GPU's share: its host and device buffers, and a stream and events of its own (events on different
// GPUs cannot be compared, so each GPU times itself).
struct gpu_lane {
  int device;
  region src, dst;
  side src_side, dst_side;
  cudaMemcpyKind kind;
  cuda_stream stream;
  cuda_event start, stop;

  void copy(std::size_t n) const {
    CUDA_CHECK(cudaMemcpyAsync(kind == cudaMemcpyHostToDevice ? dst.dev : dst.host,
                               kind == cudaMemcpyHostToDevice ? src.host : src.dev, n, kind, stream.get()));
  }
};

// Pinned host memory (portable, so any GPU may copy it; allocated with its own GPU current) in slot 0 for
// h2d and slot 1 for d2h, as Transfer uses them, and device memory likewise.
std::vector<gpu_lane> make_lanes(direction dir, std::size_t n, int gpus) {
  auto& cache = buffer_cache::instance();
  const int slot = dir == direction::h2d ? 0 : 1;
  std::vector<gpu_lane> lanes;
  for (int g = 0; g < gpus; ++g) {
    const region host = region_of(cache.host_on(g, mem_kind::pinned, n, slot), n);
    const region dev = region_of(cache.device_on(g, n, slot), n);
    device_scope on(g);  // the lane's stream and events belong to its GPU
    if (dir == direction::h2d)
      lanes.push_back({g, host, dev, natural_side(mem_kind::pinned), side::gpu, cudaMemcpyHostToDevice, cuda_stream(),
                       cuda_event(), cuda_event()});
    else
      lanes.push_back({g, dev, host, side::gpu, natural_side(mem_kind::pinned), cudaMemcpyDeviceToHost, cuda_stream(),
                       cuda_event(), cuda_event()});
  }
  return lanes;
}

// One iteration: each GPU's stream closed by its own gate, primed, and its copy enqueued between its
// events; then every gate opens at once. The gates' flags are written one after another within
// nanoseconds and each spin kernel sees its flag within about a microsecond, so the copies start within
// microseconds of each other: the longest per-GPU time stands for the span from the first start to the
// last end, which events on different GPUs cannot measure. `lane_s` receives each GPU's own time.
sample all_at_once(std::vector<gpu_lane>& lanes, std::size_t n, std::vector<double>& lane_s) {
  using clock = std::chrono::steady_clock;
  sample out;
  {
    std::vector<std::unique_ptr<gate::scoped>> held;  // opens every gate on the way out, even on an error
    for (gpu_lane& l : lanes) {
      device_scope on(l.device);
      held.push_back(std::make_unique<gate::scoped>(&process_gate(l.device), l.stream.get()));
      l.copy(std::min<std::size_t>(n, 64 << 10));  // leaves the stream on the engine the measured copy uses
      const auto t0 = clock::now();
      l.start.record(l.stream.get());
      l.copy(n);
      l.stop.record(l.stream.get());
      out.host_s += std::chrono::duration<double>(clock::now() - t0).count();
    }
    held.clear();
  }
  lane_s.clear();
  for (const gpu_lane& l : lanes) {
    device_scope on(l.device);
    lane_s.push_back(elapsed_seconds(l.start, l.stop));
    out.seconds = std::max(out.seconds, lane_s.back());
  }
  for (const gpu_lane& l : lanes) process_gate(l.device).check();
  return out;
}

void run_all_host(benchmark::State& state, direction dir, std::uint64_t bytes, int gpus) {
  const std::size_t n = bytes;
  std::vector<gpu_lane> lanes = buffer_cache::instance().acquire_with_retry([&] { return make_lanes(dir, n, gpus); });
  const std::uint32_t seed = next_seed();
  for (const gpu_lane& l : lanes) {
    // Every gate exists before the first one closes: making one pins memory, which is kept out of the
    // iteration in case pinning waits on a GPU whose stream is held.
    (void)process_gate(l.device);
    device_scope on(l.device);
    fill_pattern(l.src, seed, l.src_side, l.stream.get());
    fill_poison(l.dst, seed, l.dst_side, l.stream.get());
    l.stream.synchronize();
  }
  std::vector<std::vector<double>> lane_times;
  std::vector<double> lane_s;
  case_plan plan;
  plan.measure = [&] {
    const sample s = all_at_once(lanes, n, lane_s);
    lane_times.push_back(lane_s);
    return s;
  };
  plan.verify = [&] {
    for (const gpu_lane& l : lanes) {
      device_scope on(l.device);
      std::string bad = verify_message(l.dst, seed, l.dst_side, l.stream.get(),
                                       std::string(to_name(dir)) + " destination of GPU " + std::to_string(l.device));
      if (!bad.empty()) return bad;
    }
    return std::string();
  };
  const auto set = run_case(state, plan);
  if (!set) return;
  // The timed samples' per-GPU times are the last ones recorded (warm-up comes first).
  const auto timed = static_cast<std::ptrdiff_t>(set->size());
  std::vector<double> own_s(lanes.size(), 0.0);
  for (auto it = lane_times.end() - timed; it != lane_times.end(); ++it)
    for (std::size_t g = 0; g < own_s.size(); ++g) own_s[g] += (*it)[g];
  for (std::size_t g = 0; g < own_s.size(); ++g) {
    const double gbps = own_s[g] > 0 ? static_cast<double>(n) * static_cast<double>(timed) / own_s[g] / 1e9 : 0.0;
    const int device = lanes[g].device;
    const device_profile& p = profile_of(device);
    const std::string impossible = beyond_peak(gbps, p.host_link_gbps, p.host_link_name + " peak per direction");
    if (!impossible.empty()) return fail_case(state, "GPU " + std::to_string(device) + ": " + impossible);
    state.counters["gbps_gpu" + std::to_string(device)] = gbps;
  }
  const double moved = static_cast<double>(n) * static_cast<double>(lanes.size());
  state.counters["gbps"] = moved / set->time_s() / 1e9;
  state.counters["gpus"] = static_cast<double>(lanes.size());
  state.counters["host_blocked_us"] = set->mean_host_s() * 1e6;
  state.SetBytesProcessed(static_cast<std::int64_t>(moved * static_cast<double>(timed)));
}

const family_registration registration{{
    "AllHost",
    "every visible GPU copying to or from the host at once",
    "  AllHost/dir:{h2d,d2h}/bytes:{N}\n"
    "    each GPU copies N bytes between a pinned host buffer of its own and its memory (cudaMemcpyAsync on a\n"
    "    stream of its own), all at once. Each GPU is held by its own gate while the host enqueues, and every\n"
    "    gate opens together; each GPU times its copy with its own events. The aggregate time is the longest\n"
    "    GPU's: events of different GPUs cannot be compared, and this assumes the gates release the GPUs\n"
    "    within microseconds of each other. Where the host has several NUMA nodes, each GPU's host buffer is\n"
    "    bound to that GPU's node.\n"
    "    counters  gbps (N x GPUs / aggregate time, GB = 1e9 B), gbps_gpu{i} (N / GPU i's own time), gpus,\n"
    "              host_blocked_us (all GPUs' enqueues), bytes_per_second.\n"
    "    256 MiB unless --sizes is given. Every visible GPU, whatever --device says; with one GPU it is that\n"
    "    GPU's pinned Transfer.\n",
    {"dir", "bytes"},
    "gbps",
    "GB/s",
    better::higher,
    headline_kind::rate,
    "yes",
    "x=bytes;series=dir",
    family_scope::multi_gpu,
    "^AllHost/",
    [] {
      const int gpus = visible_gpu_count();
      if (gpus < 1) return;
      for (direction d : {direction::h2d, direction::d2h})
        for (std::uint64_t n : sizes_or({256u << 20}))
          register_case(
              all_host_name(d, n), [d, n, gpus](benchmark::State& st) { run_all_host(st, d, n, gpus); },
              device_range(gpus));
    },
}};

}  // namespace
}  // namespace gpu_bench
