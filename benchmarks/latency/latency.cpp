// Latency: how long one load from one GPU thread takes to reach device, pinned, registered or managed memory,
// or another GPU's memory through peer access. The thread follows a cycle of pointers one 128-byte line apart
// through a footprint of N bytes; each sample times a chase of L loads and one of 2L, each between CUDA
// events, and their difference is L loads without the launch and event costs. No bytes are counted: the
// figure is GPU time per load.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "benchmarks/latency/cases.hpp"
#include "benchmarks/latency/cycle.hpp"
#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"
#include "harness/cuda/handles.hpp"
#include "harness/measure/loop.hpp"
#include "harness/measure/streams.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/memory/pattern.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/options.hpp"
#include "harness/run/registry.hpp"
#include "kernels/kernels.hpp"

namespace gpu_bench {
namespace {

// What the difference of a sample's two chases lasts: long against the event timer's tick and the
// samples' jitter, short enough that the family's cases take a few seconds in all.
constexpr double kTargetS = 250e-6;
// At most this many lines are read back to check the cycle after the samples, spread over the footprint.
constexpr std::uint64_t kCheckedLines = 65536;

mem_kind host_kind_of(latency_mem m) {
  switch (m) {
    case latency_mem::pinned:
      return mem_kind::pinned;
    case latency_mem::registered:
      return mem_kind::registered;
    default:
      return mem_kind::managed_fault;  // cudaMallocManaged, first touched on the host
  }
}

// Managed pages stay on the host and are mapped for the GPU up front: its loads cross the link, and never
// fault a page over to the GPU.
void advise_host_resident(void* p, std::size_t bytes, int device) {
  cudaMemLocation host{};
  host.type = cudaMemLocationTypeHost;
  cudaMemLocation gpu{};
  gpu.type = cudaMemLocationTypeDevice;
  gpu.id = device;
  CUDA_CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, host));
  CUDA_CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetAccessedBy, gpu));
}

// Makes the chase's host lines come from host DRAM: the cycle was written through the GPU, whose writes the
// host may keep in its last-level cache, and the page touching before that left lines in the CPU's caches;
// a load the host answers from a cache is faster than one from DRAM, by how much of the footprint a cache
// still holds. Only the CPU cache line holding each line's pointer is read by the chase. On every core: a
// flush waits on every other core's caches (and another socket's), and its set-up grows with the
// footprint with nothing of it measured.
void flush_from_cpu_caches(const char* host, std::uint64_t lines) {
  parallel_slices(lines, 4096, [host](std::size_t first, std::size_t last) {
#if defined(__x86_64__) || defined(__i386__)
    for (std::size_t i = first; i < last; ++i) _mm_clflush(host + i * kChaseLineBytes);
    _mm_mfence();
#elif defined(__aarch64__)
    for (std::size_t i = first; i < last; ++i) asm volatile("dc civac, %0" ::"r"(host + i * kChaseLineBytes) : "memory");
    asm volatile("dsb sy" ::: "memory");
#else
    (void)host;
    (void)first;
    (void)last;
#endif
  });
}

// The lines a case chases through: memory of exactly the footprint, as tests/gpu/bare_chase allocates
// it. A cached buffer may be larger than the footprint and hold another case's cycle before: its lines would
// lie in other pages, other DRAM and other TLB entries than the footprint's own allocation gives them.
struct chase_memory {
  std::optional<device_buffer> device;
  std::optional<host_buffer> host;
  char* gpu = nullptr;  // the address the chase follows (one address space: the same from every GPU)

  chase_memory(const latency_case& c, int gpu_index) {
    if (c.mem == latency_mem::device || c.mem == latency_mem::peer) {
      device_scope on(c.mem == latency_mem::peer ? c.peer : gpu_index);
      device.emplace(c.bytes);
      gpu = static_cast<char*>(device->data());
      return;
    }
    host.emplace(host_kind_of(c.mem), c.bytes, host_node_for(gpu_index, c.numa));
    if (c.mem == latency_mem::managed) advise_host_resident(host->data(), host->bytes(), gpu_index);
    gpu = static_cast<char*>(host->device_ptr());
  }
};

