// HostBlocking: how long one h2d copy of N bytes holds the calling thread, and whether CPU work issued
// after an asynchronous copy overlaps it. The case's time is the copy call's own, by a steady clock: that is
// the family's point, and so its rounds combine it and its interval describes it. The copy's GPU time comes
// from events around it. Its own timer rather than stream_set's: cudaMemcpy runs on the legacy default stream,
// which the events must bracket; the host time is the copy call alone, not the enqueue with its stop event;
// and the CPU work must start after the gate opens. Only the asynchronous copies from pinned memory are
// gated: a copy that waits for the GPU inside its call would wait forever behind a closed gate.
#include <cuda_runtime_api.h>

#include <chrono>
#include <optional>
#include <string>

#include "harness/cuda/check.hpp"
#include "harness/measure/gate.hpp"
#include "harness/measure/loop.hpp"
#include "harness/measure/rates.hpp"
#include "harness/measure/verify.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/memory/pattern.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/options.hpp"
#include "harness/run/registry.hpp"

namespace gpu_bench {
namespace {

enum class mode { sync_copy, async_copy, async_then_cpu_work };
}  // namespace
template <>
inline constexpr enum_entries<mode, 3> enum_names<mode> = {{{mode::sync_copy, "sync_copy"},
                                                            {mode::async_copy, "async_copy"},
                                                            {mode::async_then_cpu_work, "async_then_cpu_work"}}};
namespace {

// The fixed slice of CPU work: arithmetic for 1 ms of steady-clock time, the same for every case.
constexpr double kCpuWorkS = 1e-3;

std::uint64_t cpu_work() {
  using clock = std::chrono::steady_clock;
  const auto until = clock::now() + std::chrono::duration<double>(kCpuWorkS);
  std::uint64_t x = 0x9E3779B97F4A7C15ull;
  while (clock::now() < until)
    for (int i = 0; i < 256; ++i) x ^= (x << 13), x ^= (x >> 7), x ^= (x << 17);
  return x;
}

void run_host_blocking(benchmark::State& state, mem_kind mem, std::uint64_t bytes, mode m) {
  using clock = std::chrono::steady_clock;
  auto& cache = buffer_cache::instance();
  const auto [src, dst] = cache.acquire_with_retry([&] {
    return std::make_pair(&cache.host(mem, bytes, buffer_slot::h2d), &cache.device(bytes, buffer_slot::h2d));
  });
  const region sr = region_of(*src, bytes), dr = region_of(*dst, bytes);
  cuda_stream s;
  cuda_event start, stop;
  const std::uint32_t seed = next_seed();
  fill_pattern(sr, seed, natural_side(mem), s.get());
  fill_poison(dr, seed, side::gpu, s.get());
  s.synchronize();
  // sync_copy uses cudaMemcpy, which runs on the legacy default stream: time it there.
  const cudaStream_t timed = m == mode::sync_copy ? cudaStream_t{nullptr} : s.get();
  // The gate holds the copy until the call has returned, so its GPU time excludes the launch; only where
  // the call cannot wait for the GPU (an asynchronous copy from pinned memory): the others stay ungated.
  gate* g = m != mode::sync_copy && !enqueue_may_block(mem) ? &process_gate() : nullptr;
  std::uint64_t sink = 0;
  auto once = [&] {
    std::optional<gate::scoped> held;
    if (g) held.emplace(g, timed);
    CUDA_CHECK(cudaEventRecord(start.get(), timed));
    const auto t0 = clock::now();
    if (m == mode::sync_copy) {
      CUDA_CHECK(cudaMemcpy(dr.dev, sr.host, bytes, cudaMemcpyHostToDevice));
    } else {
      CUDA_CHECK(cudaMemcpyAsync(dr.dev, sr.host, bytes, cudaMemcpyHostToDevice, timed));
    }
    const auto t1 = clock::now();
    CUDA_CHECK(cudaEventRecord(stop.get(), timed));
    held.reset();  // opens the gate
    if (m == mode::async_then_cpu_work) sink += cpu_work();
    const auto t2 = clock::now();
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    const auto t3 = clock::now();
    return std::make_tuple(std::chrono::duration<double>(t1 - t0).count(),
                           std::chrono::duration<double>(t3 - t0).count(),
                           std::chrono::duration<double>(t2 - t1).count());
  };
  // seconds: time inside the copy call; wall_s: from the call to the completion the host sees; extra[0]: the
  // CPU work's own time; extra[1]: the copy's GPU time.
  case_plan plan;
  plan.timer = timer_kind::host_clock;
  plan.reset_output = [&] {
    fill_poison(dr, seed, side::gpu, s.get());
    s.synchronize();
  };
  plan.measure = [&] {
    const auto [blocked, total, cpu] = once();
    sample out{blocked, blocked};
    if (g) g->check();
    out.wall_s = total;
    out.extra[0] = cpu;
    out.extra[1] = elapsed_seconds(start, stop);
    return out;
  };
  plan.verify = [&] { return verify_message(dr, seed, side::gpu, s.get(), "h2d destination"); };
  if (!g) plan.notes.emplace_back("ungated");
  const auto t = run_case(state, plan);
  benchmark::DoNotOptimize(sink);
  if (!t) return;
  case_rates rates;
  rates.bytes = static_cast<double>(bytes);
  rates.gbps = false;
  rates.host_blocked = host_time::none;  // the case's time, over its rounds
  report_rates(state, *t, rates);
  state.counters["host_blocked_us"] = t->time_s() * 1e6;
  state.counters["copy_gpu_us"] = t->median_of([](const sample& x) { return x.extra[1]; }) * 1e6;
  state.counters["total_us"] = t->median_of([](const sample& x) { return x.wall_s; }) * 1e6;
  state.counters["cpu_work_us"] = t->median_of([](const sample& x) { return x.extra[0]; }) * 1e6;
}

const family_registration registration{[](family_descriptor& f) {
  f.name = "HostBlocking";
  f.summary = "how long one h2d copy holds the CPU, and whether CPU work after an async copy overlaps it";
  f.axes = {{"mem", "{pageable,pinned}"}, {"bytes", "{N}"}, {"mode", "{sync_copy,async_copy,async_then_cpu_work}"}};
  f.help = f.name_pattern() +
           "    sync_copy            cudaMemcpy\n"
           "    async_copy           cudaMemcpyAsync on a created stream, then a wait on its stop event\n"
           "    async_then_cpu_work  cudaMemcpyAsync, then 1 ms of CPU arithmetic, then the wait\n"
           "    counters  host_blocked_us (time inside the copy call by a steady clock, also the manual time; over\n"
           "              rounds, their center), then the median sample's copy_gpu_us (the copy's GPU time by\n"
           "              events), total_us (from the call to the copy's completion seen by the host) and\n"
           "              cpu_work_us. The asynchronous pinned copies are held by the gate until their call\n"
           "              returns; cudaMemcpy and pageable copies wait for the GPU inside the call: ungated.\n"
           "              Overlap shows as total_us near max(copy, cpu_work_us) rather than their sum.\n"
           "    sizes 64 KiB, 1 MiB, 16 MiB, 256 MiB by default; --sizes gives others.\n";
  f.headline = "host_blocked_us";
  f.unit = "us";
  f.better_is = better::lower;
  f.kind = headline_kind::time;
  f.host_link = "yes";
  f.host_side = "yes";
  f.fast_cpu = "yes";
  f.machine_variance = "yes";
  f.host_rounds = "yes";
  // Under 256 MiB a case costs milliseconds a round, so it rides the link rounds (five rounds); the copies of
  // 256 MiB take --host_rounds.
  f.small_rounds = "yes";
  f.small_rounds_below = 256ull << 20;
  f.machine_variance_cause = kHostCpuStateCause;
  f.plot = "x=bytes;series=mode;panel=mem";
  f.scope = family_scope::single_gpu;
  f.smoke = "^HostBlocking/";
  f.register_cases = [] {
    const std::vector<std::uint64_t> sizes = sizes_or({64u << 10, 1u << 20, 16u << 20, 256u << 20});
    for (mem_kind mem : {mem_kind::pageable, mem_kind::pinned})
      for (std::uint64_t n : sizes)
        for (mode m : {mode::sync_copy, mode::async_copy, mode::async_then_cpu_work}) {
          case_name name("HostBlocking");
          name.add("mem", mem).add("bytes", n).add("mode", m);
          register_case(name, [mem, n, m](benchmark::State& st) { run_host_blocking(st, mem, n, m); });
        }
  };
}};

}  // namespace
}  // namespace gpu_bench
