#pragma once
// Overlap's bound, measured: the stages the ideal time is made of (model.hpp), each on the case's own chunks
// and streams, sampled in turns with the case's pipeline.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/overlap/model.hpp"
#include "benchmarks/overlap/pipeline.hpp"
#include "harness/cuda/check.hpp"
#include "harness/measure/loop.hpp"
#include "harness/measure/streams.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/run/timeline.hpp"
#include "kernels/kernels.hpp"

namespace gpu_bench {

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

// The bound and `run`'s pipeline of `chunks` chunks, sampled in turns as paired_bound says.
paired_bound measure_paired_bound(bound_stages& st, pipeline_run& run, int chunks);

}  // namespace gpu_bench
