#pragma once
// The event timer: a set of streams, each held by its own device's gate while a sample is enqueued, each
// bracketed by its own start and stop events. A sample's time is, per device, the span from the earliest
// start to the latest stop (events of one device share a clock), or its longest stream's own span where the
// streams' work is independent (hooks::longest_stream), and across devices the longest of those, every gate
// having been opened together. No stream waits on another to start or to finish unless
// the work itself says so: a fork or join between streams costs microseconds of hand-off that are not the
// work's. Host time is the steady clock around the enqueue calls.
#include <functional>
#include <string>
#include <vector>

#include "harness/cuda/handles.hpp"
#include "harness/measure/gate.hpp"
#include "harness/measure/loop.hpp"

namespace gpu_bench {

class stream_set {
 public:
  // `count` streams on the current device.
  explicit stream_set(int count);
  // One stream on each of `devices` (repeats allowed), in that order.
  explicit stream_set(const std::vector<int>& devices);
  // A set made once per process and kept (streams are not created per case: a fresh stream's first work
  // pays for its setup, and creating streams between repetitions changed figures between them).
  // `variant` keeps sets apart that a case holds at once (its placements): each is made on its own.
  static stream_set& cached(int count, int variant = 0);
  static stream_set& cached(const std::vector<int>& devices, int variant = 0);
  static void clear_cache();

  int size() const { return static_cast<int>(streams_.size()); }
  cudaStream_t operator[](int i) const { return streams_[static_cast<std::size_t>(i)].get(); }
  cudaStream_t origin() const { return streams_.front().get(); }
  int device_of(int i) const { return devices_[static_cast<std::size_t>(i)]; }
  void synchronize() const;

  struct hooks {
    // Enqueued on stream i behind its gate, before its start event: a small operation on the engine the
    // stream's work starts on, so the switch from the gate's kernel to a copy engine (microseconds) is paid
    // outside the measurement. Ignored without the gate (the stream's last work was the previous sample).
    std::function<void(int stream)> prime;
    // How the host waits for the sample once it is enqueued (default: on every stream's stop event).
    std::function<void()> wait;
    // The origin waits for every other stream's stop event and records one more event, which ends the
    // sample: the time of an event join on the GPU, as an application that joins streams that way pays it.
    bool join_on_origin = false;
    // Each device's time is its longest stream's own span, not the span from its earliest start to its
    // latest stop: for streams whose work is independent, as a bidirectional copy's two directions. Their
    // starts fall microseconds apart behind the gate, by as much as the copies of a few bytes take, and
    // by a different amount in each process (docs/methodology.md, "Timers").
    bool longest_stream = false;
    // How long the gate holds at most, where shorter than --gate_timeout_ms is right (0: that). A case that
    // expects its enqueue may outgrow what a held stream queues finds out in this long, not in seconds.
    double gate_timeout_s = 0;
  };

  // One measured sample: `enqueue` issues the work on any of the streams. Gated, every stream is held until
  // the whole sample is enqueued. seconds: as above; host_s: the enqueue; wall_s: from the first enqueue
  // call to the host seeing the work done; spans[i]: stream i's own start-to-stop time.
  sample measure(bool gated, const std::function<void()>& enqueue, const hooks& h);
  sample measure(bool gated, const std::function<void()>& enqueue);

  // One sample with no gate, as a program issues work: for each stream in index order, its start event,
  // `enqueue_one(i)` and its stop event. Each stream's work starts as soon as it is issued, so several
  // streams' copies start microseconds apart rather than at one instant. A start event on an idle stream
  // is reached when it is recorded, so each span covers its own work only, and the host's enqueue of the
  // other streams overlaps the work already running. seconds, host_s, wall_s and spans as measure's.
  sample measure_as_issued(const std::function<void(int stream)>& enqueue_one);

  // One sample by the host clock alone, with no events: from the first enqueue call to the host finding
  // every stream done, each polled in turn. spans[i]: from that call to stream i found done; seconds: the
  // longest; host_s: the enqueue. For work that events around it change, as a managed prefetch: they
  // double a small one's time and add steps of about 9 us that differ by context and process
  // (docs/methodology.md, "Managed copies and the host clock").
  sample measure_by_host_clock(const std::function<void()>& enqueue);

  // Stream 0's start event of the last sample: the zero of a timeline.
  const cuda_event& start_event() const { return starts_.front(); }

 private:
  // After every stop event has completed: per device, the span from its earliest start to its latest stop
  // (or to the join with `joined`; with `longest_stream`, its longest stream's own span), into out.seconds
  // (the longest device's) and out.spans.
  void read_spans(sample& out, bool joined, bool longest_stream) const;

  std::vector<int> devices_;
  std::vector<cuda_stream> streams_;
  std::vector<cuda_event> starts_, stops_;
  cuda_event joined_;
};

// The resolution of CUDA event timing on the current device, in seconds: the smallest step between the
// distinct times of event pairs around a tiny operation (measured once per device and process; 0 where no
// two times differed). A sample's time is a whole number of these steps, so no interval is narrower.
double event_tick_s();

// Brackets operations with events when asked, so one sample can be drawn as a timeline; otherwise it only
// runs them.
class op_recorder {
 public:
  void set_recording(bool on) { recording_ = on; }
  bool recording() const { return recording_; }
  // Enqueues `op` on `stream`; when recording, between two events, drawn on row `row` as "WHAT INDEX".
  // A template, and the name made only when recording: this runs inside timed samples.
  template <class Op>
  void run(cudaStream_t stream, int row, const char* what, int index, const char* cat, Op&& op) {
    if (!recording_) {
      op();
      return;
    }
    begin(stream, row, std::string(what) + " " + std::to_string(index), cat);
    op();
    ops_.back().end.record(stream);
  }
  // After the sample completed: each operation's span relative to `zero`, into the timeline under `pid`.
  void flush(int pid, const cuda_event& zero);

 private:
  struct recorded_op {
    int row;
    std::string name, cat;
    cuda_event begin, end;
  };
  void begin(cudaStream_t stream, int row, std::string name, const char* cat);
  bool recording_ = false;
  std::vector<recorded_op> ops_;
};

}  // namespace gpu_bench
