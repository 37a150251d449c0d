// GPU tests of the harness: every memory kind allocates, carries the pattern and is checked; the checks
// catch planted corruption; the gate holds a stream until opened and fails loudly when it times out.
// Exits 77 (CTest's skip) when no GPU is visible.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "harness/cuda/check.hpp"
#include "harness/measure/gate.hpp"
#include "harness/measure/streams.hpp"
#include "harness/measure/verify.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/memory/pattern.hpp"
#include "kernels/kernels.hpp"

using namespace gpu_bench;

TEST(HostBuffer, EveryKindCarriesThePatternBothWays) {
  const std::size_t bytes = (1u << 20) + 12;  // not a multiple of 16: the copy kernel's tail path runs too
  cuda_stream s;
  device_buffer dev(bytes);
  for (mem_kind k : all_values<mem_kind>()) {
    if (!is_host_kind(k)) continue;
    SCOPED_TRACE(std::string(to_name(k)));
    host_buffer h(k, bytes);
    const region hr = region_of(h, bytes), dr = region_of(dev, bytes);
    const std::uint32_t seed = next_seed();
    fill_pattern(hr, seed, side::host, s.get());
    fill_poison(dr, seed, side::gpu, s.get());
    EXPECT_EQ(count_mismatches(dr, seed, side::gpu, s.get()), bytes / 4);
    if (h.device_ptr())
      kernels::copy(dev.data(), h.device_ptr(), bytes, s.get());
    else
      CUDA_CHECK(cudaMemcpyAsync(dev.data(), h.data(), bytes, cudaMemcpyHostToDevice, s.get()));
    EXPECT_EQ(count_mismatches(dr, seed, side::gpu, s.get()), 0u);
    // and back, checked by the other processor where it can
    fill_poison(hr, seed, side::host, s.get());
    CUDA_CHECK(cudaMemcpyAsync(h.data(), dev.data(), bytes, cudaMemcpyDeviceToHost, s.get()));
    EXPECT_EQ(count_mismatches(hr, seed, side::host, s.get()), 0u);
    if (h.device_ptr()) {
      EXPECT_EQ(count_mismatches(hr, seed, side::gpu, s.get()), 0u);
    }
  }
}

// Every kind allocated on each node with memory: ordinary pages (pageable, registered) must say where they
// are and be there; the driver's own (pinned, write_combined, mapped, managed) must be there where the
// kernel says. On a one-node host this still runs the binding through every allocation path.
TEST(HostBuffer, BoundToANodeLandsThere) {
  if (!numa_binding_available()) GTEST_SKIP() << "no libnuma in this build, or no NUMA in this kernel";
  for (int node : host_memory_nodes()) {
    for (mem_kind k : all_values<mem_kind>()) {
      if (!is_host_kind(k)) continue;
      SCOPED_TRACE(std::string(to_name(k)) + " on node " + std::to_string(node));
      host_buffer h(k, 4u << 20, node);
      if (k == mem_kind::pageable || k == mem_kind::registered) {
        ASSERT_TRUE(h.numa_node().has_value());
      }
      if (h.numa_node()) {
        EXPECT_EQ(*h.numa_node(), node);
      }
      std::printf("%s on node %d: the kernel reports %s\n", std::string(to_name(k)).c_str(), node,
                  h.numa_node() ? ("node " + std::to_string(*h.numa_node())).c_str() : "no node");
    }
  }
}

TEST(Verify, GpuCheckCatchesOneBadWord) {
  const std::size_t bytes = 4u << 20;
  cuda_stream s;
  host_buffer h(mem_kind::pinned, bytes);
  const std::uint32_t seed = next_seed();
  const region r = region_of(h, bytes);
  fill_pattern(r, seed, side::gpu, s.get());
  CUDA_CHECK(cudaStreamSynchronize(s.get()));
  static_cast<std::uint32_t*>(h.data())[777777] ^= 0x100;
  EXPECT_EQ(count_mismatches(r, seed, side::gpu, s.get()), 1u);
  EXPECT_NE(verify_message(r, seed, side::gpu, s.get(), "test").find("1 of"), std::string::npos);
}

