// Overlap: copy in, kernel, copy out of N bytes of floats, whole on one stream (serial) or split into S
// chunks over S streams, issued depth first (chunk by chunk) or breadth first (all copies in, all kernels,
// all copies out). Bytes counted: N in + N out. GPU time from the start event on the origin stream to the
// stop event after every stream joined back; the host waits where `sync` says.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "benchmarks/overlap/model.hpp"
#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"
#include "harness/measure/gate.hpp"
#include "harness/measure/loop.hpp"
#include "harness/measure/planted.hpp"
#include "harness/measure/rates.hpp"
#include "harness/measure/stats.hpp"
#include "harness/measure/streams.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/memory/pattern.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/options.hpp"
#include "harness/run/registry.hpp"
#include "harness/run/timeline.hpp"
#include "kernels/kernels.hpp"

namespace gpu_bench {
namespace {

// The buffers of one case: input and output on the host, the working copy on the GPU.
struct overlap_buffers {
  host_buffer* in;
  host_buffer* out;
  device_buffer* dev;
  device_buffer* dev2;  // the far end of the copy out while calibrating the bidirectional rate
  std::size_t bytes;

  float* in_f() const { return static_cast<float*>(in->data()); }
  float* out_f() const { return static_cast<float*>(out->data()); }
  float* dev_f() const { return static_cast<float*>(dev->data()); }
};

overlap_buffers acquire(mem_kind mem, std::size_t bytes) {
  auto& cache = buffer_cache::instance();
  return cache.acquire_with_retry([&] {
    return overlap_buffers{&cache.host(mem, bytes, buffer_slot::h2d), &cache.host(mem, bytes, buffer_slot::d2h),
                           &cache.device(bytes, buffer_slot::h2d), &cache.device(bytes, buffer_slot::d2h), bytes};
  });
}

constexpr std::size_t kMinFloatsPerThread = std::size_t{4} << 20;  // below 16 MiB a thread costs more

// Input values that are not all alike and not zero, small enough that adding `work` stays exact-ish.
float input_value(std::size_t i) {
  return static_cast<float>(i % 1024) * 0.25f + 0.5f;
}

// NaN in every output word: an output nobody wrote fails the check.
void poison_output(const overlap_buffers& b) {
  host_fill_bytes(b.out->data(), 0xff, b.bytes);
}

void fill_input(const overlap_buffers& b) {
  float* in = b.in_f();
  parallel_slices(b.bytes / sizeof(float), kMinFloatsPerThread, [in](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) in[i] = input_value(i);
  });
  poison_output(b);
}

// The largest error of out = in + work. On the GPU where it can address both buffers.
double max_error(const overlap_buffers& b, int work, cudaStream_t s) {
  const std::size_t n = b.bytes / sizeof(float);
  CUDA_CHECK(cudaStreamSynchronize(s));
  if (b.in->device_ptr() && b.out->device_ptr()) {
    const scratch_word bits = device_scratch_word();
    *static_cast<volatile unsigned*>(bits.host) = 0;
    kernels::max_add_error(static_cast<const float*>(b.in->device_ptr()),
                           static_cast<const float*>(b.out->device_ptr()), n, static_cast<float>(work),
                           static_cast<unsigned*>(bits.dev), s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    float worst = 0;
    const unsigned v = *static_cast<volatile unsigned*>(bits.host);
    std::memcpy(&worst, &v, sizeof worst);
    return worst;
  }
  const float* in = b.in_f();
  const float* out = b.out_f();
  std::mutex m;
  double worst = 0;
  parallel_slices(n, kMinFloatsPerThread, [&](std::size_t first, std::size_t last) {
    double mine = 0;
    for (std::size_t i = first; i < last; ++i) {
      const double err = std::fabs(static_cast<double>(out[i]) - in[i] - work);
      if (!(err <= mine)) mine = std::isnan(err) ? INFINITY : err;
    }
    const std::lock_guard<std::mutex> lock(m);
    worst = std::max(worst, mine);
  });
  return worst;
}

// Host and device memory the priming copies use.
struct prime_buffers {
  void* host;
  void* dev;
  std::size_t bytes;
};

int chunks_of(const overlap_case& c) {
  return c.sched == schedule::serial ? 1 : c.streams;
}

// Enqueues one sample of a case: the ops in the schedule's order, each on its chunk's stream, with the
// host waits that `sync` asks for inside the enqueue.
struct pipeline {
  const overlap_case& c;
  const overlap_buffers& b;
  stream_set& streams;
  op_recorder& rec;
  std::vector<std::pair<std::size_t, std::size_t>> chunks;
  // Events around every chunk's copy in, kernel and copy out, when set (in a sample of the paired turns of
  // its own, never in a sample whose time is reported): the spans of the pipeline's own operations, one more
  // turn of the bound's stages (own_ops_turn). Each op's pair sits on the op's own stream, just before and
  // just after it; still they slow the pipeline they bracket (measure_paired_bound says by how much).
  struct op_marks {
    explicit op_marks(int chunks) {
      for (int op = 0; op < 3; ++op) {
        begin[op].resize(static_cast<std::size_t>(chunks));
        end[op].resize(static_cast<std::size_t>(chunks));
      }
    }
    std::vector<cuda_event> begin[3], end[3];  // copy in, kernel, copy out; one of each per chunk

    // After the sample completed: every op's [begin, end) in seconds from the first chunk's copy in. The
    // union of a kind's spans is the same from any common reference, so one whose events came before that
    // copy's (another stream's) changes nothing.
    op_spans spans() const {
      op_spans s;
      std::vector<std::pair<double, double>>* kinds[3] = {&s.in, &s.kernel, &s.out};
      const cuda_event& zero = begin[0].front();
      for (int op = 0; op < 3; ++op)
        for (std::size_t c = 0; c < begin[op].size(); ++c)
          kinds[op]->emplace_back(elapsed_seconds(zero, begin[op][c]), elapsed_seconds(zero, end[op][c]));
      return s;
    }
  };
  op_marks* marks = nullptr;

  cudaStream_t stream_of(int chunk) const { return streams[chunk % streams.size()]; }
  void mark(int op, bool end, int chunk) {
    if (marks) (end ? marks->end : marks->begin)[op].at(static_cast<std::size_t>(chunk)).record(stream_of(chunk));
  }

  // One chunk's copy: in, host to device, or out, device to host.
  void copy(int i, bool in) {
    const std::size_t lo = chunks[static_cast<std::size_t>(i)].first, hi = chunks[static_cast<std::size_t>(i)].second;
    float* dst = in ? b.dev_f() + lo : b.out_f() + lo;
    const float* src = in ? b.in_f() + lo : b.dev_f() + lo;
    rec.run(stream_of(i), i % streams.size(), in ? "h2d" : "d2h", i, "copy", [&] {
      const cudaMemcpyKind kind = in ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
      mark(in ? 0 : 2, false, i);
      CUDA_CHECK(cudaMemcpyAsync(dst, src, (hi - lo) * sizeof(float), kind, stream_of(i)));
      plant_extra_copy(dst, src, (hi - lo) * sizeof(float), kind, stream_of(i));
      mark(in ? 0 : 2, true, i);
    });
  }
  void copy_in(int i) { copy(i, true); }
  void copy_out(int i) { copy(i, false); }
  void kernel(int i) {
    const std::size_t lo = chunks[static_cast<std::size_t>(i)].first, hi = chunks[static_cast<std::size_t>(i)].second;
    rec.run(stream_of(i), i % streams.size(), "kernel", i, "kernel", [&] {
      mark(1, false, i);
      kernels::sincos_work(b.dev_f(), lo, hi - lo, c.work, stream_of(i));
      mark(1, true, i);
    });
  }
  void after_chunk_op(int i) {
    if (c.sync == sync_point::per_chunk) CUDA_CHECK(cudaStreamSynchronize(stream_of(i)));
  }

  void enqueue() {
    const int n = static_cast<int>(chunks.size());
    if (c.sched == schedule::breadth_first) {
      for (int i = 0; i < n; ++i) copy_in(i), after_chunk_op(i);
      for (int i = 0; i < n; ++i) kernel(i), after_chunk_op(i);
      for (int i = 0; i < n; ++i) copy_out(i), after_chunk_op(i);
    } else {
      for (int i = 0; i < n; ++i) {
        copy_in(i);
        kernel(i);
        copy_out(i);
        after_chunk_op(i);
      }
    }
  }

  stream_set::hooks hooks(const prime_buffers& pb) {
    stream_set::hooks h;
    // A small copy in between buffers of its own, on the first stream only: it leaves the copy engine every
    // stream's first copy uses primed. Priming every stream would queue one small copy per stream on that
    // engine, the later ones inside the sample's span.
    h.prime = [this, &pb](int i) {
      if (i == 0) CUDA_CHECK(cudaMemcpyAsync(pb.dev, pb.host, pb.bytes, cudaMemcpyHostToDevice, streams[i]));
    };
    switch (c.sync) {
      case sync_point::end:
        h.wait = [] { CUDA_CHECK(cudaDeviceSynchronize()); };
        break;
      case sync_point::per_stream:
        h.wait = [this] {
          for (int i = 0; i < streams.size(); ++i) CUDA_CHECK(cudaStreamSynchronize(streams[i]));
        };
        break;
      case sync_point::event_join:
        h.join_on_origin = true;  // the origin waits on every stream's last event; the host on the origin's
        break;
      case sync_point::per_chunk:
        break;  // the host already waited after each chunk, inside the enqueue
    }
    return h;
  }
};

// The small buffers the priming copies use, apart from the measured ones.
prime_buffers priming_buffers(mem_kind mem, std::size_t bytes) {
  auto& cache = buffer_cache::instance();
  const std::size_t n = std::min<std::size_t>(bytes, 64 << 10);
  return {cache.host(mem, n, buffer_slot::h2d_prime).data(), cache.device(n, buffer_slot::h2d_prime).data(), n};
}

// The case's pipeline, one sample per measure: S chunks over S streams (one for serial).
struct pipeline_run {
  stream_set& streams;
  op_recorder rec;
  pipeline p;
  bool gated;
  stream_set::hooks hooks;

  pipeline_run(const overlap_case& c, const overlap_buffers& b, const prime_buffers& pb)
      : streams(stream_set::cached(chunks_of(c))),
        p{c, b, streams, rec, chunk_bounds(b.bytes / sizeof(float), chunks_of(c))},
        gated(overlap_gated(c)),
        hooks(p.hooks(pb)) {}

  sample once() {
    return streams.measure(
        gated, [&] { p.enqueue(); }, hooks);
  }

  case_plan plan() {
    case_plan plan;
    plan.measure = [this] { return once(); };
    if (!gated) plan.notes.emplace_back("ungated");
    return plan;
  }

  // One more sample, every copy and kernel bracketed by events, into the timeline under `name`.
  void record_timeline(const std::string& name) {
    if (timeline::instance().has_case(name)) return;
    rec.set_recording(true);
    (void)once();
    rec.flush(timeline::instance().begin_case(name), streams.start_event());
  }
};

// What the serial baseline is measured under: a median of a few samples, 30 ms of them at most unless one
// sample is longer.
sampling_rules calibration_rules(int min_samples = 5) {
  sampling_rules r = rules_from_options();
  r.min_samples = min_samples;
  r.budget_s = 0.03;
  r.min_time_s = 0;
  return r;
}

// One stage of the bound: `op` enqueued on a cached set of `streams_needed` streams, each primed by `prime`,
// gated unless `mem` forbids it.
struct stage {
  stream_set& streams;
  bool gated;
  std::function<void(stream_set&)> op;
  stream_set::hooks hooks;

  stage(mem_kind mem, int streams_needed, std::function<void(stream_set&)> op_,
        std::function<void(stream_set&, int)> prime)
      : streams(stream_set::cached(streams_needed)), gated(!enqueue_may_block(mem)), op(std::move(op_)) {
    hooks.prime = [this, prime = std::move(prime)](int i) { prime(streams, i); };
  }
  stage(const stage&) = delete;
  stage& operator=(const stage&) = delete;

  sample measure() {
    return streams.measure(
        gated, [this] { op(streams); }, hooks);
  }
};

// The bound's stages. Four in the case's own chunks over its own streams (a bound measured another way,
// another stream count, can sit above what this schedule achieves, or below it): every chunk's copy in,
// every copy out, every kernel, and the copies of both directions together as the pipeline orders them:
// each chunk's copy in, then its copy out on the same stream, in the case's issue order (the pipeline
// without its kernels). Measured so, the chained stage pays what the pipeline's copies pay: per-copy costs
// that dominate small chunks, the first copy in and the last copy out that nothing can overlap, and streams
// that share a hardware queue (more than CUDA_DEVICE_MAX_CONNECTIONS of them). It is one schedule of those
// copies, though, not a bound: where it happens to run both directions at a lower rate than the pipeline
// does, the pipeline beats it. So a fifth stage, for more than one chunk, times both directions with
// nothing between them: the whole copy in and the whole copy out at once, each on a stream of its own
// (bidir), whose two spans give the rate of both directions together; the link line takes the faster of
// the two rates (model.hpp). The copies in, the copies out and the kernels are one schedule each too, run
// alone, not a bound: a pipeline whose kernels ran faster beside its copies than the kernel stage ran by
// itself would beat the kernels line. So the pipeline's own operations, in each paired turn, count as one
// more turn of those three stages (measure_paired_bound).
struct bound_stages {
  const overlap_buffers& b;
  int ways;
  std::vector<std::pair<std::size_t, std::size_t>> parts;
  op_recorder rec;  // brackets the stages' copies while their timeline is recorded
  stage in, out, both, kernel;
  std::unique_ptr<stage> bidir;  // none for one chunk, which overlaps nothing

  bound_stages(const overlap_case& c, const overlap_buffers& buffers, const prime_buffers& pb)
      : b(buffers),
        ways(chunks_of(c)),
        parts(chunk_bounds(buffers.bytes / sizeof(float), ways)),
        in(c.mem, ways, copies(true), prime(true, false, pb)),
        out(c.mem, ways, copies(false), prime(false, true, pb)),
        both(c.mem, ways, chained_copies(c.sched), prime(true, true, pb)),
        kernel(mem_kind::pinned, ways, kernels(c.work), [](stream_set&, int) {}),
        bidir(ways > 1 ? std::make_unique<stage>(c.mem, 2, whole_copies(), prime_each_direction(pb)) : nullptr) {
    // The copy-out stages read dev2, which nothing else writes in an Overlap run: give it defined contents.
    // Found by compute-sanitizer's initcheck (every copy out of it read memory never written).
    CUDA_CHECK(cudaMemsetAsync(b.dev2->data(), 0, b.bytes, cudaStreamPerThread));
    CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  }

  std::pair<std::size_t, std::size_t> range(int w) const {
    const std::size_t lo = parts[static_cast<std::size_t>(w)].first * sizeof(float);
    return {lo, parts[static_cast<std::size_t>(w)].second * sizeof(float) - lo};
  }
  // `len` bytes from `lo` one way, on stream `on` of `s`: in, host to device; out, device to host from dev2,
  // so that it never waits for a copy in's data.
  void copy(stream_set& s, int on, bool inward, std::size_t lo, std::size_t len, int index) {
    rec.run(s[on], on, inward ? "h2d" : "d2h", index, "copy", [&] {
      if (inward)
        CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(b.dev->data()) + lo, static_cast<const char*>(b.in->data()) + lo,
                                   len, cudaMemcpyHostToDevice, s[on]));
      else
        CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(b.out->data()) + lo,
                                   static_cast<const char*>(b.dev2->data()) + lo, len, cudaMemcpyDeviceToHost, s[on]));
    });
  }
  // Chunk w's copy in or out, on stream w.
  void copy_in(stream_set& s, int w) {
    const auto [lo, len] = range(w);
    copy(s, w, true, lo, len, w);
  }
  void copy_out(stream_set& s, int w) {
    const auto [lo, len] = range(w);
    copy(s, w, false, lo, len, w);
  }
  std::function<void(stream_set&)> copies(bool inward) {
    return [this, inward](stream_set& s) {
      for (int w = 0; w < ways; ++w) inward ? copy_in(s, w) : copy_out(s, w);
    };
  }
  std::function<void(stream_set&)> chained_copies(schedule sched) {
    return [this, sched](stream_set& s) {
      if (sched == schedule::breadth_first) {
        for (int w = 0; w < ways; ++w) copy_in(s, w);
        for (int w = 0; w < ways; ++w) copy_out(s, w);
      } else {
        for (int w = 0; w < ways; ++w) copy_in(s, w), copy_out(s, w);
      }
    };
  }
  // The whole payload in on stream 0 and out on stream 1, started together. Whole copies rather than the
  // case's chunks: the stage is for the link's rate, and per-copy costs would only lower it.
  std::function<void(stream_set&)> whole_copies() {
    return [this](stream_set& s) {
      copy(s, 0, true, 0, b.bytes, 0);
      copy(s, 1, false, 0, b.bytes, 0);
    };
  }
  // The first stream primes the engine of each direction the stage copies in (the pipeline primes its
  // copy in only: a bound may start from a better state than the case, never a worse one).
  static std::function<void(stream_set&, int)> prime(bool do_in, bool do_out, const prime_buffers& pb) {
    return [do_in, do_out, pb](stream_set& s, int i) {
      if (i != 0) return;
      if (do_in) CUDA_CHECK(cudaMemcpyAsync(pb.dev, pb.host, pb.bytes, cudaMemcpyHostToDevice, s[i]));
      if (do_out) CUDA_CHECK(cudaMemcpyAsync(pb.host, pb.dev, pb.bytes, cudaMemcpyDeviceToHost, s[i]));
    };
  }
  // Stream 0 primes the engine copying in, stream 1 the one copying out; each in its own half of the
  // priming buffers, as the two may run at once.
  static std::function<void(stream_set&, int)> prime_each_direction(const prime_buffers& pb) {
    return [pb](stream_set& s, int i) {
      const std::size_t half = std::max<std::size_t>(1, pb.bytes / 2);
      if (i == 0) CUDA_CHECK(cudaMemcpyAsync(pb.dev, pb.host, half, cudaMemcpyHostToDevice, s[i]));
      if (i == 1 && pb.bytes > half)
        CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(pb.host) + half, static_cast<const char*>(pb.dev) + half,
                                   pb.bytes - half, cudaMemcpyDeviceToHost, s[i]));
    };
  }
  std::function<void(stream_set&)> kernels(int work) const {
    return [this, work](stream_set& s) {
      for (int w = 0; w < ways; ++w) {
        const auto [lo, hi] = parts[static_cast<std::size_t>(w)];
        kernels::sincos_work(b.dev_f(), lo, hi - lo, work, s[w]);
      }
    };
  }

  // One more sample of the chained and the bidirectional stage, every copy bracketed by events, each into
  // the timeline beside the case's own pipeline: where the pipeline's copies ran faster than the stages'.
  void record_timeline(const std::string& name) {
    record(both, name + " [both stage]");
    if (bidir) record(*bidir, name + " [bidir stage]");
  }
  void record(stage& st, const std::string& row) {
    if (timeline::instance().has_case(row)) return;
    rec.set_recording(true);
    (void)st.measure();
    rec.flush(timeline::instance().begin_case(row), st.streams.start_event());
  }
};

