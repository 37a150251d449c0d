// SyncPlacement: the same GPU work timed with a host clock four ways (synchronise before starting the
// clock, after the work, both, neither) against CUDA events around the work. Each iteration first queues
// ten runs of the work unsynchronised, as a warm-up loop or earlier code would, so a missing "before" wait
// shows. Manual time is the event time; bytes are not counted.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "fixtures/cuda/check.hpp"
#include "fixtures/run/failures.hpp"
#include "fixtures/memory/host_buffer.hpp"
#include "fixtures/memory/pattern.hpp"
#include "fixtures/measure/loop.hpp"
#include "fixtures/run/registry.hpp"
#include "fixtures/measure/verify.hpp"
#include "kernels/kernels.hpp"

namespace gpu_bench {
namespace {

enum class op_kind { add, copy };
enum class placement { both, before, after, none, events };
}  // namespace
template <>
inline constexpr enum_entries<op_kind, 2> enum_names<op_kind> = {{{op_kind::add, "add"}, {op_kind::copy, "copy"}}};
template <>
inline constexpr enum_entries<placement, 5> enum_names<placement> = {{{placement::both, "both"},
                                                                    {placement::before, "before"},
                                                                    {placement::after, "after"},
                                                                    {placement::none, "none"},
                                                                    {placement::events, "events"}}};
namespace {

constexpr std::size_t kAddElements = 1u << 20;  // two 1M-float vectors
constexpr std::size_t kCopyBytes = 64u << 20;   // a 64 MiB pinned copy
constexpr int kPending = 10;                    // work queued before each measurement

void run_sync_placement(benchmark::State& state, op_kind op, placement where) {
  using clock = std::chrono::steady_clock;
  auto& cache = buffer_cache::instance();
  cuda_stream s;
  cuda_event e0, e1;
  std::function<void()> work;
  std::function<std::string()> verify;
  const std::uint32_t seed = next_seed();
  if (op == op_kind::add) {
    device_buffer& d = cache.device(3 * kAddElements * sizeof(float), 0);
    float* a = static_cast<float*>(d.data());
    float* b = a + kAddElements;
    float* c = b + kAddElements;
    std::vector<float> ha(kAddElements), hb(kAddElements);
    for (std::size_t i = 0; i < kAddElements; ++i) {
      ha[i] = static_cast<float>(pattern_word(i, seed) % 1000) * 0.5f;
      hb[i] = static_cast<float>(pattern_word(i, seed + 1) % 1000) * 0.25f;
    }
    CUDA_CHECK(cudaMemcpy(a, ha.data(), kAddElements * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(b, hb.data(), kAddElements * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(c, 0xff, kAddElements * sizeof(float)));
    work = [=, &s] { kernels::add(c, a, b, kAddElements, s.get()); };
    verify = [=, ha = std::move(ha), hb = std::move(hb)] {
      std::vector<float> hc(kAddElements);
      CUDA_CHECK(cudaMemcpy(hc.data(), c, kAddElements * sizeof(float), cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < kAddElements; ++i)
        if (hc[i] != ha[i] + hb[i]) return "data check failed: c[" + std::to_string(i) + "] != a + b";
      return std::string();
    };
  } else {
    host_buffer& h = cache.host(mem_kind::pinned, kCopyBytes, 0);
    device_buffer& d = cache.device(kCopyBytes, 0);
    const region hr = region_of(h, kCopyBytes), dr = region_of(d, kCopyBytes);
    fill_pattern(hr, seed, side::gpu, s.get());
    fill_poison(dr, seed, side::gpu, s.get());
    work = [=, &s] { CUDA_CHECK(cudaMemcpyAsync(dr.dev, hr.host, kCopyBytes, cudaMemcpyHostToDevice, s.get())); };
    verify = [=, &s] { return verify_message(dr, seed, side::gpu, s.get(), "h2d destination"); };
  }
  s.synchronize();

  auto once = [&] {
    for (int i = 0; i < kPending; ++i) work();
    double host = 0;
    if (where == placement::events) {
      e0.record(s.get());
      work();
      e1.record(s.get());
    } else {
      if (where == placement::both || where == placement::before) s.synchronize();
      e0.record(s.get());
      const auto t0 = clock::now();
      work();
      if (where == placement::both || where == placement::after) {
        e1.record(s.get());  // inside the host-timed region only where the host waits for the work
        s.synchronize();
        host = std::chrono::duration<double>(clock::now() - t0).count();
      } else {
        host = std::chrono::duration<double>(clock::now() - t0).count();
        e1.record(s.get());
      }
    }
    s.synchronize();  // untimed: drain before the next iteration
    const double ev = elapsed_seconds(e0, e1);
    return std::make_pair(where == placement::events ? ev : host, ev);
  };
  // extra[0]: the host clock's reading of the same sample.
  case_plan plan;
  plan.measure = [&] {
    const auto [host, ev] = once();
    sample out{ev};
    out.extra[0] = host;
    return out;
  };
  plan.verify = verify;
  plan.notes.emplace_back("ungated");
  const auto t = run_case(state, plan);
  if (!t) return;
  const double host_us = t->mean_of([](const sample& x) { return x.extra[0]; }) * 1e6;
  const double event_us = t->time_s() * 1e6;
  state.counters["host_measured_us"] = host_us;
  state.counters["event_us"] = event_us;
  state.counters["error_pct"] = (host_us - event_us) / event_us * 100.0;
}

const family_registration registration{{
    "SyncPlacement",
    "where to synchronise when timing GPU work with a host clock, against CUDA events",
    "  SyncPlacement/op:{add,copy}/sync:{both,before,after,none,events}\n"
    "    add     c = a + b over two 1M-float vectors; copy: one 64 MiB pinned h2d copy\n"
    "    sync    where the host waits around its steady-clock measurement: both (before starting the\n"
    "            clock and after the work), before, after, none; events: the CUDA event time itself\n"
    "    Each iteration first queues the work 10 times unsynchronised, as a warm-up loop would.\n"
    "    counters  host_measured_us, event_us (events around the same work in the same iteration),\n"
    "              error_pct = (host - event) / event * 100. Manual time is the event time.\n",
    {"op", "sync"},
    "real_time",
    "us",
    better::lower,
    headline_kind::time,
    "no",
    "series=op",
    family_scope::single_gpu,
    "^SyncPlacement/",
    [] {
      for (op_kind op : {op_kind::add, op_kind::copy})
        for (placement p : {placement::both, placement::before, placement::after, placement::none, placement::events}) {
          case_name name("SyncPlacement");
          name.add("op", op).add("sync", p);
          register_case(name, [op, p](benchmark::State& st) { run_sync_placement(st, op, p); });
        }
    },
}};

}  // namespace
}  // namespace gpu_bench
