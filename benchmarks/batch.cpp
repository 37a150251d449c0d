// Batch: N copies of S bytes each from pinned host memory to the GPU, at scattered addresses on both sides,
// issued three ways: N cudaMemcpyAsync calls (api:loop), one cudaMemcpyBatchAsync (api:batch, CUDA 12.8
// and later), or one kernel that reads the host memory directly (api:kernel). N x S bytes counted; GPU
// time from gated events around the whole batch (ungated, and labelled so, where the stream cannot queue
// that many copies behind the gate); the host time spent issuing it beside.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "harness/cuda/check.hpp"
#include "harness/cuda/device.hpp"
#include "harness/measure/gate.hpp"
#include "harness/measure/loop.hpp"
#include "harness/measure/rates.hpp"
#include "harness/measure/streams.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/memory/pattern.hpp"
#include "harness/run/failures.hpp"
#include "harness/run/options.hpp"
#include "harness/run/registry.hpp"
#include "kernels/kernels.hpp"

namespace gpu_bench {
namespace {

enum class batch_api { loop, batch, kernel };
}  // namespace
template <>
inline constexpr enum_entries<batch_api, 3> enum_names<batch_api> = {
    {{batch_api::loop, "loop"}, {batch_api::batch, "batch"}, {batch_api::kernel, "kernel"}}};
namespace {

struct batch_case {
  batch_api api;
  std::uint64_t copies;
  std::uint64_t bytes;  // of each copy
};

// Whether this build and this driver have cudaMemcpyBatchAsync; "" when they do, else why not.
std::string batch_api_missing() {
#if CUDART_VERSION >= 12080
  int driver = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  if (driver < 12080)
    return "skipped: cudaMemcpyBatchAsync needs a driver for CUDA 12.8 or later; this one supports " +
           std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10);
  return {};
#else
  return "skipped: gpu_bench was built with a CUDA toolkit older than 12.8, which has no cudaMemcpyBatchAsync";
#endif
}

void issue_batch(void* const* dsts, const void* const* srcs, const std::size_t* sizes, std::size_t count,
                 cudaStream_t s) {
#if CUDART_VERSION >= 12080
  cudaMemcpyAttributes attr{};
  attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  std::size_t attr_index = 0;
#if CUDART_VERSION >= 13000
  CUDA_CHECK(cudaMemcpyBatchAsync(dsts, srcs, sizes, count, &attr, &attr_index, 1, s));
#else
  std::size_t failed = 0;
  CUDA_CHECK(cudaMemcpyBatchAsync(const_cast<void**>(dsts), const_cast<void**>(srcs), const_cast<std::size_t*>(sizes),
                                  count, &attr, &attr_index, 1, &failed, s));
#endif
#else
  (void)dsts, (void)srcs, (void)sizes, (void)count, (void)s;
  throw std::logic_error("cudaMemcpyBatchAsync is not in this build");
#endif
}

// Copy i reads slot src_slot[i] of the host buffer and writes slot dst_slot[i] of the device buffer; slots
// are twice the copy's size apart (at least 512 B), and the two orders are independent shuffles, so neither
// side is one contiguous run.
struct batch_layout {
  std::size_t stride;
  std::vector<std::size_t> src_slot, dst_slot;

