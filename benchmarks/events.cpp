// Events: what CUDA events cost the host (record, query, synchronize on a completed event), with timing on
// and off (cudaEventDisableTiming); the GPU-side latency of handing work from one stream to another through
// an event; and the resolution of cudaEventElapsedTime. For the host-cost ops manual time is the host
// time of one call; for the GPU ops it is event time.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "harness/cuda/check.hpp"
#include "harness/measure/gate.hpp"
#include "harness/measure/loop.hpp"
#include "harness/measure/streams.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/registry.hpp"
#include "kernels/kernels.hpp"

namespace gpu_bench {
namespace {

enum class event_op { record, query, synchronize, wait_cross_stream, elapsed_resolution };
}  // namespace
template <>
inline constexpr enum_entries<event_op, 5> enum_names<event_op> = {
    {{event_op::record, "record"},
     {event_op::query, "query"},
     {event_op::synchronize, "synchronize"},
     {event_op::wait_cross_stream, "wait_cross_stream"},
     {event_op::elapsed_resolution, "elapsed_resolution"}}};
namespace {

void run_host_cost(benchmark::State& state, event_op op, bool timing) {
  using clock = std::chrono::steady_clock;
  cuda_stream s;
  cuda_event e(timing ? cudaEventDefault : cudaEventDisableTiming);
  e.record(s.get());
  s.synchronize();
  auto once = [&] {
    const auto t0 = clock::now();
    switch (op) {
      case event_op::record:
        e.record(s.get());
        break;
      case event_op::query:
        CUDA_CHECK(cudaEventQuery(e.get()));
        break;
      default:
        CUDA_CHECK(cudaEventSynchronize(e.get()));
        break;
    }
    const double t = std::chrono::duration<double>(clock::now() - t0).count();
    if (op == event_op::record) s.synchronize();  // keep the queue empty: each call measured alike
    return t;
  };
  // A completed event must read as complete: every query returns cudaSuccess, or CUDA_CHECK fails the case.
  case_plan plan;
  plan.timer = timer_kind::host_clock;
  plan.measure = [&] { return sample{once()}; };
  (void)run_case(state, plan);
}

// The GPU's hand-off latency: stream A finishes a kernel and records event H; stream B waits on H. The
// time from A's timestamp just before H to B's first timestamp after the wait. (A timestamp taken just
// after H came out later than B's by 0.4 us on an H100 when H was a non-timing event: B can pass before
// A's next event is written, so the reference must come before H.)
void run_wait_cross_stream(benchmark::State& state, bool timing) {
  stream_set& ss = stream_set::cached(2);
  cuda_event handoff(timing ? cudaEventDefault : cudaEventDisableTiming);
  cuda_event before_a, after_b;
  device_buffer& d = buffer_cache::instance().device(sizeof(unsigned), buffer_slot::h2d);
  unsigned* mark = static_cast<unsigned*>(d.data());
  auto enqueue = [&] {
    kernels::busy(1, 32, 2'000, mark, 1, ss.origin());
    before_a.record(ss.origin());
    handoff.record(ss.origin());
    CUDA_CHECK(cudaStreamWaitEvent(ss[1], handoff.get(), 0));
    after_b.record(ss[1]);
  };
  double worst = 0;
  case_plan plan;
  plan.measure = [&] {
    (void)ss.measure(true, enqueue);
    const double t = elapsed_seconds(before_a, after_b);
    worst = std::max(worst, t);
    return sample{std::max(t, 0.0)};
  };
  plan.verify = [&] {
    if (worst < 1e-3) return std::string();
    return "hand-off took " + std::to_string(worst * 1e6) + " us: B did not follow A";
  };
  const auto t = run_case(state, plan);
  if (!t) return;
  state.counters["handoff_us"] = t->time_s() * 1e6;
}

// Pairs of events recorded back to back: the smallest non-zero difference cudaEventElapsedTime reports.
void run_resolution(benchmark::State& state) {
  cuda_stream s;
  constexpr int kPairs = 1000;
  std::vector<cuda_event> ev;
  for (int i = 0; i < 2 * kPairs; ++i) ev.emplace_back();
  double resolution = INFINITY;
  case_plan plan;
  plan.measure = [&] {
    for (int i = 0; i < kPairs; ++i) {
      ev[2 * i].record(s.get());
      kernels::empty(s.get());
      ev[2 * i + 1].record(s.get());
    }
    s.synchronize();
    std::vector<double> t;
    for (int i = 0; i < kPairs; ++i) t.push_back(elapsed_seconds(ev[2 * i], ev[2 * i + 1]));
    std::sort(t.begin(), t.end());
    for (std::size_t i = 1; i < t.size(); ++i)
      if (t[i] > t[i - 1]) resolution = std::min(resolution, t[i] - t[i - 1]);
    double total = 0;
    for (double x : t) total += x;
    return sample{total};  // one sample is the whole batch of pairs
  };
  plan.verify = [&] {
    return std::isfinite(resolution) ? std::string()
                                     : std::string("every elapsed time was the same: no resolution seen");
  };
  const auto t = run_case(state, plan);
  if (!t) return;
  state.counters["resolution_us"] = resolution * 1e6;
  state.counters["empty_kernel_us"] = t->time_s() / kPairs * 1e6;
}

const family_registration registration{[](family_descriptor& f) {
  f.name = "Events";
  f.summary = "what events cost the host, how fast a cross-stream hand-off is, how fine event timing is";
  f.axes = {{"op", "{record,query,synchronize,wait_cross_stream,elapsed_resolution}"}, {"timing", "{on,off}"}};
  f.help = f.name_pattern({{"op", "{record,query,synchronize}"}, "timing"}) +
           "    the host time of one call (manual time is host time here): record on an idle stream, query and\n"
           "    synchronize on a completed event; timing:off uses cudaEventDisableTiming.\n" +
           f.name_pattern({{"op", "wait_cross_stream"}, "timing"}) +
           "    GPU time from stream A's timestamp just before the hand-off event to stream B passing\n"
           "    cudaStreamWaitEvent on it (counter handoff_us); timing:off makes the hand-off event a non-timing "
           "one.\n" +
           f.name_pattern({{"op", "elapsed_resolution"}, {"timing", "on"}}) +
           "    1000 event pairs around an empty kernel per iteration (manual time: their sum): resolution_us, the\n"
           "    smallest non-zero step between the elapsed times seen, and empty_kernel_us, their mean.\n";
  f.headline = "real_time";
  f.unit = "us";
  f.better_is = better::lower;
  f.kind = headline_kind::time;
  f.host_link = "no";
  f.host_side = "op:record|op:query|op:synchronize";
  f.fast_cpu = "yes";
  f.machine_variance = "yes";
  f.small_rounds = "yes";
  f.machine_variance_cause = kHostCpuStateCause;
  f.plot = "series=timing";
  f.scope = family_scope::single_gpu;
  f.smoke = "^Events/";
  f.register_cases = [] {
    for (event_op op : {event_op::record, event_op::query, event_op::synchronize})
      for (bool timing : {true, false}) {
        case_name name("Events");
        name.add("op", op).add("timing", timing ? "on" : "off");
        register_case(name, [op, timing](benchmark::State& st) { run_host_cost(st, op, timing); });
      }
    for (bool timing : {true, false}) {
      case_name name("Events");
      name.add("op", event_op::wait_cross_stream).add("timing", timing ? "on" : "off");
      register_case(name, [timing](benchmark::State& st) { run_wait_cross_stream(st, timing); });
    }
    case_name name("Events");
    name.add("op", event_op::elapsed_resolution).add("timing", "on");
    register_case(name, [](benchmark::State& st) { run_resolution(st); });
  };
}};

}  // namespace
}  // namespace gpu_bench
