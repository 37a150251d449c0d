#include "harness/measure/streams.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <utility>

#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"
#include "harness/run/timeline.hpp"

namespace gpu_bench {

stream_set::stream_set(int count)
    : stream_set(std::vector<int>(count > 0 ? static_cast<std::size_t>(count) : 0, current_device())) {}

stream_set::stream_set(const std::vector<int>& devices) : devices_(devices) {
  if (devices.empty()) throw std::invalid_argument("a stream set needs at least one stream");
  for (int d : devices) {
    // A stream, and the events recorded on it, belong to the device current when they are made.
    device_scope on(d);
    streams_.emplace_back();
    starts_.emplace_back();
    stops_.emplace_back();
  }
  device_scope on(devices.front());
  joined_ = cuda_event();
}

namespace {
std::map<std::pair<std::vector<int>, int>, std::unique_ptr<stream_set>>& stream_cache() {
  static std::map<std::pair<std::vector<int>, int>, std::unique_ptr<stream_set>> cache;
  return cache;
}
}  // namespace

stream_set& stream_set::cached(int count, int variant) {
  if (count < 1) throw std::invalid_argument("a stream set needs at least one stream");
  return cached(std::vector<int>(static_cast<std::size_t>(count), current_device()), variant);
}

stream_set& stream_set::cached(const std::vector<int>& devices, int variant) {
  auto& slot = stream_cache()[{devices, variant}];
  if (!slot) slot = std::make_unique<stream_set>(devices);
  return *slot;
}

void stream_set::clear_cache() {
  stream_cache().clear();
}

void stream_set::synchronize() const {
  for (const auto& s : streams_) s.synchronize();
}

namespace {
// Opens every gate it closed when it goes out of scope, even on an exception: the GPU never spins on.
struct held_gates {
  std::vector<gate*> gates;
  void hold(gate& g, cudaStream_t s, double timeout_s) {
    g.close(s, timeout_s);
    if (std::find(gates.begin(), gates.end(), &g) == gates.end()) gates.push_back(&g);
  }
  ~held_gates() {
    for (gate* g : gates) g->open();
  }
};
}  // namespace

sample stream_set::measure(bool gated, const std::function<void()>& enqueue, const hooks& h) {
  using clock = std::chrono::steady_clock;
  sample out;
  const std::size_t n = streams_.size();
  std::vector<gate*> used;
  clock::time_point t0;
  // Every device's gate exists before the first one closes: making one pins memory, which must not wait
  // on a GPU whose stream is already held.
  std::vector<gate*> gates(gated ? n : 0);
  for (std::size_t i = 0; i < gates.size(); ++i) gates[i] = &process_gate(devices_[i]);
  {
    held_gates held;
    for (std::size_t i = 0; i < n; ++i) {
      device_scope on(devices_[i]);
      if (gated) {
        held.hold(*gates[i], streams_[i].get(), h.gate_timeout_s);
        if (h.prime) h.prime(static_cast<int>(i));
      }
      starts_[i].record(streams_[i].get());
    }
    t0 = clock::now();
    enqueue();
    for (std::size_t i = 0; i < n; ++i) {
      device_scope on(devices_[i]);
      stops_[i].record(streams_[i].get());
    }
    if (h.join_on_origin) {
      device_scope on(devices_.front());
      for (std::size_t i = 1; i < n; ++i) CUDA_CHECK(cudaStreamWaitEvent(origin(), stops_[i].get(), 0));
      joined_.record(origin());
    }
    out.host_s = std::chrono::duration<double>(clock::now() - t0).count();
    used = held.gates;
  }
  if (h.wait) {
    h.wait();
  } else {
    for (std::size_t i = 0; i < n; ++i) CUDA_CHECK(cudaEventSynchronize(stops_[i].get()));
    if (h.join_on_origin) CUDA_CHECK(cudaEventSynchronize(joined_.get()));
  }
  out.wall_s = std::chrono::duration<double>(clock::now() - t0).count();
  read_spans(out, h.join_on_origin, h.longest_stream);
  for (gate* g : used) g->check();
  return out;
}

sample stream_set::measure_as_issued(const std::function<void(int stream)>& enqueue_one) {
  using clock = std::chrono::steady_clock;
  sample out;
  const std::size_t n = streams_.size();
  const clock::time_point t0 = clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    device_scope on(devices_[i]);
    starts_[i].record(streams_[i].get());
    enqueue_one(static_cast<int>(i));
    stops_[i].record(streams_[i].get());
  }
  out.host_s = std::chrono::duration<double>(clock::now() - t0).count();
  for (std::size_t i = 0; i < n; ++i) CUDA_CHECK(cudaEventSynchronize(stops_[i].get()));
  out.wall_s = std::chrono::duration<double>(clock::now() - t0).count();
  read_spans(out, false, false);
  return out;
}