  batch_layout(std::size_t copies, std::size_t bytes)
      : stride(std::max<std::size_t>(512, 2 * ((bytes + 255) / 256 * 256))) {
    src_slot.resize(copies);
    std::iota(src_slot.begin(), src_slot.end(), std::size_t{0});
    dst_slot = src_slot;
    std::mt19937_64 rng(0x5ca77e4);
    std::shuffle(src_slot.begin(), src_slot.end(), rng);
    std::shuffle(dst_slot.begin(), dst_slot.end(), rng);
  }
  std::size_t span() const { return src_slot.size() * stride; }
};

void run_batch(benchmark::State& state, const batch_case& c) {
  if (c.api == batch_api::batch)
    if (const std::string why = batch_api_missing(); !why.empty()) return state.SkipWithError(why.c_str());
  const std::size_t n = c.copies, bytes = c.bytes;
  const batch_layout layout(n, bytes);
  auto& cache = buffer_cache::instance();
  const auto bufs = cache.acquire_with_retry([&] {
    return std::make_tuple(&cache.host(mem_kind::pinned, layout.span(), buffer_slot::batch),
                           &cache.device(layout.span(), buffer_slot::batch),
                           &cache.device(2 * n * sizeof(void*), buffer_slot::batch_table),
                           &cache.host(mem_kind::pinned, 64 << 10, buffer_slot::batch_prime),
                           &cache.device(64 << 10, buffer_slot::batch_prime));
  });
  host_buffer& host = *std::get<0>(bufs);
  device_buffer& dev = *std::get<1>(bufs);
  auto* host_bytes = static_cast<char*>(host.data());
  auto* host_mapped = static_cast<char*>(host.device_ptr());
  auto* dev_bytes = static_cast<char*>(dev.data());
  std::vector<const void*> srcs(n), mapped_srcs(n);
  std::vector<void*> dsts(n);
  const std::vector<std::size_t> sizes(n, bytes);
  for (std::size_t i = 0; i < n; ++i) {
    srcs[i] = host_bytes + layout.src_slot[i] * layout.stride;
    mapped_srcs[i] = host_mapped + layout.src_slot[i] * layout.stride;
    dsts[i] = dev_bytes + layout.dst_slot[i] * layout.stride;
  }
  // The kernel's pointer arrays, in device memory: sources at their mapped addresses.
  auto* table = static_cast<void**>(std::get<2>(bufs)->data());
  CUDA_CHECK(cudaMemcpy(table, mapped_srcs.data(), n * sizeof(void*), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(table + n, dsts.data(), n * sizeof(void*), cudaMemcpyHostToDevice));
  host_fill_pattern(host_bytes, layout.span(), next_seed());
  stream_set& streams = stream_set::cached(1);
  const cudaStream_t s = streams.origin();
  auto poison = [&] { CUDA_CHECK(cudaMemsetAsync(dev_bytes, 0xab, layout.span(), s)); };
  poison();
  CUDA_CHECK(cudaStreamSynchronize(s));

  case_plan plan;
  plan.reset_output = poison;
  stream_set::hooks hooks;
  // The copy-engine ways prime the engine with a small copy between buffers of their own.
  hooks.gate_timeout_s = std::max(0.1, 100e-6 * static_cast<double>(n));
  if (c.api != batch_api::kernel)
    hooks.prime = [&](int) {
      CUDA_CHECK(cudaMemcpyAsync(std::get<4>(bufs)->data(), std::get<3>(bufs)->data(),
                                 std::min<std::size_t>(bytes, 64 << 10), cudaMemcpyHostToDevice, s));
    };
  auto issue = [&] {
    switch (c.api) {
      case batch_api::loop:
        for (std::size_t i = 0; i < n; ++i)
          CUDA_CHECK(cudaMemcpyAsync(dsts[i], srcs[i], bytes, cudaMemcpyHostToDevice, s));
        break;
      case batch_api::batch:
        issue_batch(dsts.data(), srcs.data(), sizes.data(), n, s);
        break;
      case batch_api::kernel:
        kernels::scatter_copy(table, table + n, bytes, n, s);
        break;
    }
  };
  // A stream queues only so many commands behind a held gate (on an H100 with driver 580, 64 copies fit
  // and 1024 do not): past that the enqueue itself waits for the GPU and the gate times out. Such a case
  // runs ungated from then on, so its time includes the host's issuing, and its label says so. The gate
  // then holds for a tenth of a second and 100 us a copy at most (an enqueue takes a few microseconds a
  // copy), so finding out costs that rather than --gate_timeout_ms, and the process remembers the fewest
  // copies that did not queue, on each GPU: a case of as many or more runs ungated from its start.
  static std::map<int, std::size_t> fewest_unqueued;
  const int device = current_device();
  const auto known = fewest_unqueued.find(device);
  bool gated = known == fewest_unqueued.end() || n < known->second;
  auto run_ungated = [&] {
    gated = false;
    add_note(state, "ungated: more copies than a held stream queues");
  };
  if (!gated) run_ungated();
  plan.measure = [&] {
    if (gated) try {
        return streams.measure(true, issue, hooks);
      } catch (const gate_timeout&) {
        auto& fewest = fewest_unqueued.try_emplace(device, n).first->second;
        fewest = std::min(fewest, n);
        run_ungated();
      }
    return streams.measure(false, issue, hooks);
  };
  plan.verify = [&] {
    std::vector<char> back(layout.span());
    CUDA_CHECK(cudaStreamSynchronize(s));
    CUDA_CHECK(cudaMemcpy(back.data(), dev_bytes, back.size(), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < n; ++i)
      if (std::memcmp(back.data() + layout.dst_slot[i] * layout.stride, srcs[i], bytes) != 0)
        return "data check failed: copy " + std::to_string(i) + " of " + std::to_string(n) +
               " did not bring its source's bytes";
    return std::string();
  };
  const auto t = run_case(state, plan);
  if (!t) return;
  case_rates rates;
  rates.bytes = static_cast<double>(n) * static_cast<double>(bytes);
  rates.host_blocked = host_time::none;  // host_issue_us says it, per batch
  report_rates(state, *t, rates);
  state.counters["per_copy_us"] = t->time_s() / static_cast<double>(n) * 1e6;
  state.counters["host_issue_us"] = t->median_of([](const sample& x) { return x.host_s; }) * 1e6;
}

// S from 4 B to 1 MiB, N from 1 to 4096, at most 256 MiB a batch (1 GiB under --full); --sizes gives
// the copy sizes up to 1 MiB.
std::vector<batch_case> batch_grid(bool full, const std::vector<std::uint64_t>& sizes) {
  constexpr std::uint64_t kMaxCopy = 1 << 20;
  const std::uint64_t most = full ? std::uint64_t{1} << 30 : std::uint64_t{256} << 20;
  const std::vector<std::uint64_t> counts =
      full ? std::vector<std::uint64_t>{1, 4, 16, 64, 256, 1024, 4096} : std::vector<std::uint64_t>{1, 64, 1024, 4096};
  std::vector<batch_case> v;
  for (std::uint64_t bytes : sizes)
    for (std::uint64_t copies : counts)
      for (batch_api api : all_values<batch_api>())
        if (bytes <= kMaxCopy && copies * bytes <= most) v.push_back({api, copies, bytes});
  return v;
}

const family_registration registration{[](family_descriptor& f) {
  f.name = "Batch";
  f.summary = "many small copies at scattered addresses: a loop of calls, one batched call, or one kernel";
  f.axes = {{"api", "{loop,batch,kernel}"}, {"copies", "{N}"}, {"bytes", "{S}"}};
  f.help = f.name_pattern() +
           "    N copies of S bytes from pinned host memory to the GPU, each at its own scattered address on both\n"
           "    sides: api:loop issues N cudaMemcpyAsync calls, api:batch one cudaMemcpyBatchAsync (CUDA 12.8 and\n"
           "    later; skipped with a sentence where the toolkit or the driver lacks it), api:kernel one kernel that\n"
           "    reads the host memory through its mapping. S of 4 B, 4 KiB, 64 KiB, 1 MiB and N of 1, 64, 1024,\n"
           "    4096 by default (--full: S in powers of 4, N in powers of 4), at most 256 MiB a batch.\n"
           "    counters  gbps (N x S / the batch's GPU time), per_copy_us, host_issue_us (the host's time issuing\n"
           "              the batch); manual time is the whole batch's GPU time. A batch the stream cannot queue\n"
           "              behind a held gate (a loop of 1024 copies on an H100) runs ungated, labelled so: its time\n"
           "              then includes the host's issuing.\n";
  f.headline = "gbps";
  f.unit = "GB/s";
  f.better_is = better::higher;
  f.kind = headline_kind::rate;
  f.host_link = "yes";
  f.fast_cpu = "yes";
  f.machine_variance = "yes";
  f.host_rounds = "yes";
  // Its copies under 64 KiB cost 1.4 to 1.8 s a round on an H200 (e7b9227's A/A pair). In that pair 10 of their
  // 48 case-runs had a round 10% to 3 times slower than their fastest: from five rounds, the fastest half
  // leaves such a round out (docs/methodology.md, "More rounds for the host-driven cases").
  f.small_rounds = "yes";
  f.small_rounds_below = 64 << 10;
  f.machine_variance_cause = kHostCpuStateCause;
  f.plot = "x=bytes;series=api;panel=copies";
  f.scope = family_scope::single_gpu;
  f.smoke = "^Batch/api:(loop|batch|kernel)/copies:(1|64)/";
  f.register_cases = [] {
    const std::vector<std::uint64_t> sizes = sizes_or(
        current_options().full ? std::vector<std::uint64_t>{4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576}
                               : std::vector<std::uint64_t>{4, 4096, 65536, 1048576});
    for (const batch_case& c : batch_grid(current_options().full, sizes)) {
      case_name name("Batch");
      name.add("api", c.api).add("copies", c.copies).add("bytes", c.bytes);
      register_case(name, [c](benchmark::State& st) { run_batch(st, c); });
    }
  };
}};

}  // namespace
}  // namespace gpu_bench