// A process allocates each footprint once, of each kind and placement, and keeps it: every case writes its
// whole cycle over the memory, so the stride and random cases of a footprint share one allocation, still
// of exactly the footprint, and a round pins each 256 MiB of host memory once (about half a second to
// pin and free on an H100's host) rather than once per case. A GPU's memory that other GPUs chase through
// is one allocation for all of them.
chase_memory& chase_memory_for(const latency_case& c, int device) {
  using key = std::tuple<int, latency_mem, std::uint64_t, numa_place>;
  // Never destroyed: freeing pinned memory after the CUDA runtime has shut down at exit would fail.
  static auto& kept = *new std::map<key, chase_memory>();
  const key k{c.mem == latency_mem::peer ? c.peer : device, c.mem, c.bytes, c.numa};
  if (const auto it = kept.find(k); it != kept.end()) return it->second;
  try {
    return kept.emplace(k, chase_memory(c, device)).first->second;
  } catch (const allocation_error&) {
    // The memory kept for other footprints, or the buffer cache, may hold what this one needs.
    kept.clear();
    buffer_cache::instance().clear();
    return kept.emplace(k, chase_memory(c, device)).first->second;
  }
}

// GPU `from` maps GPU `to`'s memory for one case (cudaDeviceEnablePeerAccess, as the Peer family's
// peer_access:on), and leaves the pair as it found it: the Peer family keeps every pair in the state it last
// set and counts on finding it so. A pair found already on (a Peer case before this one in the process) stays on.
class peer_mapping {
 public:
  peer_mapping(int from, int to) : from_(from), to_(to) {
    device_scope on(from);
    enabled_ = enable_peer_access(from, to);
  }
  ~peer_mapping() {
    if (!enabled_) return;
    device_scope on(from_, std::nothrow);
    // A case that threw may have left a chase running through the mapping.
    CUDA_CHECK_NOTHROW(cudaDeviceSynchronize());
    CUDA_CHECK_NOTHROW(cudaDeviceDisablePeerAccess(to_));
  }
  peer_mapping(const peer_mapping&) = delete;
  peer_mapping& operator=(const peer_mapping&) = delete;

 private:
  int from_, to_;
  bool enabled_ = false;
};

