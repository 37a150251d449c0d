// Overlap: copy in, kernel, copy out of N bytes of floats, whole on one stream (serial) or split into S
// chunks over S streams, issued depth first (chunk by chunk) or breadth first (all copies in, all kernels,
// all copies out). Bytes counted: N in + N out. GPU time from the start event on the origin stream to the
// stop event after every stream joined back; the host waits where `sync` says.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include "benchmarks/overlap/bound.hpp"
#include "benchmarks/overlap/model.hpp"
#include "benchmarks/overlap/pipeline.hpp"
#include "harness/measure/loop.hpp"
#include "harness/measure/rates.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/options.hpp"
#include "harness/run/registry.hpp"
#include "harness/run/timeline.hpp"

namespace gpu_bench {
namespace {

void run_overlap(benchmark::State& state, const overlap_case& c) {
  const overlap_buffers b = acquire(c.mem, c.bytes);
  const prime_buffers pb = priming_buffers(c.mem, c.bytes);
  fill_input(b);
  // Built in every round, though only the last measures it: its stream sets are made here, in the same
  // order in every round, and the order streams are made in decides which share a hardware queue.
  bound_stages bound(c, b, pb);
  // The serial baseline, measured before the case (once per process for the cases that share it).
  double serial_s = c.sched == schedule::serial ? 0 : serial_baseline_s(c, b, pb);
  pipeline_run run(c, b, pb);
  case_plan plan = run.plan();
  plan.reset_output = [&] { poison_output(b); };
  double err = 0;
  const double tolerance = 1e-4 + 1e-6 * c.work;
  plan.verify = [&] {
    err = max_error(b, c.work, cudaStreamPerThread);
    if (err <= tolerance) return std::string();
    return "data check failed: max error " + std::to_string(err) + " of out = in + " + std::to_string(c.work) +
           " exceeds " + std::to_string(tolerance);
  };
  poison_output(b);  // the serial baseline wrote outputs too: poison again
  const auto t = run_case(state, plan);
  if (!t) return;
  const paired_bound paired = measure_paired_bound(bound, run, chunks_of(c));
  if (timeline::instance().enabled()) {
    run.record_timeline(current_case_name());
    bound.record_timeline(current_case_name());
  }
  // The serial baseline and this process's own pipeline share its buffers and its moment of the link: the
  // speedup uses this round's median, the headline (gbps) the rounds' mean. The efficiency is the paired
  // turns' own.
  const double own_s = t->own_time_s();
  if (c.sched == schedule::serial) serial_s = own_s;
  const stage_times& stages = paired.fastest;
  const double efficiency = paired.efficiency.efficiency;
  // Above 1 by more than the noise of the stage timings: the bound does not hold, so the model (or the
  // measurement) is wrong, and the case says so rather than report an efficiency nobody should believe.
  if (efficiency > 1.02) {
    add_note(state, "efficiency above 1.02");
    std::fprintf(stderr, "gpu_bench: warning: %s ran faster than its ideal bound (efficiency %.3f)\n",
                 current_case_name().c_str(), efficiency);
  }
  case_rates rates;
  rates.bytes = 2.0 * static_cast<double>(c.bytes);  // in and out
  report_rates(state, *t, rates);
  state.counters["wall_ms"] = t->median_of([](const sample& s) { return s.wall_s; }) * 1e3;
  state.counters["speedup"] = serial_s / own_s;
  state.counters["ideal_ms"] = paired.ideal_s * 1e3;
  state.counters["efficiency"] = efficiency;
  state.counters["efficiency_lo"] = paired.efficiency.lo;
  state.counters["efficiency_hi"] = paired.efficiency.hi;
  state.counters["max_error"] = err;
  state.counters["in_ms"] = stages.in_s * 1e3;
  state.counters["out_ms"] = stages.out_s * 1e3;
  state.counters["both_ms"] = stages.both_s * 1e3;
  state.counters["kernel_ms"] = stages.kernel_s * 1e3;
  state.counters["bidir_in_ms"] = stages.bidir_in_s * 1e3;
  state.counters["bidir_out_ms"] = stages.bidir_out_s * 1e3;
}

const family_registration registration{[](family_descriptor& f) {
  f.name = "Overlap";
  f.summary = "copy in, kernel, copy out: serial, or in chunks over streams in two issue orders";
  f.axes = {{"schedule", "{serial,depth_first,breadth_first}"},
            {"mem", "{pinned,pageable,write_combined,registered}"},
            {"streams", "{1,2,4,8,16,32}"},
            {"bytes", "{N}"},
            {"work", "{W}"},
            {"sync", "{end,per_stream,per_chunk,event_join}"}};
  f.help =
      f.name_pattern({}, "streams") +
      "    serial         whole copy in, one kernel, whole copy out, on one stream (the baseline)\n"
      "    depth_first    for each chunk: copy in, kernel, copy out on its stream\n"
      "    breadth_first  all copies in, then all kernels, then all copies out\n"
      "    work           W repetitions per element of a[i] += sqrt(sin(x)^2 + cos(x)^2)\n"
      "    sync           where the host waits, and on what: end, one cudaDeviceSynchronize after the whole\n"
      "                   sample is enqueued; per_stream, cudaStreamSynchronize on each stream in turn;\n"
      "                   event_join, the origin stream waits on every stream's last event and the host on\n"
      "                   the origin (the join is in the GPU time); per_chunk, the host waits after each\n"
      "                   chunk's operations (ungated: the waits sit between them and kill overlap)\n"
      "    counters  gbps (N in + N out / GPU time), wall_ms (from the first enqueue to the host seeing the\n"
      "              sample done), host_blocked_us, speedup (the serial schedule's time, measured before\n"
      "              this case in the same run / this time), ideal_ms, efficiency (the median over turns of\n"
      "              ideal / that turn's time; efficiency_lo and _hi the lowest and highest turn), max_error,\n"
      "              and the stages, sampled in turns with the case (5 turns, 20 ms at least), each the\n"
      "              fastest of its turns: in_ms, out_ms, kernel_ms (the whole payload in the case's own S\n"
      "              chunks over S streams; or in a turn's pipeline, the union of those operations' spans),\n"
      "              both_ms (each chunk's copy in then its copy out on its stream, in the case's order:\n"
      "              the pipeline without kernels), bidir_in_ms and bidir_out_ms (the whole copy in and the\n"
      "              whole copy out at once, each on a stream of its own: each direction's span; 0 for one\n"
      "              chunk):\n"
      "                ideal = max((in + out) / S + middle,               the copy link\n"
      "                            in / S + kernel + out / S,             the kernels\n"
      "                            in + (kernel + out) / S,               the copies in\n"
      "                            (in + kernel) / S + out)               the copies out\n"
      "                middle = min((S - 1) / S * H(bidir_in, bidir_out), (S - 1) / S * 2 min(in, out),\n"
      "                             both - (in + out) / S)\n"
      "              (each resource's busy time plus the fill and drain it cannot overlap, for S chunks; the\n"
      "              link's middle: the rest of both directions' bytes at the fastest rate the link showed\n"
      "              for them, H the harmonic mean). For S > 1 the copy link is at least\n"
      "                min(first + last + left * middle / (2 (S - 1) / S), both), first = (in + kernel) / S,\n"
      "                last = (kernel + out) / S, left = 2 - first / in - last / out\n"
      "              (one direction idles through the first and the last chunk's kernel). A case above\n"
      "              efficiency 1.02 is marked in its label and warned about on stderr.\n"
      "    The default runs 43 cases around pinned 512 MiB with work 1; --full runs every\n"
      "    combination (2352). --sizes replaces 512 MiB with each size given (and 16 MiB to 1 GiB under --full).\n";
  f.headline = "gbps";
  f.unit = "GB/s";
  f.better_is = better::higher;
  f.kind = headline_kind::rate;
  f.host_link = "yes";
  // Its pageable copies are staged by the CPU, as Transfer's are: on H200s their rounds read up to 41% apart.
  f.machine_variance = "mem:pageable";
  f.machine_variance_cause = kPageableCopyCause;
  f.plot = "x=streams;series=schedule;panel=mem";
  f.scope = family_scope::single_gpu;
  f.smoke = "^Overlap/.*/streams:(1|8)/bytes:65536/work:1/";
  f.register_cases = [] {
    for (const overlap_case& c : overlap_grid(current_options().full, sizes_or({})))
      register_case(overlap_name(c), [c](benchmark::State& st) { run_overlap(st, c); });
  };
}};

}  // namespace
}  // namespace gpu_bench
