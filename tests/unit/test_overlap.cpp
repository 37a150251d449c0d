#include <gtest/gtest.h>

#include <set>

#include "benchmarks/overlap/model.hpp"
#include "fixtures/run/timeline.hpp"

using namespace gpu_bench;

TEST(OverlapModel, IdealIsSerialForOneChunkAndTheBottleneckForMany) {
  const stage_times t{10e-3, 8e-3, 12e-3, 3e-3};
  EXPECT_DOUBLE_EQ(overlap_ideal_s(t, 1), 21e-3);  // in + kernel + out
  // The copy-in line, 10 + 11/4 = 12.75 ms, above the link's 12.
  EXPECT_NEAR(overlap_ideal_s(t, 4), 12.75e-3, 1e-12);
  // Link-bound: the chained copies themselves, whose fill and drain are in their own time.
  EXPECT_DOUBLE_EQ(overlap_ideal_s(t, 32), 12e-3);
  for (int s = 1; s < 64; ++s) EXPECT_LE(overlap_ideal_s(t, s + 1), overlap_ideal_s(t, s));
  // Kernel-bound: the kernels plus one chunk's copies.
  const stage_times k{2e-3, 2e-3, 3e-3, 20e-3};
  EXPECT_NEAR(overlap_ideal_s(k, 10), 20.4e-3, 1e-12);
  // Copy-in-bound with a free return path: all copies in, then one chunk's kernel and copy out.
  const stage_times in{10e-3, 1e-3, 10e-3, 1e-3};
  EXPECT_NEAR(overlap_ideal_s(in, 8), 10.25e-3, 1e-12);
}

// Small chunks: each copy's own cost dominates, and the copies of both directions, chained per stream as
// the pipeline has them, take longer than either direction alone. Their own time is the link's bound;
// adding a first copy in and a last copy out that run alone would count those twice (a pipeline of 64 KiB
// in 8 chunks ran 7 to 9% under such a bound on an H100).
TEST(OverlapModel, TheLinkBoundIsTheChainedCopiesThemselves) {
  const stage_times t{4e-3, 4e-3, 6e-3, 0.5e-3};
  EXPECT_DOUBLE_EQ(overlap_ideal_s(t, 8), 6e-3);
}

TEST(OverlapModel, TheSerialBoundIsTheSumOfItsStages) {
  // One chunk: nothing overlaps, so a serial schedule can reach its bound and no further.
  const stage_times t{10e-3, 9e-3, 12e-3, 3e-3};
  EXPECT_NEAR(overlap_ideal_s(t, 1), 22e-3, 1e-12);
}

TEST(OverlapModel, ChunksCoverEverythingOnceAndStartAligned) {
  for (std::size_t n : {std::size_t{1} << 27, std::size_t{1000}, std::size_t{64}, std::size_t{12345}}) {
    for (int chunks : {1, 2, 3, 8, 32}) {
      const auto b = chunk_bounds(n, chunks);
      ASSERT_EQ(b.size(), static_cast<std::size_t>(chunks));
      EXPECT_EQ(b.front().first, 0u);
      EXPECT_EQ(b.back().second, n);
      for (std::size_t i = 0; i < b.size(); ++i) {
        EXPECT_LE(b[i].first, b[i].second);
        if (i) {
          EXPECT_EQ(b[i].first, b[i - 1].second);
        }
        if (b[i].first < n) {
          EXPECT_EQ(b[i].first % 64, 0u);
        }
      }
    }
  }
}

TEST(OverlapModel, DefaultGridHasItsBaselinesAndUniqueNames) {
  const auto grid = overlap_grid(false);
  EXPECT_EQ(grid.size(), 43u);
  std::set<std::string> names;
  for (const auto& c : grid) {
    EXPECT_TRUE(names.insert(overlap_name(c).str()).second);
    if (c.sched == schedule::serial) {
      EXPECT_EQ(c.streams, 1);
      EXPECT_EQ(c.sync, sync_point::end);
    }
    // every pipelined case has the serial case of its memory, size and work to compare with
    bool has_serial = false;
    for (const auto& s : grid)
      has_serial |= s.sched == schedule::serial && s.mem == c.mem && s.bytes == c.bytes && s.work == c.work;
    EXPECT_TRUE(has_serial) << overlap_name(c).str();
  }
  EXPECT_TRUE(names.count("Overlap/schedule:breadth_first/mem:pinned/streams:8/bytes:536870912/work:1/sync:end"));
  EXPECT_TRUE(names.count("Overlap/schedule:depth_first/mem:pageable/streams:8/bytes:536870912/work:1/sync:end"));
  EXPECT_EQ(overlap_grid(true).size(), 2352u);
}

TEST(OverlapModel, GivenSizesReplaceTheCentreAndTheSizeSweep) {
  const std::vector<std::uint64_t> sizes = {4, 64 << 10};
  const auto grid = overlap_grid(false, sizes);
  // 43 default cases less the size sweep's 9, around each size given
  EXPECT_EQ(grid.size(), 2u * 34u);
  for (const auto& c : grid) EXPECT_TRUE(c.bytes == 4 || c.bytes == (64u << 10)) << overlap_name(c).str();
  const auto full = overlap_grid(true, sizes);
  EXPECT_EQ(full.size(), 2352u / 4u * 2u);
  // 4 B is one float: with 32 streams every chunk but the last is empty, and nothing is lost
  const auto b = chunk_bounds(1, 32);
  EXPECT_EQ(b.back().second, 1u);
}

TEST(OverlapModel, GateOnlyWhereTheEnqueueNeverWaits) {
  EXPECT_TRUE(overlap_gated({schedule::depth_first, mem_kind::pinned, 8, 1 << 20, 1, sync_point::end}));
  EXPECT_TRUE(overlap_gated({schedule::depth_first, mem_kind::pinned, 8, 1 << 20, 1, sync_point::per_stream}));
  EXPECT_FALSE(overlap_gated({schedule::depth_first, mem_kind::pinned, 8, 1 << 20, 1, sync_point::per_chunk}));
  EXPECT_FALSE(overlap_gated({schedule::depth_first, mem_kind::pageable, 8, 1 << 20, 1, sync_point::end}));
}

TEST(Timeline, ChromeTraceShape) {
  timeline t;
  const int pid = t.begin_case("Overlap/x:1");
  t.span(pid, 3, "h2d 0", "copy", 1.5, 2.25);
  const auto j = t.to_json();
  ASSERT_EQ(j["traceEvents"].size(), 2u);
  EXPECT_EQ(j["traceEvents"][0]["ph"], "M");
  EXPECT_EQ(j["traceEvents"][0]["args"]["name"], "Overlap/x:1");
  EXPECT_EQ(j["traceEvents"][1]["ph"], "X");
  EXPECT_EQ(j["traceEvents"][1]["tid"], 3);
  EXPECT_DOUBLE_EQ(j["traceEvents"][1]["dur"].get<double>(), 2.25);
  EXPECT_EQ(t.write(), "");  // not enabled: writes nothing, and says nothing
}