TEST(Gate, HoldsTheStreamUntilOpened) {
  gate g(5.0);
  stream_set ss(2);
  cuda_event done;
  {
    gate::scoped held(&g, ss.origin());
    done.record(ss.origin());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(cudaEventQuery(done.get()), cudaErrorNotReady);
  }
  CUDA_CHECK(cudaEventSynchronize(done.get()));
  EXPECT_NO_THROW(g.check());
}

TEST(Gate, DisabledHoldsNothing) {
  gate g(5.0, false);  // --gate=off
  cuda_stream s;
  cuda_event done;
  g.close(s.get());
  done.record(s.get());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(cudaEventQuery(done.get()), cudaSuccess);  // not held, though never opened
  g.open();
  EXPECT_NO_THROW(g.check());
}

TEST(Gate, TimesOutLoudly) {
  gate g(0.05);
  cuda_stream s;
  g.close(s.get());
  s.synchronize();  // never opened: the spin kernel gives up after 50 ms
  EXPECT_THROW(g.check(), gate_timeout);
  g.open();
}

TEST(Timing, GatedTimeExcludesTheHostsEnqueueDelay) {
  // The host dawdles for 20 ms while enqueueing; behind the gate that must not show in GPU time.
  stream_set ss(1);
  device_buffer a(1 << 20), b(1 << 20);
  const sample gated = ss.measure(true, [&] {
    CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), 1 << 20, cudaMemcpyDeviceToDevice, ss.origin()));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CUDA_CHECK(cudaMemcpyAsync(a.data(), b.data(), 1 << 20, cudaMemcpyDeviceToDevice, ss.origin()));
  });
  EXPECT_LT(gated.seconds, 0.005);
  EXPECT_GE(gated.host_s, 0.02);
  const sample ungated = ss.measure(false, [&] {
    CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), 1 << 20, cudaMemcpyDeviceToDevice, ss.origin()));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CUDA_CHECK(cudaMemcpyAsync(a.data(), b.data(), 1 << 20, cudaMemcpyDeviceToDevice, ss.origin()));
  });
  EXPECT_GE(ungated.seconds, 0.019);
}

TEST(Timing, EveryStreamIsCovered) {
  // Work on a side stream counts in the sample's time, and in that stream's own span.
  stream_set ss(3);
  device_buffer a(64 << 20), b(64 << 20);
  const sample one = ss.measure(
      true, [&] { CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), 64 << 20, cudaMemcpyDeviceToDevice, ss[2])); });
  const sample none = ss.measure(true, [] {});
  EXPECT_GT(one.seconds, none.seconds + 10e-6);
  EXPECT_GT(one.spans.at(2), 10e-6);
  EXPECT_LT(one.spans.at(0), one.spans.at(2));
}

TEST(Timing, StreamsRunSideBySideWithoutAJoin) {
  // Two copies on two streams take about as long as the longer one, not their sum; a join on the origin
  // ends the sample no earlier than the last stream.
  stream_set ss(2);
  device_buffer a(256 << 20), b(256 << 20), c(256 << 20), d(256 << 20);
  auto both = [&] {
    CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), 256 << 20, cudaMemcpyDeviceToDevice, ss[0]));
    CUDA_CHECK(cudaMemcpyAsync(d.data(), c.data(), 16 << 20, cudaMemcpyDeviceToDevice, ss[1]));
  };
  const sample apart = ss.measure(true, both);
  EXPECT_NEAR(apart.seconds, std::max(apart.spans.at(0), apart.spans.at(1)), 20e-6);
  stream_set::hooks h;
  h.join_on_origin = true;
  const sample joined = ss.measure(true, both, h);
  EXPECT_GE(joined.seconds, std::max(joined.spans.at(0), joined.spans.at(1)));
  EXPECT_GE(joined.wall_s, joined.seconds * 0.5);
}

TEST(Allocation, TooLargeIsAClearError) {
  try {
    device_buffer huge(std::size_t{1} << 50);
    FAIL() << "a 1 PiB allocation succeeded";
  } catch (const allocation_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot allocate"), std::string::npos);
  }
  device_buffer fine(1 << 20);  // and the error did not stick
  EXPECT_NE(fine.data(), nullptr);
}

int main(int argc, char** argv) {
  setenv("CUDA_MODULE_LOADING", "EAGER", 1);  // as gpu_bench does: no lazy load behind a closed gate
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("no CUDA GPU is visible: skipping the GPU fixture tests\n");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