void run_latency(benchmark::State& state, const latency_case& c) {
  const int device = current_device();
  const std::uint64_t lines = chase_lines(c.bytes);
  const bool host_side = in_host_memory(c.mem);
  const bool uncached = across_link(c.mem);
  std::optional<peer_mapping> mapped;
  if (c.mem == latency_mem::peer) {
    int can = 0;
    CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device, c.peer));
    if (!can)
      return fail_case(state, "GPU " + std::to_string(device) + " cannot map GPU " + std::to_string(c.peer) +
                                  "'s memory (cudaDeviceCanAccessPeer says no), so its loads cannot reach it");
    mapped.emplace(device, c.peer);
  }
  if (c.mem == latency_mem::managed) {
    std::size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (c.bytes > free_b)
      return fail_case(state, "managed memory of " + format_bytes(c.bytes) + " is more than the " +
                                  format_bytes(free_b) + " GPU " + std::to_string(device) + " has free");
  }
  if (c.numa == numa_place::remote && !host_node_for(device, c.numa))
    return fail_case(state, "no NUMA node remote from GPU " + std::to_string(device) + ": " +
                                numa_unbound_reason(device).value_or("no other node has memory"));
  stream_set& ss = stream_set::cached(1);
  const cudaStream_t s = ss.origin();
  chase_memory& mem = chase_memory_for(c, device);
  char* const base = mem.gpu;

  // The cycle, written once through the GPU's addresses before any sample; the chase starts at line 0. Every
  // step goes on the case's stream: it does not wait for the legacy default stream, and a cudaMemcpy from
  // pageable memory returns before its data has landed, so the kernel could otherwise write the cycle from
  // a table still half copied.
  const std::vector<std::uint32_t> next = chase_cycle(c.bytes, c.pattern);
  device_buffer next_dev(next.size() * sizeof(std::uint32_t));
  CUDA_CHECK(cudaMemcpyAsync(next_dev.data(), next.data(), next_dev.bytes(), cudaMemcpyHostToDevice, s));
  kernels::write_cycle(base, static_cast<const std::uint32_t*>(next_dev.data()), lines, kChaseLineBytes, s);
  if (c.mem == latency_mem::managed) {  // wherever the GPU's writes left a page, it goes back to the host
    cudaMemLocation host{};
    host.type = cudaMemLocationTypeHost;
    CUDA_CHECK(cudaMemPrefetchAsync(base, lines * kChaseLineBytes, host, 0, s));
  }
  device_buffer cursor(sizeof(void*));
  CUDA_CHECK(cudaMemcpyAsync(cursor.data(), &base, sizeof(void*), cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  if (host_side) flush_from_cpu_caches(static_cast<const char*>(mem.host->data()), lines);

  std::uint64_t walked = 0;  // loads enqueued since line 0: where the chase must stand
  auto chase = [&](std::uint64_t loads) {
    walked += loads;  // counted as enqueued: a launch that throws after this has still run its loads
    kernels::chase(static_cast<void**>(cursor.data()), loads, uncached, s);
  };
  const std::uint64_t warm = chase_warm_loads(uncached, c.bytes);
  if (warm > 0) {
    chase(warm);
    CUDA_CHECK(cudaStreamSynchronize(s));
  }
  // The loads per chase follow from the footprint alone, never from a measurement: every round of a case
  // must time the same number of loads, as its figure is the center of the rounds' medians.
  const std::uint64_t loads = chase_loads_for(expected_latency_s(uncached, c.bytes), kTargetS);
  chase_position expected{next};

  case_plan plan;
  // Ungated: the difference of the two chases already leaves the launch out, and the gate's spin kernel
  // before each chase would make what the GPU ran just before it (and on which SM the chase lands) differ
  // from a chase launched alone, as the bare chase and any application launch it.
  plan.measure = [&] {
    const sample once = ss.measure(false, [&] { chase(loads); });
    const sample twice = ss.measure(false, [&] { chase(2 * loads); });
    sample out{chase_difference_s(once.seconds, twice.seconds), once.host_s + twice.host_s};
    out.wall_s = once.wall_s + twice.wall_s;
    return out;
  };
  plan.verify = [&]() -> std::string {
    void* at = nullptr;
    CUDA_CHECK(cudaMemcpyAsync(&at, cursor.data(), sizeof(void*), cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    const auto offset =
        static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(at) - reinterpret_cast<std::uintptr_t>(base));
    if (std::string why = expected.problem(offset, walked); !why.empty()) return why;
    const scratch_word w = device_scratch_word();
    *static_cast<volatile unsigned long long*>(w.host) = 0;
    const std::uint64_t step = (lines + kCheckedLines - 1) / kCheckedLines;
    kernels::count_cycle_mismatches(base, static_cast<const std::uint32_t*>(next_dev.data()), lines, kChaseLineBytes,
                                    step, static_cast<unsigned long long*>(w.dev), s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    const unsigned long long bad = *static_cast<volatile unsigned long long*>(w.host);
    if (bad > 0)
      return "the cycle is broken: " + std::to_string(bad) + " of the lines read back do not point to their next line";
    return {};
  };
  plan.notes.emplace_back("ungated");
  if (uncached) plan.notes.emplace_back("uncached loads");
  const auto t = run_case(state, plan);
  if (!t) return;
  state.counters["latency_ns"] = latency_ns(t->time_s(), loads);
  state.counters["loads"] = static_cast<double>(loads);
  state.counters["warm_loads"] = static_cast<double>(warm);
}

// The default footprints: device (and peer) memory from inside L1 (16 KiB) to inside L2 (1 MiB, 32 MiB: H100
// and H200 have 50 MB) to far beyond it (1 GiB, where the random order also misses the TLB); host memory at
// 1 MiB and 256 MiB. Under --sizes, every kind at every size given; of a named sweep, the sizes of a line and
// more.
std::vector<std::uint64_t> footprints(bool host_memory) {
  const options& o = current_options();
  if (o.sizes_spec == "pow4")
    return host_memory ? std::vector<std::uint64_t>{1u << 20, 256u << 20}
                       : std::vector<std::uint64_t>{16u << 10, 1u << 20, 32u << 20, 1u << 30};
  std::vector<std::uint64_t> out;
  for (std::uint64_t n : o.sizes)
    if (o.sizes_spec != "pow2" || n >= kChaseLineBytes) out.push_back(n);
  return out;
}

// What joins two GPUs as CUDA ranks the pair, asked without a context or NVML so that registering the cases
// stays cheap: peer access, cudaDevP2PAttrPerformanceRank and native atomics (NVLink has them, PCIe seldom).
std::optional<std::string> ask_link_class(int from, int to) {
  int can = 0;
  if (cudaDeviceCanAccessPeer(&can, from, to) != cudaSuccess) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  if (!can) return std::nullopt;
  auto attribute = [&](cudaDeviceP2PAttr a) {
    int v = -1;
    if (cudaDeviceGetP2PAttribute(&v, a, from, to) != cudaSuccess) {
      (void)cudaGetLastError();
      return -1;
    }
    return v;
  };
  return "rank" + std::to_string(attribute(cudaDevP2PAttrPerformanceRank)) + "_atomics" +
         std::to_string(attribute(cudaDevP2PAttrNativeAtomicSupported));
}

// ask_link_class once per pair in a process: under --device=all every GPU's registration looks at every pair.
// Listing as if for N GPUs (--list_gpus) there is nothing to ask: every pair is of one class, as the Peer
// family takes them there, so the listing holds the mem:peer cases a node of one link class registers.
std::optional<std::string> cuda_link_class(int from, int to) {
  if (current_options().list_gpus > 0) return std::string("listed");
  static std::map<std::pair<int, int>, std::optional<std::string>> known;
  const auto key = std::make_pair(from, to);
  if (const auto it = known.find(key); it != known.end()) return it->second;
  return known[key] = ask_link_class(from, to);
}

const family_registration registration{[](family_descriptor& f) {
  f.name = "Latency";
  f.summary =
      "how long one load from one GPU thread takes, following pointers through device, host, managed or another "
      "GPU's memory";
  f.axes = {{"mem", "{device,pinned,registered,managed,peer}"},
            optional_axis("peer", "{j}"),
            optional_axis("numa", "remote"),
            {"pattern", "{stride,random}"},
            {"bytes", "{N}"}};
  f.help =
      f.name_pattern() +
      "    One GPU thread follows a cycle of pointers, one per 128-byte line of an N-byte footprint, each load's\n"
      "    address the value of the one before: stride visits the lines in address order, random in a random\n"
      "    cyclic order from a fixed seed (no prefetch helps; the loads spread over DRAM pages and TLB entries).\n"
      "    The cycle is written once per case into memory of exactly N bytes (allocated once per process for\n"
      "    each kind and N), through the GPU's addresses, and walked once in full before any sample where that\n"
      "    takes at most 0.2 s (counter warm_loads); each launch goes on from where the last one stopped. A\n"
      "    sample times a chase of L loads and one of 2L, each between its own events, ungated: their\n"
      "    difference is L loads without the launch.\n"
      "    device      cudaMalloc; loads through the caches: L1, L2 and HBM as N grows\n"
      "    pinned      cudaHostAlloc, mapped\n"
      "    registered  page-aligned malloc'd memory, pinned by cudaHostRegister\n"
      "    managed     cudaMallocManaged, its pages advised to stay on the host and mapped for the GPU\n"
      "                Loads from pinned, registered and managed memory are ld.global.cv, fetched from the\n"
      "                host whatever a cache holds: every load crosses the link, to lines flushed from the\n"
      "                CPU's caches once the cycle is written.\n"
      "    peer        cudaMalloc on GPU j, mapped for this GPU by cudaDeviceEnablePeerAccess for the case (and\n"
      "                left as the case found it); ld.global.cv, so every load crosses NVLink or PCIe to GPU j,\n"
      "                whose L2 answers it or its HBM beyond. With two GPUs or more, one pair of each kind of\n"
      "                link (peer access, CUDA's performance rank, native atomics): from this GPU to the\n"
      "                lowest-numbered GPU of each kind; under --device=all the node's lowest-numbered pair of\n"
      "                each kind only; every GPU this one can map under --full.\n"
      "    counters    latency_ns (the median difference / L), loads (L: a power of two from the kind and N, so\n"
      "                that the difference lasts about 0.25 ms, the same in every run), samples, noise_pct.\n"
      "    sizes       device and peer 16 KiB, 1 MiB, 32 MiB, 1 GiB, host kinds 1 MiB, 256 MiB by default; --sizes\n"
      "                gives others, each at least one line (128 B) and no more than the GPU or host holds.\n"
      "  Where the host has more than one NUMA node with memory, pinned and registered cases gain a numa:remote\n"
      "  twin, as Transfer's: the lines on another node than the GPU's.\n";
  f.headline = "latency_ns";
  f.unit = "ns";
  f.better_is = better::lower;
  f.kind = headline_kind::time;
  f.host_link = "mem:pinned|mem:registered|mem:managed";
  f.plot = "x=bytes;series=mem,peer,numa,pattern;xlabel=footprint";
  f.scope = family_scope::single_gpu;
  f.smoke = "^Latency/.*pattern:random/";
  f.min_bytes = kChaseLineBytes;
  f.buffers_of_size = 1;  // the footprint, of device or of host memory (beside it the cycle's table, N / 32)
  f.register_cases = [] {
    const options& o = current_options();
    latency_plan plan;
    plan.numa_remote = numa_axis_available();
    plan.device_footprints = footprints(false);
    plan.host_footprints = footprints(true);
    plan.peers = chased_peers(registering_device(), visible_gpu_count(), o.full, o.all_devices, cuda_link_class);
    for (const latency_case& c : latency_grid(plan)) {
      std::vector<int> also;  // the GPU whose memory a peer case reads, sampled for health beside this one
      if (c.mem == latency_mem::peer) also.push_back(c.peer);
      register_case(
          latency_name(c), [c](benchmark::State& st) { run_latency(st, c); }, also);
    }
  };
}};

}  // namespace
}  // namespace gpu_bench
