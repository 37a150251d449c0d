#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "benchmarks/overlap/model.hpp"
#include "harness/run/timeline.hpp"

using namespace gpu_bench;

namespace {
// Stage times in milliseconds, as the counters read.
stage_times ms(double in, double out, double both, double kernel, double bidir_in = 0, double bidir_out = 0) {
  return {in * 1e-3, out * 1e-3, both * 1e-3, kernel * 1e-3, bidir_in * 1e-3, bidir_out * 1e-3};
}
}  // namespace

TEST(OverlapModel, IdealIsSerialForOneChunkAndTheBottleneckForMany) {
  const stage_times t = ms(10, 8, 18.5, 3);
  EXPECT_NEAR(overlap_ideal_s(t, 1), 21e-3, 1e-12);           // in + kernel + out
  EXPECT_NEAR(overlap_bound_lines(t, 1).link, 18e-3, 1e-12);  // one chunk overlaps nothing: in + out
  // Four chunks: the copy-in line is 10 + 11/4 = 12.75 ms. The link line: no copy out before (10 + 3)/4 =
  // 3.25 ms, no copy in for the last (3 + 8)/4 = 2.75 ms, and the 2 - 3.25/10 - 2.75/8 = 1.33125 payloads
  // left at the faster direction's rate both ways, 8 ms a payload (the chained stage's own, 14 ms for
  // 3/4 of both, is slower): 3.25 + 2.75 + 10.65 = 16.65.
  EXPECT_NEAR(overlap_bound_lines(t, 4).in, 12.75e-3, 1e-12);
  EXPECT_NEAR(overlap_ideal_s(t, 4), 16.65e-3, 1e-12);
  for (int s = 1; s < 64; ++s) EXPECT_LE(overlap_ideal_s(t, s + 1), overlap_ideal_s(t, s) + 1e-15);
  // Kernel-bound: the kernels plus one chunk's copies.
  const stage_times k = ms(2, 2, 3, 20, 2.2, 2.2);
  EXPECT_NEAR(overlap_ideal_s(k, 10), 20.4e-3, 1e-12);
  // Copy-in-bound with a free return path: all copies in, then one chunk's kernel and copy out.
  const stage_times in = ms(10, 1, 10, 1, 10, 1.5);
  EXPECT_NEAR(overlap_ideal_s(in, 8), 10.25e-3, 1e-12);
}

// The numbers of an H200's pinned 512 MiB, 8 chunks breadth first (results/aa/h200_default_110d606, run 2):
// the chained stage ran at 11.77 ms in some turns and near 12.9 in others, its pipeline at 12.19 in all.
// The link line takes the faster rate of both directions together the link showed, so a turn whose chained
// stage ran slow no longer lifts the link above what the pipeline did.
TEST(OverlapModel, TheLinkLineTakesTheFastestRateOfBothDirections) {
  const double ends = (9.724 + 9.739) / 8;
  // Slow chained stage, bidir at 10.6 ms each way: a payload both ways takes 10.6 ms, 5.3 one way, after
  // the ends each direction idles through.
  const stage_times slow = ms(9.724, 9.739, 12.9, 1.926, 10.6, 10.6);
  const double first = (9.724 + 1.926) / 8, last = (1.926 + 9.739) / 8;
  const double left = 2 - first / 9.724 - last / 9.739;
  EXPECT_NEAR(overlap_bound_lines(slow, 8).link, (first + last + left * 5.3) * 1e-3, 1e-12);
  EXPECT_GT(overlap_bound_lines(slow, 8).link, (ends + 7.0 / 8 * 10.6) * 1e-3);
  EXPECT_LT(overlap_ideal_s(slow, 8), 12.19e-3);
  // Fast chained stage: the link is the chained stage itself, which the bidir stage's rate would put higher.
  const stage_times fast = ms(9.724, 9.739, 11.77, 1.926, 10.9, 10.9);
  EXPECT_NEAR(overlap_bound_lines(fast, 8).link, 11.77e-3, 1e-12);
  // Either way the link is never above the chained stage.
  for (const stage_times& t : {slow, fast}) EXPECT_LE(overlap_bound_lines(t, 8).link, t.both_s + 1e-15);
}

