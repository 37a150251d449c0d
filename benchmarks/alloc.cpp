// Alloc: what allocating and pinning cost, timed on the host with a steady clock (manual time is that
// host time): cudaMallocHost, cudaFreeHost, cudaHostRegister and cudaHostUnregister of already-touched
// memory, cudaMalloc, and cudaMallocAsync from the device's default pool. Each allocation is then checked
// to carry data. gbps is bytes / host time: how fast memory gets pinned or allocated.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"
#include "harness/measure/loop.hpp"
#include "harness/measure/rates.hpp"
#include "harness/measure/verify.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/memory/pattern.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/options.hpp"
#include "harness/run/registry.hpp"

namespace gpu_bench {
namespace {

enum class alloc_op { malloc_host, free_host, host_register, host_unregister, malloc, malloc_async };
}  // namespace
template <>
inline constexpr enum_entries<alloc_op, 6> enum_names<alloc_op> = {{{alloc_op::malloc_host, "malloc_host"},
                                                                    {alloc_op::free_host, "free_host"},
                                                                    {alloc_op::host_register, "host_register"},
                                                                    {alloc_op::host_unregister, "host_unregister"},
                                                                    {alloc_op::malloc, "malloc"},
                                                                    {alloc_op::malloc_async, "malloc_async"}}};
namespace {

std::string check_allocation(alloc_op op, std::size_t bytes, host_buffer* plain, const cuda_stream& s);

// malloc_async only: whether the device's default pool already holds the memory an allocation takes.
enum class pool_state { cold, warm };
}  // namespace
template <>
inline constexpr enum_entries<pool_state, 2> enum_names<pool_state> = {
    {{pool_state::cold, "cold"}, {pool_state::warm, "warm"}}};
namespace {

// The default pool's release threshold for a case's life: 0 (the driver's default) gives memory back at
// every synchronisation, so with a trim before each sample every allocation is served cold; the largest
// value keeps what was freed, so every allocation after the first is served from the pool.
class pool_threshold {
 public:
  explicit pool_threshold(pool_state p) {
    CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool_, current_device()));
    CUDA_CHECK(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &saved_));
    std::uint64_t want = p == pool_state::warm ? ~std::uint64_t{0} : 0;
    CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &want));
  }
  ~pool_threshold() {
    CUDA_CHECK_NOTHROW(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &saved_));
    CUDA_CHECK_NOTHROW(cudaMemPoolTrimTo(pool_, 0));
  }
  pool_threshold(const pool_threshold&) = delete;
  pool_threshold& operator=(const pool_threshold&) = delete;
  void trim() const { CUDA_CHECK(cudaMemPoolTrimTo(pool_, 0)); }

 private:
  cudaMemPool_t pool_ = nullptr;
  std::uint64_t saved_ = 0;
};

void run_alloc(benchmark::State& state, alloc_op op, std::size_t bytes, pool_state pool) {
  using clock = std::chrono::steady_clock;
  cuda_stream s;
  std::optional<pool_threshold> threshold;
  if (op == alloc_op::malloc_async) threshold.emplace(pool);
  // Ordinary memory, touched, for register/unregister: the cost of pinning, not of first touch.
  host_buffer* plain = nullptr;
  if (op == alloc_op::host_register || op == alloc_op::host_unregister)
    plain = &buffer_cache::instance().host(mem_kind::pageable, bytes, buffer_slot::h2d);
  auto since = [](clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); };
  // One allocation-and-release; returns the host time of the measured call.
  auto once = [&] {
    void* p = nullptr;
    double t = 0;
    clock::time_point t0;
    switch (op) {
      case alloc_op::malloc_host:
        t0 = clock::now();
        CUDA_CHECK(cudaMallocHost(&p, bytes));
        t = since(t0);
        CUDA_CHECK(cudaFreeHost(p));
        break;
      case alloc_op::free_host:
        CUDA_CHECK(cudaMallocHost(&p, bytes));
        t0 = clock::now();
        CUDA_CHECK(cudaFreeHost(p));
        t = since(t0);
        break;
      case alloc_op::host_register:
        t0 = clock::now();
        CUDA_CHECK(cudaHostRegister(plain->data(), bytes, cudaHostRegisterDefault));
        t = since(t0);
        CUDA_CHECK(cudaHostUnregister(plain->data()));
        break;
      case alloc_op::host_unregister:
        CUDA_CHECK(cudaHostRegister(plain->data(), bytes, cudaHostRegisterDefault));
        t0 = clock::now();
        CUDA_CHECK(cudaHostUnregister(plain->data()));
        t = since(t0);
        break;
      case alloc_op::malloc:
        t0 = clock::now();
        CUDA_CHECK(cudaMalloc(&p, bytes));
        t = since(t0);
        CUDA_CHECK(cudaFree(p));
        break;
      case alloc_op::malloc_async:
        t0 = clock::now();
        CUDA_CHECK(cudaMallocAsync(&p, bytes, s.get()));
        t = since(t0);
        CUDA_CHECK(cudaFreeAsync(p, s.get()));
        s.synchronize();
        break;
    }
    return t;
  };
  case_plan plan;
  plan.timer = timer_kind::host_clock;
  if (threshold && pool == pool_state::cold) plan.prepare = [&] { threshold->trim(); };
  plan.measure = [&] { return sample{once()}; };
  // Pinning and unpinning host memory leave nothing behind that the next pair would find: every sample
  // starts from the same state, so a warm-up would settle nothing, while one of 1 GiB costs as much as a
  // sample (half a second). The device allocators keep state (a pool, address ranges) and are warmed.
  plan.already_warm = op == alloc_op::malloc_host || op == alloc_op::free_host || op == alloc_op::host_register ||
                      op == alloc_op::host_unregister;
  plan.verify = [&] { return check_allocation(op, bytes, plain, s); };
  const auto t = run_case(state, plan);
  if (!t) return;
  case_rates rates;
  rates.bytes = static_cast<double>(bytes);
  rates.bytes_per_second = false;
  rates.host_blocked = host_time::none;  // the host time is the case's time
  report_rates(state, *t, rates);
}

