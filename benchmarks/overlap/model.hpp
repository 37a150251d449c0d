#pragma once
// The Overlap family's model: its cases, how its work splits into chunks, and the ideal bound it is held
// to. Pure functions, tested without a GPU.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "fixtures/memory/mem_kind.hpp"
#include "fixtures/run/case_name.hpp"

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
};

// The time the case's S equal chunks cannot beat: the largest of the bottleneck resources' busy time plus
// the part of the pipeline's fill and drain that resource cannot overlap:
//   link     both                                  every copy, as the pipeline's streams and order let
//                                                   them overlap: the first copy in and the last copy out
//                                                   alone, each copy's own cost however small its chunk
//   kernels  in / S + kernel + out / S             every kernel, after the first copy in and before the
//                                                   last copy out
//   in       in + (kernel + out) / S               every copy in, then the last chunk's kernel and copy out
//   out      (in + kernel) / S + out               the first chunk's copy in and kernel, then every copy out
// For S = 1 every line is at most in + kernel + out, the serial time, which the kernel line reaches.
double overlap_ideal_s(const stage_times& t, int chunks);

}  // namespace gpu_bench
