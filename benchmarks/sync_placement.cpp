// SyncPlacement: the same GPU work timed with a host clock four ways (synchronise before starting the
// clock, after the work, both, neither) against CUDA events around the work. Each iteration first queues
// ten runs of the work unsynchronised, as a warm-up loop or earlier code would, so a missing "before" wait
// shows. Manual time is the event time; bytes are not counted.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"
#include "harness/measure/loop.hpp"
#include "harness/measure/streams.hpp"
#include "harness/measure/verify.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/memory/pattern.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/registry.hpp"
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

// The work one sample times, on a stream it is given, and the check of what it left behind.
struct op_work {
  std::function<void(cudaStream_t)> run;
  std::function<std::string()> verify;
};

op_work make_work(op_kind op) {
  auto& cache = buffer_cache::instance();
  const std::uint32_t seed = next_seed();
  if (op == op_kind::add) {
    device_buffer& d = cache.device(3 * kAddElements * sizeof(float), buffer_slot::h2d);
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
    return {[=](cudaStream_t s) { kernels::add(c, a, b, kAddElements, s); },
            [=, ha = std::move(ha), hb = std::move(hb)] {
              std::vector<float> hc(kAddElements);
              CUDA_CHECK(cudaMemcpy(hc.data(), c, kAddElements * sizeof(float), cudaMemcpyDeviceToHost));
              for (std::size_t i = 0; i < kAddElements; ++i)
                if (hc[i] != ha[i] + hb[i]) return "data check failed: c[" + std::to_string(i) + "] != a + b";
              return std::string();
            }};
  }
  host_buffer& h = cache.host(mem_kind::pinned, kCopyBytes, buffer_slot::h2d);
  device_buffer& d = cache.device(kCopyBytes, buffer_slot::h2d);
  const region hr = region_of(h, kCopyBytes), dr = region_of(d, kCopyBytes);
  fill_pattern(hr, seed, side::gpu, cudaStreamPerThread);
  fill_poison(dr, seed, side::gpu, cudaStreamPerThread);
  CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  return {[=](cudaStream_t s) { CUDA_CHECK(cudaMemcpyAsync(dr.dev, hr.host, kCopyBytes, cudaMemcpyHostToDevice, s)); },
          [=] { return verify_message(dr, seed, side::gpu, cudaStreamPerThread, "h2d destination"); }};
}

// The op's GPU time by gated events: measured once per GPU and op, it is the reference every placement's
// host reading is compared with (a drained stream before the first event would otherwise put the launch
// gap into some placements' event times and not others').
double reference_s(op_kind op, const op_work& w) {
  return calibrated_once("SyncPlacement/" + std::string(to_name(op)), [&] {
    stream_set& ss = stream_set::cached(1);
    case_plan plan;
    plan.measure = [&ss, &w] { return ss.measure(true, [&] { w.run(ss.origin()); }); };
    return plan;
  });
}

void run_sync_placement(benchmark::State& state, op_kind op, placement where) {
  using clock = std::chrono::steady_clock;
  const op_work w = make_work(op);
  const double reference = reference_s(op, w);
  stream_set& ss = stream_set::cached(1);
  const cudaStream_t s = ss.origin();
  case_plan plan;
  plan.verify = [&] {
    CUDA_CHECK(cudaStreamSynchronize(s));
    return w.verify();
  };
  if (where == placement::events) {
    plan.measure = [&] { return ss.measure(true, [&] { w.run(s); }); };
  } else {
    // Each sample first queues the work unsynchronised, as a warm-up loop or earlier code would, so a
    // missing "before" wait shows; then the host clock around the work, with the waits the placement
    // names.
    plan.timer = timer_kind::host_clock;
    plan.measure = [&] {
      for (int i = 0; i < kPending; ++i) w.run(s);
      if (where == placement::both || where == placement::before) CUDA_CHECK(cudaStreamSynchronize(s));
      const auto t0 = clock::now();
      w.run(s);
      if (where == placement::both || where == placement::after) CUDA_CHECK(cudaStreamSynchronize(s));
      const double host = std::chrono::duration<double>(clock::now() - t0).count();
      CUDA_CHECK(cudaStreamSynchronize(s));  // untimed: drain before the next sample
      return sample{host};
    };
  }
  const auto t = run_case(state, plan);
  if (!t) return;
  const double measured_us = t->time_s() * 1e6;
  const double own_us = t->own_time_s() * 1e6;  // this process's reading, beside this process's reference
  const double event_us = reference * 1e6;
  state.counters["host_measured_us"] = measured_us;
  state.counters["event_us"] = event_us;
  state.counters["error_pct"] = (own_us - event_us) / event_us * 100.0;
}

const family_registration registration{[](family_descriptor& f) {
  f.name = "SyncPlacement";
  f.summary = "where to synchronise when timing GPU work with a host clock, against CUDA events";
  f.axes = {{"op", "{add,copy}"}, {"sync", "{both,before,after,none,events}"}};
  f.help = f.name_pattern() +
           "    add     c = a + b over two 1M-float vectors; copy: one 64 MiB pinned h2d copy\n"
           "    sync    where the host waits around its steady-clock measurement: both (before starting the\n"
           "            clock and after the work), before, after, none; events: the CUDA event time itself\n"
           "    Each sample first queues the work 10 times unsynchronised, as a warm-up loop would.\n"
           "    counters  host_measured_us (what this placement's host clock reads: the median sample, also the\n"
           "              manual time; for events, gated CUDA events around the work), event_us (the reference:\n"
           "              the work's GPU time by gated events, measured once per GPU and op, the same for every\n"
           "              placement), error_pct = (host_measured - event) / event * 100.\n";
  f.headline = "real_time";
  f.unit = "us";
  f.better_is = better::lower;
  f.kind = headline_kind::time;
  f.host_link = "no";
  f.host_side = "sync:both|sync:before|sync:after|sync:none";
  f.fast_cpu = "yes";
  f.machine_variance = "yes";
  f.small_rounds = "yes";
  f.machine_variance_cause = kHostCpuStateCause;
  f.plot = "series=op";
  f.scope = family_scope::single_gpu;
  f.smoke = "^SyncPlacement/";
  f.register_cases = [] {
    for (op_kind op : {op_kind::add, op_kind::copy})
      for (placement p : {placement::both, placement::before, placement::after, placement::none, placement::events}) {
        case_name name("SyncPlacement");
        name.add("op", op).add("sync", p);
        register_case(name, [op, p](benchmark::State& st) { run_sync_placement(st, op, p); });
      }
  };
}};

}  // namespace
}  // namespace gpu_bench