// The two directions' spans differ when one finishes first: their rates add, so the middle is the payload
// both ways over that sum, the harmonic mean of the two spans.
TEST(OverlapModel, TheBidirRateIsTheSumOfBothDirectionsRates) {
  const stage_times t = ms(9.8, 9.76, 0, 2.14, 11.8, 10.4);  // no chained stage measured
  const double h = 2.0 / (1.0 / 11.8 + 1.0 / 10.4);
  const double first = (9.8 + 2.14) / 16, last = (2.14 + 9.76) / 16;
  EXPECT_NEAR(overlap_bound_lines(t, 16).link, (first + last + (2 - first / 9.8 - last / 9.76) * h / 2) * 1e-3, 1e-12);
}

// Where both directions together are no faster than one alone (pageable copies, which the host stages one
// at a time), the middle still cannot beat the faster direction's rate for all of its bytes.
TEST(OverlapModel, TheLinkNeverBeatsTheFasterDirectionAlone) {
  const stage_times t = ms(60, 34, 95, 2, 60, 95);
  const double first = (60.0 + 2) / 8, last = (2 + 34.0) / 8;
  const double link = first + last + (2 - first / 60 - last / 34) * 34;
  EXPECT_NEAR(overlap_bound_lines(t, 8).link, link * 1e-3, 1e-12);
  EXPECT_NEAR(overlap_ideal_s(t, 8), link * 1e-3, 1e-12);
}

// Small chunks: each copy's own cost dominates, and the copies of both directions, chained per stream as
// the pipeline has them, take longer than either direction alone. Their own time caps the link; adding a
// first copy in and a last copy out that run alone would count those twice (a pipeline of 64 KiB in 8
// chunks ran 7 to 9% under such a bound on an H100).
TEST(OverlapModel, TheLinkIsNeverAboveTheChainedCopiesThemselves) {
  const stage_times t = ms(4, 4, 6, 0.5, 8, 8);
  EXPECT_DOUBLE_EQ(overlap_ideal_s(t, 8), 6e-3);
}

// The first and the last chunk's kernels keep one direction idle, so they lift the link line: with no
// kernel it is the copies' own, a longer kernel never lowers it, and it stays under the chained stage.
TEST(OverlapModel, TheFirstAndLastKernelsKeepOneDirectionIdle) {
  // The H200's pinned 512 MiB in 16 chunks (a default run at 64ce113 on GPU 0 of four): its pipeline took
  // 11.63 ms, a bound of the copies alone 10.99.
  const stage_times t = ms(9.7629, 9.7922, 11.2936, 1.9226, 10.2903, 10.5597);
  const double copies_only = overlap_bound_lines(ms(9.7629, 9.7922, 11.2936, 0, 10.2903, 10.5597), 16).link;
  EXPECT_NEAR(copies_only, 10.994e-3, 1e-6);
  EXPECT_NEAR(overlap_bound_lines(t, 16).link, 11.106e-3, 1e-6);
  EXPECT_LT(overlap_ideal_s(t, 16), 11.63e-3);
  double before = 0;
  for (double k : {0.0, 0.5, 1.0, 2.0, 4.0}) {
    const double link = overlap_bound_lines(ms(9.7629, 9.7922, 11.2936, k, 10.2903, 10.5597), 16).link;
    EXPECT_GE(link, before);
    EXPECT_LE(link, 11.2936e-3 + 1e-15);
    before = link;
  }
}

TEST(OverlapModel, TheSerialBoundIsTheSumOfItsStages) {
  // One chunk: nothing overlaps, so a serial schedule can reach its bound and no further.
  const stage_times t = ms(10, 9, 12, 3);
  EXPECT_NEAR(overlap_ideal_s(t, 1), 22e-3, 1e-12);
}

TEST(OverlapModel, FastestStagesAreEachStagesOwnFastestTurn) {
  const stage_times best =
      fastest_stages({ms(10, 9, 12, 3, 11, 10), ms(9, 10, 13, 2.5, 0, 0), ms(11, 8, 14, 4, 10.5, 12)});
  EXPECT_NEAR(best.in_s, 9e-3, 1e-15);
  EXPECT_NEAR(best.out_s, 8e-3, 1e-15);
  EXPECT_NEAR(best.both_s, 12e-3, 1e-15);
  EXPECT_NEAR(best.kernel_s, 2.5e-3, 1e-15);
  EXPECT_NEAR(best.bidir_in_s, 10.5e-3, 1e-15);  // a turn that did not measure it (0) is not the fastest
  EXPECT_NEAR(best.bidir_out_s, 10e-3, 1e-15);
  EXPECT_EQ(fastest_stages({}).in_s, 0.0);
}

