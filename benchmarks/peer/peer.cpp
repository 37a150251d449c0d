// Peer and PeerLatency: one cudaMemcpyPeerAsync of N bytes from GPU src's memory to GPU dst's per
// iteration, on a stream of the source GPU (oneway), of the destination GPU (access:read), or both
// directions at once, each on a stream of its own source GPU (bidir, 2N bytes counted). GPU time from
// events on the stream that issues the copy, each direction's on its own; gbps = bytes moved / GPU time,
// GB = 1e9 bytes.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/peer/model.hpp"
#include "harness/context/gpu_context.hpp"
#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"
#include "harness/measure/loop.hpp"
#include "harness/measure/rates.hpp"
#include "harness/measure/streams.hpp"
#include "harness/measure/verify.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/memory/pattern.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/options.hpp"
#include "harness/run/registry.hpp"
#include "kernels/kernels.hpp"

namespace gpu_bench {
namespace {

// "" when each GPU of the pair can map the other's memory, else the sentence a peer_access:on case fails with.
std::string peer_access_impossible(int a, int b) {
  int ab = 0, ba = 0;
  CUDA_CHECK(cudaDeviceCanAccessPeer(&ab, a, b));
  CUDA_CHECK(cudaDeviceCanAccessPeer(&ba, b, a));
  if (ab && ba) return {};
  return "GPUs " + std::to_string(a) + " and " + std::to_string(b) +
         " cannot access each other's memory (cudaDeviceCanAccessPeer says no), so peer_access:on cannot be "
         "measured for this pair";
}

// Peer access both ways, as the case asks: on maps each GPU's memory into the other, off leaves the driver
// to stage the copy through host memory. The state outlives the case; every case sets the one it needs.
// Every pair starts off and only this function changes it, so it keeps the state and calls the runtime only
// to change it: asking for the state a pair already has returns an error (cudaErrorPeerAccessAlreadyEnabled
// or NotEnabled), which compute-sanitizer reports even when the caller expects it.
void set_peer_access(int a, int b, bool on) {
  static std::set<std::pair<int, int>> enabled;
  for (const auto& pair : {std::make_pair(a, b), std::make_pair(b, a)}) {
    if ((enabled.count(pair) != 0) == on) continue;
    device_scope scope(pair.first);
    if (on) {
      CUDA_CHECK(cudaDeviceEnablePeerAccess(pair.second, 0));
      enabled.insert(pair);
    } else {
      CUDA_CHECK(cudaDeviceDisablePeerAccess(pair.second));
      enabled.erase(pair);
    }
  }
}

// One direction: `bytes` from GPU src_dev's memory to GPU dst_dev's.
struct peer_leg {
  int src_dev, dst_dev;
  region src, dst;
  bool sm = false;    // a copy kernel writing (or, pulled, reading) through the peer mapping
  bool pull = false;  // issued by the destination GPU, on its stream: its copy engine or its kernel reads

  void enqueue(cudaStream_t s, std::size_t n) const {
    if (!sm) {
      CUDA_CHECK(cudaMemcpyPeerAsync(dst.dev, dst_dev, src.dev, src_dev, n, s));
      return;
    }
    device_scope on(pull ? dst_dev : src_dev);  // a kernel launches on its stream's device
    kernels::copy(dst.dev, src.dev, n, s);
  }

  // The source holds the pattern and the destination poison, each written by its own GPU, before timing.
  void fill(std::uint32_t seed) const {
    {
      device_scope on(src_dev);
      fill_pattern(src, seed, side::gpu, cudaStreamPerThread);
      CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    }
    device_scope on(dst_dev);
    fill_poison(dst, seed, side::gpu, cudaStreamPerThread);
    CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  }

