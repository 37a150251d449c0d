#pragma once
// The Overlap family's model: its cases, how its work splits into chunks, and the ideal bound it is held
// to. Pure functions, tested without a GPU.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/memory/mem_kind.hpp"
#include "harness/run/case_name.hpp"

namespace gpu_bench {

enum class schedule { serial, depth_first, breadth_first };
enum class sync_point { end, per_stream, per_chunk, event_join };

template <>
inline constexpr enum_entries<schedule, 3> enum_names<schedule> = {
    {{schedule::serial, "serial"}, {schedule::depth_first, "depth_first"}, {schedule::breadth_first, "breadth_first"}}};
template <>
inline constexpr enum_entries<sync_point, 4> enum_names<sync_point> = {{{sync_point::end, "end"},
                                                                        {sync_point::per_stream, "per_stream"},
                                                                        {sync_point::per_chunk, "per_chunk"},
                                                                        {sync_point::event_join, "event_join"}}};

struct overlap_case {
  schedule sched;
  mem_kind mem;
  int streams;  // = chunks; 1 for serial
  std::uint64_t bytes;
  int work;  // sin/cos/sqrt terms the kernel adds per element
  sync_point sync;
};

// The default subset (43 cases: a stream sweep at 512 MiB pinned with work 1, and sweeps of
// sync placement, memory kind, work and size around it), or with `full` every combination. Given
// `sizes` (from --sizes), the subset is built around each of them instead of 512 MiB and its size sweep
// and the full grid use them instead of 16 MiB to 1 GiB.
std::vector<overlap_case> overlap_grid(bool full, const std::vector<std::uint64_t>& sizes = {});
case_name overlap_name(const overlap_case& c);

// Whether the gate can hold the iteration: not when the enqueue itself waits for the GPU (pageable
// copies, or a host wait after each chunk).
bool overlap_gated(const overlap_case& c);

// [begin, end) element ranges of `chunks` nearly equal chunks; boundaries on multiples of 64 elements
// (256 bytes) so every chunk starts aligned.
std::vector<std::pair<std::size_t, std::size_t>> chunk_bounds(std::size_t elements, int chunks);

// Stage times of the whole payload in the case's S chunks over S streams, measured on this GPU.
struct stage_times {
  double in_s;      // every chunk's copy in, alone
  double out_s;     // every chunk's copy out, alone
  double both_s;    // each chunk's copy in, then its copy out, on the chunk's stream in the case's issue
                    // order: the pipeline without its kernels
  double kernel_s;  // every chunk's kernel
  // The whole copy in and the whole copy out at once, each on a stream of its own with nothing between
  // them: each direction's span from the common start (0 where not measured: one chunk has no overlap).
  double bidir_in_s = 0;
  double bidir_out_s = 0;
};

// The bound's lines: each the busy time of one resource plus the part of the pipeline's fill and drain
// that resource cannot overlap, for S chunks. No schedule of the chunks' copies and kernels beats any of
// them where the stages ran at their best:
//   link     (in + out) / S + middle                the first chunk's copy in and the last chunk's copy out,
//                                                   each alone; between them the other (S-1)/S of the
//                                                   bytes of both directions at the fastest rate the link
//                                                   showed for them
//   kernels  in / S + kernel + out / S              every kernel, after the first copy in and before the
//                                                   last copy out
//   in       in + (kernel + out) / S                every copy in, then the last chunk's kernel and copy out
//   out      (in + kernel) / S + out                the first chunk's copy in and kernel, then every copy out
// The middle is the least of three times for those bytes: (S-1)/S of H, the harmonic mean of the bidir
// spans (the payload both ways over the sum of the two directions' rates while they ran together); (S-1)/S
// of 2 min(in, out) (both ways at the faster direction's rate alone); and the chained stage's own middle,
// both - (in + out) / S (the link line is never above the chained stage itself). A rate the link reached
// once it can reach again, so the fastest of them is what the pipeline's middle cannot beat.
// The first and the last chunk's kernels also leave one direction idle: no copy out can start before a
// chunk's copy in and kernel, (in + kernel) / S, and no copy in can run once the last one's is done, whose
// kernel and copy out take (kernel + out) / S. Through those stretches the other direction moves at its rate
// alone, at most (in + kernel) / S / in of its payload and (kernel + out) / S / out; what is left of both
// payloads moves at the middle's rate, middle / (2 (S-1)/S) a payload (a rate both ways is at least either
// alone, so stretching either end moves nothing faster). The link line is the larger of the two forms,
// the second never above the chained stage.
// For S = 1 the link line is in + out and the kernel line in + kernel + out, the serial time.
struct bound_lines {
  double link, kernels, in, out;
};
bound_lines overlap_bound_lines(const stage_times& t, int chunks);
// The largest line: the time the case's S equal chunks cannot beat.
double overlap_ideal_s(const stage_times& t, int chunks);

// The measure of the union of [begin, end) intervals: the time at least one of them was running. An
// interval whose end is not after its begin adds nothing.
double union_length(std::vector<std::pair<double, double>> intervals);

// The spans of the pipeline's own operations in one turn, each [begin, end) in seconds from one common
// reference: every chunk's copy in, kernel and copy out.
struct op_spans {
  std::vector<std::pair<double, double>> in, kernel, out;
};
// Those operations as one more turn of the stages. Every kernel of the pipeline ran within the union of the
// kernels' spans, so the payload's kernels can take no longer than that union: it is one more sample of the
// kernel stage, and the stage's fastest turn then keeps the kernels line, in / S + kernel + out / S, at or
// below a pipeline that ran its kernels faster than the kernel stage did. Likewise the union of the copies'
// in spans is one more turn of the in stage and that of the copies out one more of the out stage. The
// rates of both directions (the chained stage, bidir) take nothing from them: in the pipeline the copies of
// one direction share the link with the other's and with kernels, and no union of one kind says how fast the
// link moves both. Except for one chunk, whose copy in and copy out run with nothing beside them: the
// chained stage is then in + out, the sum of the two.
stage_times own_ops_turn(const op_spans& spans, int chunks);

// Each stage at its fastest over the turns (a bound is a best case; a stage's slow turn says nothing of
// what the link or the GPU can do); a field no turn measured (0) stays 0.
stage_times fastest_stages(const std::vector<stage_times>& turns);

// A bound held against the pipeline's time in each turn: `efficiency` the median of bound / turn, `lo`
// and `hi` the lowest and highest turn. The bound is one figure for every turn, from the fastest stages:
// bounds taken per turn, each the largest of its lines from that turn's noisy stages, are biased upward
// (a maximum of noisy terms), and a turn whose stage ran slow would hold its pipeline to a bound the
// link beat in the other turns.
struct paired_efficiency {
  double efficiency = 0, lo = 0, hi = 0;
};
paired_efficiency efficiency_over_turns(double bound_s, const std::vector<double>& pipeline_s);

}  // namespace gpu_bench