// Five turns of the H200 case above, without the bidir stage: in three of them the chained stage ran slow.
// A bound per turn, each the largest of its lines, put the median turn 5% above its own pipeline (the
// issue's efficiency 1.053); the bound from the fastest stages, held against every turn, does not.
TEST(OverlapModel, OneBoundFromTheFastestStagesHeldAgainstEveryTurn) {
  const std::vector<stage_times> turns = {ms(9.72, 9.74, 12.9, 1.93), ms(9.73, 9.74, 11.77, 1.93),
                                          ms(9.72, 9.75, 12.85, 1.94), ms(9.74, 9.74, 11.8, 1.93),
                                          ms(9.72, 9.74, 12.95, 1.93)};
  const std::vector<double> pipeline = {12.19e-3, 12.20e-3, 12.18e-3, 12.21e-3, 12.19e-3};
  std::vector<double> per_turn;
  for (std::size_t i = 0; i < turns.size(); ++i) per_turn.push_back(overlap_ideal_s(turns[i], 8) / pipeline[i]);
  std::sort(per_turn.begin(), per_turn.end());
  EXPECT_GT(per_turn[2], 1.02);  // what the bound taken per turn read

  const double bound = overlap_ideal_s(fastest_stages(turns), 8);
  EXPECT_NEAR(bound, 11.77e-3, 1e-12);
  const paired_efficiency e = efficiency_over_turns(bound, pipeline);
  EXPECT_NEAR(e.efficiency, 11.77 / 12.19, 1e-9);
  EXPECT_NEAR(e.lo, 11.77 / 12.21, 1e-9);
  EXPECT_NEAR(e.hi, 11.77 / 12.18, 1e-9);
  EXPECT_LE(e.hi, 1.0);
  const paired_efficiency none = efficiency_over_turns(bound, {});
  EXPECT_EQ(none.efficiency, 0.0);
}

TEST(OverlapModel, UnionLengthCountsTimeCoveredOnce) {
  using spans = std::vector<std::pair<double, double>>;
  EXPECT_DOUBLE_EQ(union_length({}), 0.0);
  EXPECT_DOUBLE_EQ(union_length({{1, 3}}), 2.0);
  EXPECT_DOUBLE_EQ(union_length(spans{{1, 3}, {2, 5}}), 4.0);           // overlapping
  EXPECT_DOUBLE_EQ(union_length(spans{{1, 10}, {2, 4}, {3, 9}}), 9.0);  // nested
  EXPECT_DOUBLE_EQ(union_length(spans{{5, 6}, {1, 2}, {3, 4}}), 3.0);   // disjoint, in any order
  EXPECT_DOUBLE_EQ(union_length(spans{{1, 2}, {2, 3}}), 2.0);           // touching
  EXPECT_DOUBLE_EQ(union_length(spans{{-2, -1}, {-1.5, 0.5}}), 2.5);    // before the reference
  // empty intervals (an empty chunk's op, or an end before its begin) add nothing, wherever they lie
  EXPECT_DOUBLE_EQ(union_length(spans{{4, 4}, {7, 6}, {1, 2}, {1.5, 1.5}, {9, 9}}), 1.0);
}

// One chunk: its copy in, kernel and copy out each a span of its own, and the chained stage their copies'
// sum, as each op timed between its own two events.
TEST(OverlapModel, TheOwnOpsOfOneChunkAreEachItsOwnSpan) {
  op_spans one;
  one.in = {{0.0, 10e-3}};
  one.kernel = {{10.2e-3, 13.2e-3}};
  one.out = {{13.3e-3, 22.3e-3}};
  const stage_times t = own_ops_turn(one, 1);
  EXPECT_NEAR(t.in_s, 10e-3, 1e-15);
  EXPECT_NEAR(t.kernel_s, 3e-3, 1e-15);
  EXPECT_NEAR(t.out_s, 9e-3, 1e-15);
  EXPECT_NEAR(t.both_s, 19e-3, 1e-15);
  EXPECT_EQ(t.bidir_in_s, 0.0);
  EXPECT_EQ(t.bidir_out_s, 0.0);
}