  std::string verify(std::uint32_t seed) const {
    device_scope on(dst_dev);  // the destination's GPU checks it
    return verify_message(dst, seed, side::gpu, cudaStreamPerThread,
                          "GPU " + std::to_string(dst_dev) + "'s copy from GPU " + std::to_string(src_dev));
  }
};

// Each GPU sends from its first device buffer and receives into its second; with `priming`, the priming
// copies' (the same engine, buffers of their own).
peer_leg make_leg(int from, int to, std::size_t bytes, bool priming, bool sm, bool pull = false) {
  auto& cache = buffer_cache::instance();
  return peer_leg{from,
                  to,
                  region_of(cache.device_on(from, bytes, priming ? buffer_slot::h2d_prime : buffer_slot::h2d), bytes),
                  region_of(cache.device_on(to, bytes, priming ? buffer_slot::d2h_prime : buffer_slot::d2h), bytes),
                  sm,
                  pull};
}

// Runs one Peer or PeerLatency case: buffers, peer access, the timed loop (gated with peer access on), the
// data check. Returns the samples, or nothing when the case failed.
std::optional<sample_set> run_peer(benchmark::State& state, const peer_case& c) {
  if (c.peer_access)
    if (const std::string why = peer_access_impossible(c.src, c.dst); !why.empty()) {
      fail_case(state, why);
      return std::nullopt;
    }
  const std::size_t n = c.bytes;
  const std::size_t prime_bytes = std::min<std::size_t>(n, 64 << 10);
  const auto legs = buffer_cache::instance().acquire_with_retry([&] {
    std::vector<peer_leg> v{make_leg(c.src, c.dst, n, false, c.sm, c.read),
                            make_leg(c.src, c.dst, prime_bytes, true, c.sm, c.read)};
    if (c.dir == peer_dir::bidir) {
      v.push_back(make_leg(c.dst, c.src, n, false, c.sm));
      v.push_back(make_leg(c.dst, c.src, prime_bytes, true, c.sm));
    }
    return v;
  });
  set_peer_access(c.src, c.dst, c.peer_access);
  std::uint32_t seed = next_seed();
  for (const peer_leg& l : legs) l.fill(seed);

  // One stream on the GPU that issues each direction's copy (its source, or for a read its destination);
  // each GPU's gate holds its own stream, and the sample's time is the longer of the two directions' own
  // spans, both gates having opened together.
  std::vector<int> stream_devices{c.read ? c.dst : c.src};
  if (c.dir == peer_dir::bidir) stream_devices.push_back(c.dst);
  stream_set& streams = stream_set::cached(stream_devices);
  // With peer access the copy is one DMA the enqueue only queues. Without it the driver stages the copy
  // through host memory, and whether that enqueue waits for the GPU is not documented: ungated, as
  // pageable copies are, rather than risk a gate the host cannot open.
  const bool gated = c.peer_access;
  case_plan plan;
  if (!gated) plan.notes.emplace_back("ungated");
  plan.reset_output = [&] {
    for (std::size_t i = 0; i < legs.size(); i += 2) legs[i].fill(seed);
  };
  stream_set::hooks hooks;
  if (!c.sm)  // a copy kernel needs no copy engine primed
    hooks.prime = [&](int i) { legs[2 * static_cast<std::size_t>(i) + 1].enqueue(streams[i], prime_bytes); };
  plan.measure = [&] {
    return streams.measure(
        gated,
        [&] {
          for (int i = 0; i < streams.size(); ++i) legs[2 * static_cast<std::size_t>(i)].enqueue(streams[i], n);
        },
        hooks);
  };
  plan.verify = [&] {
    for (std::size_t i = 0; i < legs.size(); i += 2)
      if (std::string bad = legs[i].verify(seed); !bad.empty()) return bad;
    return std::string();
  };
  return run_case(state, plan);
}

void run_peer_case(benchmark::State& state, const peer_case& c) {
  const auto t = run_peer(state, c);
  if (!t) return;
  case_rates rates;
  rates.bytes = peer_bytes_moved(c);
  report_rates(state, *t, rates);
  if (c.dir == peer_dir::bidir) {
    const auto n = static_cast<double>(c.bytes);
    state.counters["gbps_src_to_dst"] = rate_gbps(n, t->median_of([](const sample& s) { return s.spans.at(0); }));
    state.counters["gbps_dst_to_src"] = rate_gbps(n, t->median_of([](const sample& s) { return s.spans.at(1); }));
  }
}

void run_peer_latency_case(benchmark::State& state, const peer_case& c) {
  const auto t = run_peer(state, c);
  if (!t) return;
  report_rates(state, *t, case_rates{});  // host_blocked_us
  if (t->size() == 0) return;
  state.counters["latency_us"] = t->time_s() * 1e6;
}

const char* const kPeerAccessHelp =
    "    peer_access  on: cudaDeviceEnablePeerAccess both ways for the case (the copy goes GPU to GPU, over\n"
    "                 NVLink or PCIe); off: cudaDeviceDisablePeerAccess both ways, so the driver stages the\n"
    "                 copy through host memory. An on case fails where cudaDeviceCanAccessPeer says no. off\n"
    "                 cases run without the gate (whether a staged enqueue waits is not documented) and are\n"
    "                 labelled ungated.\n";

const family_registration peer_registration{[](family_descriptor& f) {
  f.name = "Peer";
  f.summary = "GPU to GPU copies between every ordered pair of visible GPUs, with and without peer access";
  f.axes = {{"src", "{i}"},
            {"dst", "{j}"},
            {"peer_access", "{on,off}"},
            {"dir", "{oneway,bidir}"},
            optional_axis("access", "read"),
            optional_axis("engine", "sm"),
            {"bytes", "{N}"}};
  f.help = f.name_pattern() +
           "    oneway  cudaMemcpyPeerAsync of N bytes from GPU i to GPU j on a stream of GPU i; N counted.\n"
           "    bidir   i to j on a stream of GPU i and j to i on a stream of GPU j at once, each held by\n"
           "            its own GPU's gate and timed by its own GPU's events; the sample's time is the\n"
           "            longer of the two; 2N counted; gbps_src_to_dst and gbps_dst_to_src each direction's\n"
           "            own rate. Registered for i < j only (the same pair named the other way round is\n"
           "            the same measurement).\n"
           "    access:read  with peer access, oneway: the same copy issued by GPU j, which reads GPU i's\n"
           "            memory (cudaMemcpyPeerAsync on a stream of GPU j, timed by its events), as nvbandwidth's\n"
           "            device_to_device_memcpy_read_ce (row j, column i). The plain name: GPU i issues it.\n"
           "    engine:sm  with peer access, the same copy by a copy kernel on the GPU that issues it: GPU i\n"
           "            writing through the peer mapping, or with access:read GPU j reading through it (as\n"
           "            device_to_device_memcpy_read_sm); the plain name: cudaMemcpyPeerAsync's copy engines.\n" +
           kPeerAccessHelp +
           "    counters  gbps (bytes counted / GPU time, GB = 1e9 B), host_blocked_us, bytes_per_second.\n"
           "    Sizes 1 MiB, 16 MiB, 256 MiB unless --sizes is given. The default: with peer access, every ordered\n"
           "    pair oneway and every pair bidir at the largest size; the first pair of each link class (NVML's\n"
           "    link and NVLink count) also every size, peer access off, engine:sm and access:read; --full: all of\n"
           "    it for every pair. Every visible GPU, whatever --device says; no cases with fewer than two GPUs.\n";
  f.headline = "gbps";
  f.unit = "GB/s";
  f.better_is = better::higher;
  f.kind = headline_kind::rate;
  f.host_link = "peer_access:off";
  f.plot = "x=bytes;series=dir,access,engine;panel=peer_access";
  f.scope = family_scope::multi_gpu;
  f.smoke = "^Peer/src:0/dst:1/";
  f.gate = "^Peer/src:[0-9]+/dst:[0-9]+/peer_access:on/dir:bidir/bytes:268435456/";
  f.register_cases = [] {
    const int gpus = visible_gpu_count();
    if (gpus < 2) return;
    const auto sizes = sizes_or({1u << 20, 16u << 20, 256u << 20});
    const auto grid = current_options().full
                          ? peer_grid(gpus, sizes)
                          : peer_default_grid(gpus, sizes, pairs_per_link_class(visible_gpu_links()));
    for (const peer_case& c : grid)
      register_case(peer_name(c), [c](benchmark::State& st) { run_peer_case(st, c); }, {c.src, c.dst});
  };
}};

// Several peer copies at once. Copy engines: each copy on a stream of its own of its source GPU
// (cudaMemcpyPeerAsync); `sm`: one copy kernel per source GPU, its blocks split evenly between that GPU's
// destinations. As issued (the default), each stream's work starts as the host issues it, in
// pattern_copies' order, as a program's all-to-all starts; `together`, every stream waits behind its GPU's
// gate and the gates open at one instant. The sample's time is the longest GPU's span (events of different
// GPUs cannot be compared), a GPU's span running from its first copy's start to its last copy's end.
void run_peer_pattern(benchmark::State& state, peer_pattern p, std::uint64_t bytes, int gpus, bool sm, bool together) {
  const auto copies = pattern_copies(p, gpus);
  for (const auto& [a, b] : copies)
    if (const std::string why = peer_access_impossible(a, b); !why.empty()) return fail_case(state, why);
  const std::size_t n = bytes;
  // One source buffer per GPU serves every copy out of it; each copy's destination is a buffer of its own
  // source's on the destination's GPU, so copies into one GPU never share a buffer.
  const auto legs = buffer_cache::instance().acquire_with_retry([&] {
    auto& cache = buffer_cache::instance();
    std::vector<peer_leg> v;
    for (const auto& [a, b] : copies)
      v.push_back(peer_leg{a, b, region_of(cache.device_on(a, n, buffer_slot::peer_source), n),
                           region_of(cache.device_on(b, n, peer_destination_slot(a)), n), sm});
    return v;
  });
  for (const auto& [a, b] : copies) set_peer_access(a, b, true);
  std::uint32_t seed = next_seed();
  for (const peer_leg& l : legs) l.fill(seed);
  // The streams, and which stream carries each copy: one per copy, or with `sm` one per source GPU (in the
  // order the sources first appear), whose kernel writes every destination of that source.
  std::vector<int> devices;
  std::vector<const void*> sources;  // per stream: what its kernel reads (sm)
  std::vector<std::vector<void*>> destinations;
  std::vector<std::size_t> stream_of(legs.size());
  for (std::size_t i = 0; i < legs.size(); ++i) {
    const auto known = std::find(devices.begin(), devices.end(), legs[i].src_dev);
    stream_of[i] = sm ? static_cast<std::size_t>(known - devices.begin()) : devices.size();
    if (stream_of[i] == devices.size()) {
      devices.push_back(legs[i].src_dev);
      sources.push_back(legs[i].src.dev);
      destinations.emplace_back();
    }
    destinations[stream_of[i]].push_back(legs[i].dst.dev);
  }
  stream_set& streams = stream_set::cached(devices);
  const auto issue = [&](int stream) {
    const auto k = static_cast<std::size_t>(stream);
    if (!sm) return legs[k].enqueue(streams[stream], n);
    device_scope on(devices[k]);  // a kernel launches on its stream's device
    kernels::copy_to_many(destinations[k].data(), static_cast<int>(destinations[k].size()), sources[k], n,
                          streams[stream]);
  };
  case_plan plan;
  plan.reset_output = [&] {
    for (const peer_leg& l : legs) l.fill(seed);
  };
  plan.measure = [&] {
    if (!together) return streams.measure_as_issued(issue);
    return streams.measure(true, [&] {
      for (int i = 0; i < streams.size(); ++i) issue(i);
    });
  };
  plan.verify = [&] {
    for (const peer_leg& l : legs)
      if (std::string bad = l.verify(seed); !bad.empty()) return bad;
    return std::string();
  };
  const auto t = run_case(state, plan);
  if (!t) return;
  // Each GPU's own figure (pattern_gpu_of) over its span in each sample, the longest of its copies' streams':
  // the median of those spans, not the longest of the copies' medians, which may come from different samples
  // where the copies finish in a different order each time. A GPU's streams started within microseconds of
  // each other, as issued, or at its gate's opening.
  std::map<int, std::vector<std::size_t>> of_gpu;
  for (std::size_t i = 0; i < copies.size(); ++i) of_gpu[pattern_gpu_of(p, copies[i])].push_back(i);
  for (const auto& [g, idx] : of_gpu) {
    const double span = t->median_of([&idx = idx, &stream_of](const sample& s) {
      double longest = 0;
      for (std::size_t i : idx) longest = std::max(longest, s.spans.at(stream_of[i]));
      return longest;
    });
    state.counters["gbps_gpu" + std::to_string(g)] = rate_gbps(static_cast<double>(n * idx.size()), span);
  }
  case_rates rates;
  rates.bytes = static_cast<double>(n) * static_cast<double>(legs.size());
  rates.host_blocked = host_time::none;
  report_rates(state, *t, rates);
  state.counters["copies"] = static_cast<double>(legs.size());
}

const family_registration pattern_registration{[](family_descriptor& f) {
  f.name = "PeerPattern";
  f.summary = "several peer copies at once: one GPU to all, all to one, every pair";
  f.axes = {{"pattern", "{one_to_all,all_to_one,all_pairs}"},
            optional_axis("engine", "sm"),
            optional_axis("release", "together"),
            {"bytes", "{N}"}};
  f.help = f.name_pattern() +
           "    with peer access, N bytes from GPU 0 to every other GPU (one_to_all), from every other GPU to GPU 0\n"
           "    (all_to_one), or between every ordered pair (all_pairs), all at once: each copy on a stream of its\n"
           "    own of its source GPU (cudaMemcpyPeerAsync's copy engines), or with engine:sm one copy kernel per\n"
           "    source GPU, its blocks split between that GPU's destinations. Each stream starts as the host\n"
           "    issues it, in steps for all_pairs (in step k every GPU i copies to GPU (i + k) mod N), as a\n"
           "    program's all-to-all starts. release:together (--full): every stream held by its GPU's gate and\n"
           "    the gates opened at one instant, where copies contend and samples split between collided and\n"
           "    not. The sample's time is the longest GPU's span, from its first copy's start to its last's end.\n"
           "    counters  gbps (N x copies / that time), gbps_gpu{i} (what GPU i sent, or for one_to_all GPU 0\n"
           "              sent it, or for all_to_one GPU 0 received from it, over the median of its span),\n"
           "              copies. 256 MiB unless --sizes is given; two GPUs or more.\n";
  f.headline = "gbps";
  f.unit = "GB/s";
  f.better_is = better::higher;
  f.kind = headline_kind::rate;
  f.host_link = "no";
  f.plot = "x=bytes;series=pattern,engine,release";
  f.scope = family_scope::multi_gpu;
  f.smoke = "^PeerPattern/";
  f.register_cases = [] {
    const int gpus = visible_gpu_count();
    if (gpus < 2) return;
    // The release at one instant is a figure of its own, kept for --full: where many copies start together
    // they contend, and the samples split between collided and not (docs/multi_gpu.md).
    const std::vector<bool> releases =
        current_options().full ? std::vector<bool>{false, true} : std::vector<bool>{false};
    for (peer_pattern p : all_values<peer_pattern>())
      for (bool sm : {false, true})
        for (bool together : releases)
          for (std::uint64_t n : sizes_or({256u << 20}))
            register_case(
                peer_pattern_name(p, n, sm, together),
                [p, n, gpus, sm, together](benchmark::State& st) { run_peer_pattern(st, p, n, gpus, sm, together); },
                device_range(gpus));
  };
}};

// The machine_variance_cause of a small copy between GPUs without peer access: the driver's staging path.
constexpr const char* kStagedPeerCopyCause =
    "the driver's staging through host memory, whose latency settles on one of a few levels in each process";

const family_registration latency_registration{[](family_descriptor& f) {
  f.name = "PeerLatency";
  f.summary = "the GPU time of one 4-byte copy between every ordered pair of visible GPUs";
  f.axes = {{"src", "{i}"}, {"dst", "{j}"}, {"peer_access", "{on,off}"}, {"bytes", "4"}};
  f.help = f.name_pattern() +
           "    one 4-byte cudaMemcpyPeerAsync from GPU i to GPU j on a stream of GPU i, timed as Peer's\n"
           "    oneway cases are. counters: latency_us (mean GPU time of one copy; also the manual time),\n"
           "    host_blocked_us. The default: every ordered pair with peer access, and without it the first\n"
           "    pair of each link class; --full: every pair both ways.\n" +
           kPeerAccessHelp;
  f.headline = "latency_us";
  f.unit = "us";
  f.better_is = better::lower;
  f.kind = headline_kind::time;
  f.host_link = "peer_access:off";
  // A staged copy's latency settles on one of a few levels in each process, and the processes' host-clock reads
  // do not predict which (docs/methodology.md, "What the interval does not yet hold").
  f.machine_variance = "peer_access:off";
  f.machine_variance_cause = kStagedPeerCopyCause;
  f.plot = "series=peer_access";
  f.scope = family_scope::multi_gpu;
  f.smoke = "^PeerLatency/src:0/dst:1/";
  f.register_cases = [] {
    const int gpus = visible_gpu_count();
    if (gpus < 2) return;
    const auto grid = current_options().full
                          ? peer_latency_grid(gpus)
                          : peer_latency_default_grid(gpus, pairs_per_link_class(visible_gpu_links()));
    for (const peer_case& c : grid)
      register_case(peer_latency_name(c), [c](benchmark::State& st) { run_peer_latency_case(st, c); }, {c.src, c.dst});
  };
}};

}  // namespace
}  // namespace gpu_bench