sample stream_set::measure_by_host_clock(const std::function<void()>& enqueue) {
  using clock = std::chrono::steady_clock;
  sample out;
  const std::size_t n = streams_.size();
  out.spans.assign(n, -1.0);
  const clock::time_point t0 = clock::now();
  enqueue();
  out.host_s = std::chrono::duration<double>(clock::now() - t0).count();
  for (std::size_t left = n; left > 0;) {
    for (std::size_t i = 0; i < n; ++i) {
      if (out.spans[i] >= 0) continue;
      device_scope on(devices_[i]);
      const cudaError_t state = cudaStreamQuery(streams_[i].get());
      if (state == cudaErrorNotReady) continue;
      if (state != cudaSuccess) throw_cuda_error(state, "cudaStreamQuery", __FILE__, __LINE__);
      out.spans[i] = std::chrono::duration<double>(clock::now() - t0).count();
      --left;
    }
  }
  out.seconds = *std::max_element(out.spans.begin(), out.spans.end());
  out.wall_s = out.seconds;
  return out;
}

void stream_set::read_spans(sample& out, bool joined, bool longest_stream) const {
  const std::size_t n = streams_.size();
  // Per device: from its first stream's start, the earliest start and the latest stop (or the join).
  std::map<int, std::pair<double, double>> span;  // device -> (earliest start, latest end), seconds
  std::map<int, std::size_t> ref;                 // device -> its first stream
  for (std::size_t i = 0; i < n; ++i) {
    const int d = devices_[i];
    device_scope on(d);
    const std::size_t r = ref.emplace(d, i).first->second;
    const double begin = elapsed_seconds(starts_[r], starts_[i]);
    const double end = elapsed_seconds(starts_[r], stops_[i]);
    out.spans.push_back(end - begin);
    if (longest_stream) {
      out.seconds = std::max(out.seconds, end - begin);
      continue;
    }
    auto [it, fresh] = span.emplace(d, std::make_pair(begin, end));
    if (!fresh) it->second = {std::min(it->second.first, begin), std::max(it->second.second, end)};
  }
  if (joined && !longest_stream) {
    device_scope on(devices_.front());
    span[devices_.front()].second = elapsed_seconds(starts_.front(), joined_);
  }
  for (const auto& [d, s] : span) out.seconds = std::max(out.seconds, s.second - s.first);
}

sample stream_set::measure(bool gated, const std::function<void()>& enqueue) {
  return measure(gated, enqueue, hooks{});
}

void op_recorder::begin(cudaStream_t stream, int row, std::string name, const char* cat) {
  ops_.push_back({row, std::move(name), cat, cuda_event(), cuda_event()});
  ops_.back().begin.record(stream);
}

void op_recorder::flush(int pid, const cuda_event& zero) {
  for (const auto& o : ops_) {
    const double b = elapsed_seconds(zero, o.begin) * 1e6;
    const double e = elapsed_seconds(zero, o.end) * 1e6;
    timeline::instance().span(pid, o.row, o.name, o.cat, b, e - b);
  }
  ops_.clear();
  recording_ = false;
}

double event_tick_s() {
  static std::map<int, double> measured;
  const int device = current_device();
  if (const auto it = measured.find(device); it != measured.end()) return it->second;
  cuda_stream s;
  device_buffer word(sizeof(int));
  std::vector<cuda_event> ev(128);
  for (std::size_t i = 0; i < ev.size(); i += 2) {
    ev[i].record(s.get());
    CUDA_CHECK(cudaMemsetAsync(word.data(), static_cast<int>(i), sizeof(int), s.get()));
    ev[i + 1].record(s.get());
  }
  s.synchronize();
  std::set<double> times;
  for (std::size_t i = 0; i < ev.size(); i += 2) times.insert(elapsed_seconds(ev[i], ev[i + 1]));
  double tick = 0;
  for (auto a = times.begin(), b = std::next(a); a != times.end() && b != times.end(); ++a, ++b)
    if (*b - *a > 1e-12 && (tick == 0 || *b - *a < tick)) tick = *b - *a;
  return measured[device] = tick;
}

}  // namespace gpu_bench