// More chunks: each kind's union, and nothing for the stages of both directions, which keep their own turns.
TEST(OverlapModel, TheOwnOpsOfManyChunksAreEachKindsUnion) {
  op_spans two;
  two.in = {{0.0, 5e-3}, {0.0, 10e-3}};  // queued on one engine from the start: the second waits
  two.kernel = {{5.1e-3, 7e-3}, {10.1e-3, 12e-3}};
  two.out = {{7.1e-3, 11e-3}, {12.1e-3, 16e-3}};
  const stage_times t = own_ops_turn(two, 2);
  EXPECT_NEAR(t.in_s, 10e-3, 1e-15);
  EXPECT_NEAR(t.kernel_s, 3.8e-3, 1e-15);
  EXPECT_NEAR(t.out_s, 7.8e-3, 1e-15);
  EXPECT_EQ(t.both_s, 0.0);
  const stage_times best = fastest_stages({ms(9.9, 8.1, 12, 4, 11, 10), t});
  EXPECT_NEAR(best.both_s, 12e-3, 1e-15);  // the chained stage's own turn
  EXPECT_NEAR(best.bidir_in_s, 11e-3, 1e-15);
  EXPECT_NEAR(best.kernel_s, 3.8e-3, 1e-15);
  EXPECT_NEAR(best.in_s, 9.9e-3, 1e-15);
  EXPECT_NEAR(best.out_s, 7.8e-3, 1e-15);
}

// The fastest stages of pinned 512 MiB, work 64, 8 chunks breadth first on an H100 (results/aa/
// h100_default_fc0a364, run 2: ideal_ms 129.19, its kernels line, with kernel_ms 126.74), and its pipeline's
// turns as that run's efficiency figures put them (ideal_ms over 1.00403, 1.00349 and 1.00107, the highest,
// median and lowest turn): every turn of the pipeline beat the kernels line. The kernels' spans below are
// made up, a pipeline that ran its kernels within 126.0 ms: counted as one more turn of the kernel stage,
// they bring the line to or below every turn, which the stages' own turns alone did not.
TEST(OverlapModel, ThePipelinesOwnKernelsKeepTheKernelsLineBelowIt) {
  const stage_times stages = ms(9.807, 9.769, 12.234, 126.743, 12.135, 10.333);
  const double ideal = 129.190;
  const std::vector<double> pipeline = {ideal / 1.00403 * 1e-3, ideal / 1.00349 * 1e-3, ideal / 1.00107 * 1e-3};
  const paired_efficiency before = efficiency_over_turns(overlap_ideal_s(fastest_stages({stages}), 8), pipeline);
  EXPECT_NEAR(overlap_ideal_s(stages, 8), ideal * 1e-3, 1e-6);
  EXPECT_GT(before.lo, 1.0);  // every turn above its bound

  op_spans own;
  for (int c = 0; c < 8; ++c) {
    own.in.emplace_back(0.0, (c + 1) * 1.24e-3);  // every copy in queued from the start
    own.kernel.emplace_back((1.3 + c * 15.7) * 1e-3, (1.3 + (c + 1) * 15.7 + 0.4) * 1e-3);
    own.out.emplace_back((1.3 + (c + 1) * 15.7 + 0.5) * 1e-3, (1.3 + (c + 1) * 15.7 + 1.8) * 1e-3);
  }
  const stage_times turn = own_ops_turn(own, 8);
  EXPECT_NEAR(turn.kernel_s, 126.0e-3, 1e-12);
  const double bound = overlap_ideal_s(fastest_stages({stages, turn}), 8);
  const paired_efficiency after = efficiency_over_turns(bound, pipeline);
  EXPECT_LE(after.hi, 1.0);
  for (double p : pipeline) EXPECT_LE(bound, p);
  // The kernels line is the pipeline's kernels plus one chunk's copy each way at the stages' speed
  EXPECT_NEAR(overlap_bound_lines(fastest_stages({stages, turn}), 8).kernels, (9.807 / 8 + 126.0 + 9.769 / 8) * 1e-3,
              1e-9);
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