// The bound and the case's own pipeline, sampled in turns (the pipeline, then each stage; again), at least
// five turns and 20 ms: a load on a shared host link that comes and goes then falls on both alike. The
// bound is one figure for every turn, made of each stage's fastest turn (a bound is a best case); the
// efficiency is the median over the turns of that bound over the turn's pipeline, the lowest and highest
// turn its interval (with five turns, the 94% confidence interval of that median). Each turn runs the
// pipeline once more with every chunk's copy in, kernel and copy out bracketed by events (its time is not
// the efficiency's: the events slow it), and the pipeline's own operations count
// as one more turn of the stages of one direction and of the kernel stage (own_ops_turn): the union of its
// kernels' spans is a time in which the GPU ran every kernel of the payload, so a kernel stage that ran
// slower than the pipeline's kernels cannot lift the kernels line above the pipeline; likewise the unions
// of its copies in and of its copies out. The stages of both directions (chained, bidir) keep their own
// turns only, but for one chunk, whose copy in and copy out run alone, their sum. Measured in the round
// that reports it (the last) only.
struct paired_bound {
  stage_times fastest{0, 0, 0, 0};
  double ideal_s = 0;
  paired_efficiency efficiency;
};

// One sample of `measure`, taken twice where it lasts under a millisecond, the second kept: a short sample
// right after another kind of work pays for what that work left behind (another stream's engine, another
// kernel), which its own back-to-back samples never do.
template <typename Measure>
sample settled(Measure measure) {
  const sample first = measure();
  return first.seconds < 1e-3 ? measure() : first;
}

