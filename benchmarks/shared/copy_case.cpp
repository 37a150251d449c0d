#include "benchmarks/shared/copy_case.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "harness/context/profile.hpp"
#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"
#include "harness/measure/planted.hpp"
#include "harness/measure/rates.hpp"
#include "harness/measure/streams.hpp"
#include "harness/measure/verify.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/memory/pattern.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/options.hpp"
#include "kernels/kernels.hpp"

namespace gpu_bench {
namespace {

constexpr std::size_t kPrimeBytes = 64 << 10;

// One copy in one direction: where it reads, where it writes, and how it is issued for its memory kind.
struct leg {
  direction dir;  // h2d, d2h or d2d
  mem_kind kind;  // the host side's kind (device for d2d)
  region src, dst;
  side src_side, dst_side;
  int device;
  copy_engine engine;
  std::optional<int> host_node = std::nullopt;  // the NUMA node of the host side's first page, if known

  bool in_place() const { return kind == mem_kind::managed_prefetch; }  // prefetch moves pages, not bytes

  void fill(std::uint32_t seed, cudaStream_t s) const {
    fill_pattern(src, seed, src_side, s);
    if (!in_place()) fill_poison(dst, seed, dst_side, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
  }

  // Managed memory, before every sample: the pages go back to where the copy starts from, and that side
  // writes them afresh under `seed`, so each sample moves pages the source side has just written and the
  // check afterwards sees the last sample's data, not an earlier one's.
  void refill_managed(std::uint32_t seed, cudaStream_t s) const {
    cudaMemLocation from{};
    if (dir == direction::h2d) {
      from.type = cudaMemLocationTypeHost;
    } else {
      from.type = cudaMemLocationTypeDevice;
      from.id = device;
    }
    CUDA_CHECK(cudaMemPrefetchAsync(src.dev, src.bytes, from, 0, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    fill_pattern(src, seed, dir == direction::h2d ? side::host : side::gpu, s);
    if (!in_place()) fill_poison(dst, seed, dst_side, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
  }

  void enqueue(cudaStream_t s) const {
    const std::size_t n = src.bytes;
    if (kind == mem_kind::managed_prefetch) {
      cudaMemLocation to{};
      if (dir == direction::h2d) {
        to.type = cudaMemLocationTypeDevice;
        to.id = device;
      } else {
        to.type = cudaMemLocationTypeHost;
      }
      CUDA_CHECK(cudaMemPrefetchAsync(src.dev, n, to, 0, s));
      return;
    }
    if (engine == copy_engine::sm) {  // through device addresses: mapped host memory, or device memory
      kernels::copy(dst.dev, src.dev, n, s);
      return;
    }
    const cudaMemcpyKind k = dir == direction::h2d   ? cudaMemcpyHostToDevice
                             : dir == direction::d2h ? cudaMemcpyDeviceToHost
                                                     : cudaMemcpyDeviceToDevice;
    void* d = dir == direction::d2d || dir == direction::h2d ? dst.dev : dst.host;
    const void* from = dir == direction::d2d || dir == direction::d2h ? src.dev : src.host;
    CUDA_CHECK(cudaMemcpyAsync(d, from, n, k, s));
    plant_extra_copy(d, from, n, k, s);
  }

  std::string verify(std::uint32_t seed, cudaStream_t s) const {
    // After a prefetch to the GPU the GPU checks; after one to the host, the host does.
    const side by = in_place() ? (dir == direction::h2d ? side::gpu : side::host) : dst_side;
    return verify_message(dst, seed, by, s, std::string(to_name(dir)) + " destination");
  }
};

// From this size a managed copy's refill runs off the CPU --cpu=fast holds (docs/methodology.md, "The managed
// refill off the held CPU"). On one H200, held, an h2d refill of 16 MiB cost what it cost free; one of 64 MiB
// half as much again.
constexpr std::size_t kRefillOffHeldCpuFromBytes = std::size_t{64} << 20;

// Copy-engine legs prime their engine with the same kind of copy between buffers of their own: the measured
// buffers are not touched, so data the priming copy moved cannot pass the check of the measured one.
// Kernel-driven and managed legs need none (the gate is a kernel; prefetching other pages primes nothing).
bool needs_prime(const transfer_case& c) {
  return c.engine_used() == copy_engine::ce && !is_managed(c.mem);
}

leg host_leg(direction d, mem_kind kind, std::size_t n, buffer_slot slot, numa_place numa, int device,
             copy_engine engine) {
  auto& cache = buffer_cache::instance();
  host_buffer& h = cache.host(kind, n, slot, numa);
  const region hr = region_of(h, n);
  const side hs = natural_side(kind);
  const std::optional<int> node = h.numa_node();
  if (kind == mem_kind::managed_prefetch) return leg{d, kind, hr, hr, hs, hs, device, engine, node};
  const region dr = region_of(cache.device(n, slot), n);
  return d == direction::h2d ? leg{d, kind, hr, dr, hs, side::gpu, device, engine, node}
                             : leg{d, kind, dr, hr, side::gpu, hs, device, engine, node};
}

// The measured legs of placement `placement` (placement_slot), or with `priming` the legs that prime their
// engines, in slots of their own.
std::vector<leg> make_legs(const transfer_case& c, int device, std::size_t n, bool priming, int placement = 0) {
  const copy_engine e = c.engine_used();
  const buffer_slot h2d = priming ? buffer_slot::h2d_prime : placement_slot(buffer_slot::h2d, placement);
  const buffer_slot d2h = priming ? buffer_slot::d2h_prime : placement_slot(buffer_slot::d2h, placement);
  std::vector<leg> legs;
  switch (c.dir) {
    case direction::h2d:
      legs.push_back(host_leg(direction::h2d, c.mem, n, h2d, c.numa, device, e));
      break;
    case direction::d2h:
      legs.push_back(host_leg(direction::d2h, c.mem, n, d2h, c.numa, device, e));
      break;
    case direction::bidir:
      legs.push_back(host_leg(direction::h2d, c.mem, n, h2d, c.numa, device, e));
      legs.push_back(host_leg(direction::d2h, c.mem, n, d2h, c.numa, device, e));
      break;
    case direction::d2d: {
      auto& cache = buffer_cache::instance();
      legs.push_back(leg{direction::d2d, mem_kind::device, region_of(cache.device(n, h2d), n),
                         region_of(cache.device(n, d2h), n), side::gpu, side::gpu, device, e});
      break;
    }
  }
  return legs;
}

// How many placements a copy rotates over (--placements): those under 1 MiB, whose fixed cost is most of
// their time and follows where their buffers landed and which queues their streams took. Managed copies
// take one: each sample moves pages back before it, so where they lie is the sample's own doing. Pageable
// copies take one too: the driver stages them through buffers of its own, and rotating their host buffers
// doubled their rounds' spread on an H200 (docs/methodology.md, "Small copies and their placement").
int placements_of(const transfer_case& c) {
  constexpr std::size_t kRotatedBelow = 1 << 20;
  const bool placed_by_driver = is_managed(c.mem) || c.mem == mem_kind::pageable;
  return placed_by_driver || c.bytes >= kRotatedBelow ? 1 : current_options().placements;
}

// d2d cache:cold: before every sample, a write over twice the L2's size leaves nothing of the copy's
// buffers in L2 (as nvbench flushes it).
class l2_flush {
 public:
  explicit l2_flush(std::size_t l2_bytes) : bytes_(2 * std::max<std::size_t>(l2_bytes, 1 << 20)) {}
  void operator()(cudaStream_t s) {
    device_buffer& b = buffer_cache::instance().device(bytes_, buffer_slot::l2_flush);
    CUDA_CHECK(cudaMemsetAsync(b.data(), ++value_ & 0xff, bytes_, s));
  }

 private:
  std::size_t bytes_;
  int value_ = 0;
};

// Per-direction globaltimer spans of the one-kernel bidir copy, read back after each sample.
struct two_way_spans {
  device_buffer& spans = buffer_cache::instance().device(4 * sizeof(unsigned long long), buffer_slot::spans);
  unsigned long long* ns() const { return static_cast<unsigned long long*>(spans.data()); }
  std::pair<double, double> read() const {
    unsigned long long h[4] = {};
    CUDA_CHECK(cudaMemcpy(h, spans.data(), sizeof h, cudaMemcpyDeviceToHost));
    return {static_cast<double>(h[1] - h[0]) * 1e-9, static_cast<double>(h[3] - h[2]) * 1e-9};
  }
};

}  // namespace

// Everything a case holds while it runs: its placements and priming legs, seed and per-sample helpers.
struct copy_case::held {
  // One copy's buffers and streams. Samples take the placements in turn (placements_of).
  struct placement {
    std::vector<leg> legs;
    stream_set* streams = nullptr;
    bool sampled = false;  // whether a sample wrote its destinations since they were filled
  };

  const transfer_case c;
  const int device = current_device();
  // A managed prefetch is timed by the host clock: events around it doubled a small one's time on an H200
  // and added steps of about 9 us that differ by context and process (docs/methodology.md, "Managed copies and
  // the host clock"). So it runs ungated, as an application issues it.
  const bool host_timed = c.mem == mem_kind::managed_prefetch;
  const bool gated = !enqueue_may_block(c.mem) && !host_timed;
  // Both directions by the SMs: one kernel, half its blocks each way (two kernels would each fill the GPU
  // and run one after the other).
  const bool mapped_bidir = c.dir == direction::bidir && c.engine_used() == copy_engine::sm;
  std::vector<placement> places;
  std::vector<leg> primers;
  std::size_t at = 0;  // the placement the next sample takes
  std::uint32_t seed = 0;
  std::optional<l2_flush> flush;
  std::optional<two_way_spans> spans;
  stream_set::hooks hooks;

  explicit held(const transfer_case& tc) : c(tc) {
    const bool prime = gated && needs_prime(c);
    const int n_places = placements_of(c);
    std::tie(places, primers) = buffer_cache::instance().acquire_with_retry([&] {
      std::vector<placement> p(static_cast<std::size_t>(n_places));
      for (int i = 0; i < n_places; ++i) p[static_cast<std::size_t>(i)].legs = make_legs(c, device, c.bytes, false, i);
      return std::make_pair(std::move(p), prime
                                              ? make_legs(c, device, std::min<std::size_t>(c.bytes, kPrimeBytes), true)
                                              : std::vector<leg>{});
    });
    // The mapped bidir copy is one kernel on one stream; every other leg has a stream of its own.
    const int n_streams = mapped_bidir ? 1 : static_cast<int>(places.front().legs.size());
    for (std::size_t i = 0; i < places.size(); ++i)
      places[i].streams = &stream_set::cached(n_streams, static_cast<int>(i));
    seed = next_seed();
    for (std::size_t p = 0; p < places.size(); ++p)
      for (std::size_t i = 0; i < places[p].legs.size(); ++i) places[p].legs[i].fill(seed, stream_of(p, i));
    for (std::size_t i = 0; i < primers.size(); ++i) primers[i].fill(seed, stream_of(0, i));
    if (c.dir == direction::d2d && c.cache == cache_state::cold) flush.emplace(profile_of(device).l2_bytes);
    if (mapped_bidir) spans.emplace();
    // A bidirectional copy's time is its slower direction's own, both directions in flight.
    hooks.longest_stream = c.dir == direction::bidir && !mapped_bidir;
    hooks.prime = [this](int i) {
      if (mapped_bidir) kernels::reset_spans(spans->ns(), 4, streams().origin());
      if (static_cast<std::size_t>(i) < primers.size()) primers[static_cast<std::size_t>(i)].enqueue(streams()[i]);
    };
  }

  const std::vector<leg>& legs() const { return places[at].legs; }
  const stream_set& streams() const { return *places[at].streams; }
  cudaStream_t stream_of(std::size_t place, std::size_t leg_index) const {
    return (*places[place].streams)[mapped_bidir ? 0 : static_cast<int>(leg_index)];
  }

  // Every leg's copy of the current placement once, each on its own stream (the mapped bidir copy: one
  // kernel both ways).
  void enqueue_once() const {
    const std::vector<leg>& l = legs();
    if (mapped_bidir) {
      kernels::copy_two_ways(l[0].dst.dev, l[0].src.dev, l[1].dst.dev, l[1].src.dev, c.bytes, spans->ns(),
                             streams().origin());
    } else {
      for (std::size_t i = 0; i < l.size(); ++i) l[i].enqueue(streams()[static_cast<int>(i)]);
    }
  }

  // One sample of `enqueue` on the current placement, which the next sample then follows.
  sample measure_and_move_on(const std::function<void()>& enqueue) {
    sample s = host_timed ? places[at].streams->measure_by_host_clock(enqueue)
                          : places[at].streams->measure(gated, enqueue, hooks);
    s.placement = static_cast<int>(at);
    places[at].sampled = true;
    at = (at + 1) % places.size();
    return s;
  }

  case_plan plan() {
    case_plan plan;
    plan.placements = static_cast<int>(places.size());
    if (host_timed) plan.timer = timer_kind::host_clock;  // the loop labels it "host clock"
    if (!gated && !host_timed) plan.notes.emplace_back("ungated");
    // Managed memory is written afresh before every sample anyway (below), under a new seed.
    if (!is_managed(c.mem))
      plan.reset_output = [this] {
        for (std::size_t i = 0; i < legs().size(); ++i)
          fill_poison(legs()[i].dst, seed, legs()[i].dst_side, stream_of(at, i));
        streams().synchronize();
      };
    // The untimed refill before each managed sample; the sample itself runs on the held CPU either way.
    plan.prepare_on_any_cpu = is_managed(c.mem) && c.bytes >= kRefillOffHeldCpuFromBytes;
    plan.prepare = [this] {
      if (is_managed(c.mem)) {
        seed = next_seed();
        for (std::size_t i = 0; i < legs().size(); ++i) legs()[i].refill_managed(seed, streams()[static_cast<int>(i)]);
      }
      if (flush) (*flush)(streams().origin());
    };
    plan.measure = [this] {
      sample s = measure_and_move_on([this] { enqueue_once(); });
      if (mapped_bidir) {
        const auto [h2d, d2h] = spans->read();
        s.spans = {h2d, d2h};
      }
      return s;
    };
    // Every placement a sample wrote: each holds its last sample's data.
    plan.verify = [this] {
      for (std::size_t p = 0; p < places.size(); ++p) {
        if (!places[p].sampled) continue;
        for (std::size_t i = 0; i < places[p].legs.size(); ++i)
          if (std::string bad = places[p].legs[i].verify(seed, stream_of(p, i)); !bad.empty()) return bad;
      }
      return std::string();
    };
    return plan;
  }
};

copy_case::copy_case(const transfer_case& c) : held_(std::make_unique<held>(c)) {}

copy_case::~copy_case() = default;

std::optional<sample_set> copy_case::run(benchmark::State& state, bool report_gbps) {
  const transfer_case& c = held_->c;
  const auto set = run_case(state, held_->plan());
  if (!set) return std::nullopt;

  case_rates rates;
  rates.bytes = transfer_bytes_moved(c);
  rates.gbps = report_gbps;
  const double gbps = rate_gbps(rates.bytes, set->time_s());
  if (const std::string impossible = beyond_link_peak(c, profile_of(held_->device), gbps); !impossible.empty()) {
    fail_case(state, impossible);
    return std::nullopt;
  }
  report_rates(state, *set, rates);
  if (c.dir == direction::bidir) {
    // Each direction by its own events (by its half's globaltimer span for the one-kernel copy) in the last
    // round, carried to the rounds' center as that round's time is: the two directions and gbps then describe
    // the same figure.
    const auto n = static_cast<double>(c.bytes);
    const double to_rounds = set->own_time_s() > 0 ? set->time_s() / set->own_time_s() : 1.0;
    state.counters["gbps_h2d"] =
        rate_gbps(n, set->median_of([](const sample& s) { return s.spans.at(0); }) * to_rounds);
    state.counters["gbps_d2h"] =
        rate_gbps(n, set->median_of([](const sample& s) { return s.spans.at(1); }) * to_rounds);
  }
  // Where the host side's pages are, read back from the kernel where it can say: the numa axis's proof.
  if (const auto node = held_->places.front().legs.front().host_node) state.counters["numa_node"] = *node;
  if (held_->places.size() > 1) state.counters["placements"] = static_cast<double>(held_->places.size());
  return set;
}

sample copy_case::back_to_back(int copies) {
  held& h = *held_;
  sample s = h.measure_and_move_on([&] {
    for (int k = 0; k < copies; ++k)
      for (std::size_t i = 0; i < h.legs().size(); ++i) h.legs()[i].enqueue(h.streams()[static_cast<int>(i)]);
  });
  s.seconds /= copies;
  return s;
}

}  // namespace gpu_bench
