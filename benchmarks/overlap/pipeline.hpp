#pragma once
// Overlap's pipeline: a case's buffers, and one sample of its schedule issued and timed. Each chunk's copy
// in, kernel and copy out go on the chunk's stream, in the schedule's order, with the host waits `sync` asks for.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/overlap/model.hpp"
#include "harness/cuda/check.hpp"
#include "harness/measure/loop.hpp"
#include "harness/measure/planted.hpp"
#include "harness/measure/streams.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/run/timeline.hpp"
#include "kernels/kernels.hpp"

namespace gpu_bench {

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

// The case's buffers from the cache: input and output of `mem`, the working copy and dev2 on the GPU.
overlap_buffers acquire(mem_kind mem, std::size_t bytes);

// NaN in every output word: an output nobody wrote fails the check.
void poison_output(const overlap_buffers& b);

// The input's values, and the output poisoned.
void fill_input(const overlap_buffers& b);

// The largest error of out = in + work. On the GPU where it can address both buffers.
double max_error(const overlap_buffers& b, int work, cudaStream_t s);

// Host and device memory the priming copies use.
struct prime_buffers {
  void* host;
  void* dev;
  std::size_t bytes;
};

// The case's chunks: its streams, or one for serial.
int chunks_of(const overlap_case& c);

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
prime_buffers priming_buffers(mem_kind mem, std::size_t bytes);

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
sampling_rules calibration_rules(int min_samples = 5);

// The serial schedule's time for the case's memory kind, bytes and work: the baseline of its speedup,
// measured once per process for every case that shares it.
double serial_baseline_s(const overlap_case& c, const overlap_buffers& b, const prime_buffers& pb);

}  // namespace gpu_bench
