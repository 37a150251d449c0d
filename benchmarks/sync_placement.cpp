// SyncPlacement: the same GPU work timed with a host clock four ways (synchronise before starting the
// clock, after the work, both, neither) against CUDA events around the work. Each iteration first queues
// ten runs of the work unsynchronised, as a warm-up loop or earlier code would, so a missing "before" wait
// shows. Manual time is the event time; bytes are not counted.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "fixtures/cuda_check.hpp"
#include "fixtures/failures.hpp"
#include "fixtures/host_buffer.hpp"
#include "fixtures/pattern.hpp"
#include "fixtures/registry.hpp"
#include "fixtures/verify.hpp"
#include "kernels/kernels.hpp"

namespace gpu_bench {
namespace {

enum class op_kind { add, copy };
enum class placement { both, before, after, none, events };

constexpr std::size_t kAddElements = 1u << 20;  // two 1M-float vectors
constexpr std::size_t kCopyBytes = 64u << 20;   // a 64 MiB pinned copy
constexpr int kPending = 10;                    // work queued before each measurement

std::string_view to_string(op_kind o) {
  return o == op_kind::add ? "add" : "copy";
}
std::string_view to_string(placement p) {
  switch (p) {
    case placement::both:
      return "both";
    case placement::before:
      return "before";
    case placement::after:
      return "after";
    case placement::none:
      return "none";
    case placement::events:
      return "events";
  }
  return "unknown";
}

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

  double host_s = 0, event_s = 0;
  long long n = 0;
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
  (void)once();
  for (auto _ : state) {
    const auto [host, ev] = once();
    state.SetIterationTime(ev);
    host_s += host;
    event_s += ev;
    ++n;
  }
  if (const std::string bad = verify(); !bad.empty()) return fail_case(state, bad);
  const double host_us = host_s / static_cast<double>(n) * 1e6;
  const double event_us = event_s / static_cast<double>(n) * 1e6;
  state.counters["host_measured_us"] = host_us;
  state.counters["event_us"] = event_us;
  state.counters["error_pct"] = (host_us - event_us) / event_us * 100.0;
  state.SetLabel("ungated");
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
    [] {
      for (op_kind op : {op_kind::add, op_kind::copy})
        for (placement p : {placement::both, placement::before, placement::after, placement::none, placement::events}) {
          case_name name("SyncPlacement");
          name.add("op", to_string(op)).add("sync", to_string(p));
          register_case(name, [op, p](benchmark::State& st) { run_sync_placement(st, op, p); });
        }
    },
}};

}  // namespace
}  // namespace gpu_bench