paired_bound measure_paired_bound(bound_stages& st, pipeline_run& run, int chunks) {
  std::vector<stage_times> turns;
  std::vector<double> pipeline_s;
  pipeline::op_marks marks(chunks);
  case_plan plan;
  plan.measure = [&] {
    const double p = settled([&] { return run.once(); }).seconds;
    stage_times turn{
        settled([&] { return st.in.measure(); }).seconds, settled([&] { return st.out.measure(); }).seconds,
        settled([&] { return st.both.measure(); }).seconds, settled([&] { return st.kernel.measure(); }).seconds};
    if (st.bidir) {
      const sample two_ways = settled([&] { return st.bidir->measure(); });
      turn.bidir_in_s = two_ways.spans.at(0);
      turn.bidir_out_s = two_ways.spans.at(1);
    }
    turns.push_back(turn);
    // The pipeline once more with its operations bracketed, for their spans alone: an event between every
    // two operations on 8 or 16 streams slowed the pipeline itself by up to a fifth on an H100 (streams
    // beyond the hardware queues share them, and the events order them), so the efficiency's own pipeline
    // (p above) carries none.
    run.p.marks = &marks;
    const double marked = run.once().seconds;
    run.p.marks = nullptr;
    turns.push_back(own_ops_turn(marks.spans(), chunks));
    pipeline_s.push_back(p);
    return sample(p + marked + turn.in_s + turn.out_s + turn.both_s + turn.kernel_s +
                  std::max(turn.bidir_in_s, turn.bidir_out_s));
  };
  // The case's own samples have just run on these buffers and streams: the turns need no warm-up turn, and
  // a stage slowed by a first use falls in one turn of five, which the fastest does not see.
  plan.already_warm = true;
  sampling_rules rules = calibration_rules(5);
  rules.min_time_s = 0.02;
  rules.budget_s = 0.3;     // five turns, unless one alone outlasts this (then three)
  rules.noise_pct = 100.0;  // and no more than five: the turns are paired, not a median to narrow
  (void)calibrate(plan, rules);
  paired_bound out;
  if (turns.empty()) return out;
  out.fastest = fastest_stages(turns);
  if (planted("overlap_bound")) {
    const bound_lines l = overlap_bound_lines(out.fastest, chunks);
    out.ideal_s = std::max({l.kernels, l.in, l.out});
  } else {
    out.ideal_s = overlap_ideal_s(out.fastest, chunks);
  }
  out.efficiency = efficiency_over_turns(out.ideal_s, pipeline_s);
  return out;
}

// The serial schedule's time for the case's memory kind, bytes and work: the baseline of its speedup,
// measured once per process for every case that shares it.
double serial_baseline_s(const overlap_case& c, const overlap_buffers& b, const prime_buffers& pb) {
  static std::map<std::tuple<int, mem_kind, std::size_t, int>, double> measured;
  const auto key = std::make_tuple(current_device(), c.mem, b.bytes, c.work);
  if (const auto it = measured.find(key); it != measured.end()) return it->second;
  overlap_case serial = c;
  serial.sched = schedule::serial;
  serial.streams = 1;
  serial.sync = sync_point::end;
  pipeline_run baseline(serial, b, pb);
  return measured[key] = calibrate(baseline.plan(), calibration_rules()).time_s();
}

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