// The memory these calls hand out must carry data: one more allocation, filled and checked by the GPU.
std::string check_allocation(alloc_op op, std::size_t bytes, host_buffer* plain, const cuda_stream& s) {
  const std::uint32_t seed = next_seed();
  std::string bad;
  if (op == alloc_op::malloc || op == alloc_op::malloc_async) {
    device_buffer d(bytes);
    const region r = region_of(d, bytes);
    fill_pattern(r, seed, side::gpu, s.get());
    bad = verify_message(r, seed, side::gpu, s.get(), "the allocation");
  } else if (plain) {
    CUDA_CHECK(cudaHostRegister(plain->data(), bytes, cudaHostRegisterMapped));
    void* dev = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(&dev, plain->data(), 0));
    const region r{plain->data(), dev, bytes};
    fill_pattern(r, seed, side::gpu, s.get());
    bad = verify_message(r, seed, side::host, s.get(), "the registered memory");
    CUDA_CHECK(cudaHostUnregister(plain->data()));
  } else {
    host_buffer h(mem_kind::pinned, bytes);
    const region r = region_of(h, bytes);
    fill_pattern(r, seed, side::gpu, s.get());
    bad = verify_message(r, seed, side::host, s.get(), "the pinned allocation");
  }
  return bad;
}

const family_registration registration{[](family_descriptor& f) {
  f.name = "Alloc";
  f.summary = "what allocating and pinning cost the host";
  f.axes = {{"op", "{malloc_host,free_host,host_register,host_unregister,malloc,malloc_async}"},
            optional_axis("pool", "{cold,warm}"),
            {"bytes", "{N}"}};
  f.help = f.name_pattern({{"op", "{malloc_host,free_host,host_register,host_unregister,malloc}"}, "bytes"}) +
           f.name_pattern({{"op", "malloc_async"}, "pool", "bytes"}) +
           "    the host time of one call (manual time is host time here); register/unregister work on memory\n"
           "    already touched; malloc_async allocates from the device's default pool on a stream and frees it\n"
           "    again each time: pool:cold trims the pool before every sample (the memory comes from the driver),\n"
           "    pool:warm keeps what was freed (the memory comes from the pool). gbps: bytes / host time. Sizes\n"
           "    1 MiB, 64 MiB, 1 GiB unless --sizes is given.\n";
  f.headline = "real_time";
  f.unit = "us";
  f.better_is = better::lower;
  f.kind = headline_kind::time;
  f.host_link = "no";
  f.host_side = "yes";
  f.fast_cpu = "yes";
  f.machine_variance = "yes";
  f.machine_variance_cause = kHostCpuStateCause;
  // An allocator that holds memory another case freed serves 1 MiB in microseconds; one that never held any
  // takes hundreds. Alloc's cases under 1 GiB ride the link rounds and are their first cases (round_order), so
  // in every round they run before any other case has allocated. Those of 1 GiB cost about a second each, so
  // they keep three rounds, and run after the link rounds' cases, as any larger case of --sizes does.
  f.small_rounds = "yes";
  f.small_rounds_below = 1ull << 30;
  // Way 2: the cases of 1 GiB and more run after the link rounds' cases, not first.
  f.revisions = "2=bytes>=" + std::to_string(f.small_rounds_below);
  f.plot = "x=bytes;series=op";
  f.scope = family_scope::single_gpu;
  f.smoke = "^Alloc/";
  f.register_cases = [] {
    const std::vector<std::uint64_t> sizes = sizes_or({1u << 20, 64u << 20, 1u << 30});
    for (alloc_op op : {alloc_op::malloc_host, alloc_op::free_host, alloc_op::host_register, alloc_op::host_unregister,
                        alloc_op::malloc, alloc_op::malloc_async})
      for (pool_state pool : {pool_state::cold, pool_state::warm}) {
        if (op != alloc_op::malloc_async && pool == pool_state::warm) continue;
        for (std::uint64_t n : sizes) {
          case_name name("Alloc");
          name.add("op", op);
          if (op == alloc_op::malloc_async) name.add("pool", pool);
          name.add("bytes", n);
          register_case(name, [op, n, pool](benchmark::State& st) { run_alloc(st, op, n, pool); });
        }
      }
  };
}};

}  // namespace
}  // namespace gpu_bench
